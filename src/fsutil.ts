import { constants, fstatSync, openSync, closeSync, readSync, statSync, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { InputError } from './errors.js';

/**
 * Every file the tool reads and every file it writes goes through this module, so the rules
 * below hold on every input surface:
 *
 * - Input: only regular files are opened (a FIFO would block forever, `/dev/zero` never ends, a
 *   directory is not text). The open itself is non-blocking, the type is checked on the open
 *   handle (no race with a path swap), and the size limit is checked while reading — `stat` of a
 *   file that grows, or of a special file, proves nothing.
 * - Output: see writeFileAtomic.
 */

/**
 * Every regular file this run opened for reading, by device and inode (taken from the open
 * handle: a link, a second name or a path swap cannot hide it). A write refuses to replace one
 * of them (writeFileAtomic), whatever option named it: a rules file, a lexicon, a sidecar.
 */
let filesRead: Set<string> | undefined;
const fileKey = (st: { dev: number; ino: number }) => `${st.dev}:${st.ino}`;
const recordRead = (st: { dev: number; ino: number }) => filesRead?.add(fileKey(st));

/**
 * Record `file` as an input of this run without reading it: its content came from elsewhere (the
 * build's rules snapshot holds what the lexicon files say), yet the run rests on it, so no output
 * may replace it. Nothing when no run is recorded or the file is not a regular file.
 */
export function recordInput(file: string): void {
  if (!filesRead) return;
  const st = statSync(file, { throwIfNoEntry: false });
  if (st?.isFile()) recordRead(st);
}

/**
 * Start a run's record of files read: the CLI calls it once per run. A library user that never
 * calls it keeps no record (and no process-wide state grows across its calls).
 */
export function beginRun(): void {
  filesRead = new Set();
}

/** The one size limit of a small input file (cases, rules, questions, answers). */
export const MAX_INPUT_BYTES = 1024 * 1024;

/** Size in bytes of text as UTF-8, without encoding it when it is clearly small (a UTF-16 unit is at most 3 bytes). */
export function utf8Bytes(text: string, limit: number): number {
  return text.length * 3 <= limit ? text.length : Buffer.byteLength(text, 'utf8');
}

const OPEN_INPUT = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** "a case file", "an answers file", "an ops.jsonl file". */
function a(what: string): string {
  return `${/^[aeio]/i.test(what) ? 'an' : 'a'} ${what}`;
}

/** What a non-regular file is, in words for an error message. */
export function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return stat.isFile() ? 'a regular file' : 'not a regular file';
}

/** An open error as what we got instead of the file. */
export function openProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'a directory';
    case 'ELOOP':
      return 'a symbolic link loop';
    case 'ENOTDIR':
      return 'a path through something that is not a directory';
    case 'ENXIO':
      return 'a device or socket with nothing behind it';
    default:
      return code ?? String(err);
  }
}

/** Open `file` for reading if it is a regular file; otherwise an InputError naming what it is. */
export async function openInput(file: string, what: string): Promise<{ handle: FileHandle; size: number }> {
  let handle: FileHandle;
  try {
    handle = await fs.open(file, OPEN_INPUT);
  } catch (err) {
    const got = openProblem(err);
    throw new InputError({ file }, got === 'no such file' || got === 'permission denied' ? `an existing, readable ${what}` : `${a(what)} (a regular file)`, got, { cause: err });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new InputError({ file }, `${a(what)} (a regular file)`, kindOf(stat));
    recordRead(stat);
    return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The synchronous twin of openInput, for pull readers: a file descriptor of a regular file. */
export function openInputSync(file: string, what: string): number {
  return openInputSyncSized(file, what).fd;
}

function openInputSyncSized(file: string, what: string): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(file, OPEN_INPUT);
  } catch (err) {
    const got = openProblem(err);
    throw new InputError({ file }, got === 'no such file' || got === 'permission denied' ? `an existing, readable ${what}` : `${a(what)} (a regular file)`, got, { cause: err });
  }
  const stat = fstatSync(fd);
  if (!stat.isFile()) {
    closeSync(fd);
    throw new InputError({ file }, `${a(what)} (a regular file)`, kindOf(stat));
  }
  recordRead(stat);
  return { fd, size: stat.size };
}

/**
 * Read a small text input: a regular file of at most `maxBytes`, counted while reading, in
 * UTF-8 without NUL bytes (`lossy`: any bytes, invalid UTF-8 replaced). Every problem is an InputError naming the file (and the line and
 * column of a byte that is not UTF-8).
 */
export async function readInputFile(file: string, what: string, maxBytes = MAX_INPUT_BYTES, options: { lossy?: boolean } = {}): Promise<string> {
  const { handle, size } = await openInput(file, what);
  try {
    const reader = boundedReader(file, what, size, maxBytes);
    while (reader.more()) reader.got((await handle.read(reader.buf, reader.n, reader.buf.length - reader.n, null)).bytesRead);
    return reader.text(options);
  } catch (err) {
    throw readProblem(err, file, what);
  } finally {
    await handle.close();
  }
}

/**
 * The synchronous twin of readInputFile, with the same checks and errors: for a batch of small
 * files read one after another, where each asynchronous step (open, stat, read, close) would be a
 * round trip through libuv's thread pool that costs more than the read itself.
 */
export function readInputFileSync(file: string, what: string, maxBytes = MAX_INPUT_BYTES, options: { lossy?: boolean } = {}): string {
  const { fd, size } = openInputSyncSized(file, what);
  try {
    const reader = boundedReader(file, what, size, maxBytes, true);
    while (reader.more()) reader.got(readSync(fd, reader.buf, reader.n, reader.buf.length - reader.n, null));
    return reader.text(options);
  } catch (err) {
    throw readProblem(err, file, what);
  } finally {
    closeSync(fd);
  }
}

function readProblem(err: unknown, file: string, what: string): InputError {
  return err instanceof InputError ? err : new InputError({ file }, `${a(`readable ${what}`)}`, openProblem(err), { cause: err });
}

/**
 * The first buffer of the synchronous reads, kept from one read to the next: a batch reads
 * thousands of small files one after another, and a fresh 64 KiB buffer for each (external
 * memory the garbage collector must reclaim) cost more than reading them. Only up to 1 MiB is
 * kept; the text is decoded out of it (a copy) before the read returns.
 */
let syncScratch: Buffer | undefined;
const KEEP_SCRATCH_BYTES = 1024 * 1024 + 1;

/** The buffer of one bounded read: at most one byte past the limit, whatever stat said (the file may be growing). */
function boundedReader(file: string, what: string, size: number, maxBytes: number, sync = false) {
  if (size > maxBytes) throw new InputError({ file }, `${a(what)} of at most ${sizeWords(maxBytes)}`, `${size} bytes`);
  let done = false;
  const first = Math.min(maxBytes, Math.max(size, 64 * 1024)) + 1;
  let buf: Buffer;
  if (sync && first <= KEEP_SCRATCH_BYTES) {
    if (!syncScratch || syncScratch.length < first) syncScratch = Buffer.allocUnsafe(first);
    buf = syncScratch.subarray(0, first);
  } else buf = Buffer.allocUnsafe(first);
  const r = {
    buf,
    n: 0,
    /** Whether to read again, growing the buffer when it is full (false once past the limit or at the end). */
    more(): boolean {
      if (done) return false;
      if (r.n === r.buf.length) {
        if (r.n > maxBytes) return false;
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, r.buf.length * 2));
        r.buf.copy(bigger, 0, 0, r.n);
        r.buf = bigger;
      }
      return true;
    },
    got(bytesRead: number): void {
      if (bytesRead === 0) done = true;
      r.n += bytesRead;
    },
    text(options: { lossy?: boolean }): string {
      if (r.n > maxBytes) throw new InputError({ file }, `${a(what)} of at most ${sizeWords(maxBytes)}`, `more than ${maxBytes} bytes`);
      // A kernel artifact may carry any bytes (a task's comm): decoded with replacement characters.
      return options.lossy ? r.buf.toString('utf8', 0, r.n) : decodeText(r.buf.subarray(0, r.n), file, what);
    },
  };
  return r;
}

function sizeWords(bytes: number): string {
  if (bytes >= 16 * 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;
}

/** Bytes as UTF-8 text; a NUL byte or a byte sequence that is not UTF-8 is an InputError at its line:col. */
export function decodeText(buf: Buffer, file: string, what: string): string {
  const nul = buf.indexOf(0);
  if (nul >= 0) throw new InputError({ file, ...lineColOfByte(buf, nul) }, `${a(what)} in text`, 'binary data (a NUL byte)');
  if (!isUtf8(buf)) {
    const bad = firstInvalidUtf8(buf);
    throw new InputError({ file, ...lineColOfByte(buf, bad) }, `${a(what)} in UTF-8`, `the byte 0x${buf[bad]!.toString(16).padStart(2, '0')}, which is not UTF-8`);
  }
  return buf.toString('utf8');
}

function lineColOfByte(buf: Buffer, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = buf.indexOf(10); i >= 0 && i < offset; i = buf.indexOf(10, i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: buf.toString('utf8', start, offset).length + 1 };
}

/** Offset of the first byte that starts an invalid UTF-8 sequence (only called when there is one). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    let n = 0;
    let min = 0;
    if (c < 0x80) { i++; continue; }
    else if (c >= 0xc2 && c <= 0xdf) { n = 1; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; min = 0x10000; }
    else return i;
    if (i + n >= b.length) return i;
    let cp = c & (0x3f >> n);
    for (let k = 1; k <= n; k++) {
      const d = b[i + k]!;
      if ((d & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n + 1;
  }
  return b.length;
}

// --- writing -------------------------------------------------------------------------------

export interface WriteOptions {
  /**
   * An in-place update of a file the run read (triage, ledger --case): the previous content is
   * kept once as `file.bak` before the first replacement. Implies the target may exist.
   */
  backup?: boolean;
  /** An update of the file this run read (backup implies it): the target may be a file the run read. */
  inPlace?: boolean;
  /** Replace an existing target (`--force`); without it (and without backup) an existing target is refused. */
  force?: boolean;
  /** Paths this run reads: the target must not be one of them, nor lie inside one of them. */
  inputs?: string[];
  /** Refuse text longer than this many bytes (UTF-8) before writing anything. */
  maxBytes?: number;
  /** What the file is, for messages ("case file"). */
  what?: string;
}

/** A stray temporary file older than this is left over from a killed run and removed. */
const STALE_TMP_MS = 10_000;

/**
 * Replace `file` with `text` so that a reader (or a crash) only ever sees the old or the new
 * content: write a sibling temporary file, flush it, move it into place. The one owner of the
 * write policy of every command that writes a user's file:
 *
 * - only a regular file is replaced (a directory, device, FIFO or socket is refused), and never
 *   a file the same run reads (`inputs`, and every file this run opened for reading);
 * - an existing target is refused unless `force` (replace) or `backup` (keep `file.bak` once);
 *   without them the file is created without replace (a hard link of the temporary file: of
 *   two concurrent runs, exactly one creates it and the other is refused);
 * - a symbolic link is followed: its target is replaced and the link stays; the file's mode
 *   (permission bits) is kept;
 * - `.NAME.<hex>.tmp` files a killed run left beside the target are removed;
 * - a missing directory, a full disk or a permission problem is an InputError, not a crash.
 */
export async function writeFileAtomic(file: string, text: string, options: WriteOptions = {}): Promise<void> {
  await writeFilesAtomic([{ file, text }], options);
}

/**
 * Write several files as one unit (a report and its pictures): every target is checked before
 * anything is written, every temporary file is written before any target is touched, and a
 * failure while moving them into place puts back what was there before.
 */
export async function writeFilesAtomic(files: ReadonlyArray<{ file: string; text: string }>, options: WriteOptions = {}): Promise<void> {
  const checked: Checked[] = [];
  for (const f of files) checked.push(await checkTarget(f.file, f.text, options));
  const seen = new Set<string>();
  for (const c of checked) {
    if (seen.has(c.target)) throw new InputError({ file: c.file }, 'distinct output files', `${c.target} twice (nothing written)`);
    seen.add(c.target);
  }
  const staged: Staged[] = [];
  try {
    for (const c of checked) staged.push(await stage(c, options));
    const done: Staged[] = [];
    try {
      for (const s of staged) {
        // One file needs no undo: its rename is the whole change.
        await commit(s, options, staged.length > 1);
        done.push(s);
      }
    } catch (err) {
      for (const s of done.reverse()) await undo(s);
      throw err;
    }
    for (const s of done) if (s.saved) await fs.rm(s.saved, { force: true });
  } finally {
    for (const s of staged) await fs.rm(s.tmp, { force: true });
  }
}

interface Checked {
  file: string;
  text: string;
  target: string;
  old: Stats | undefined;
  what: string;
}

interface Staged extends Checked {
  tmp: string;
  /** With --force: the old file, linked under a temporary name until the whole set is in place. */
  saved?: string;
}

async function checkTarget(file: string, text: string, options: WriteOptions): Promise<Checked> {
  const what = options.what ?? 'output file';
  const bytes = options.maxBytes === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  if (options.maxBytes !== undefined && bytes > options.maxBytes) {
    throw new InputError({ file }, `a ${what} of at most ${sizeWords(options.maxBytes)} to write`, `${bytes} bytes (nothing written)`);
  }
  const target = await resolveTarget(file);
  const old = await fs.stat(target).catch(() => undefined);
  if (old && !old.isFile()) throw new InputError({ file }, `a regular file to write the ${what} to`, `${kindOf(old)} (nothing written)`);
  for (const input of options.inputs ?? []) {
    const real = await fs.realpath(input).catch(() => path.resolve(input));
    if (target === real || target.startsWith(real + path.sep)) {
      throw new InputError({ file }, `an output path that is not an input of this run`, `${target === real ? 'the input' : 'a file inside the input'} ${input} (nothing written)`);
    }
  }
  // An in-place update replaces the very file it read, by design.
  if (old && !options.backup && !options.inPlace && filesRead?.has(fileKey(old))) {
    throw new InputError({ file }, `an output path that is not an input of this run`, 'a file this run read (nothing written)');
  }
  if (old && !options.backup && !options.force) {
    throw new InputError({ file }, `a new file for the ${what} (or --force to replace it)`, 'an existing file (nothing written)');
  }
  return { file, text, target, old, what };
}

async function stage(c: Checked, options: WriteOptions): Promise<Staged> {
  const { file, target, old, what } = c;
  const dir = path.dirname(target);
  await removeStaleTemps(dir, path.basename(target));
  const tmp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle;
  try {
    handle = await fs.open(tmp, 'wx', old ? old.mode & 0o7777 : 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new InputError({ file }, `an existing directory to write the ${what} in`, `no such directory ${dir}`, { cause: err });
    if (code === 'ENOTDIR') throw new InputError({ file }, `an existing directory to write the ${what} in`, `${dir} is not a directory`, { cause: err });
    throw new InputError({ file }, `a writable directory for the ${what}`, writeProblem(err), { cause: err });
  }
  const staged: Staged = { ...c, tmp };
  try {
    try {
      // The mode given to open is masked by the umask; an existing file's mode is kept exactly.
      if (old) await handle.chmod(old.mode & 0o7777);
      await handle.writeFile(c.text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.backup && old) {
      const bak = `${target}.bak`;
      if (!(await fs.lstat(bak).catch(() => undefined))) await fs.copyFile(target, bak);
    }
  } catch (err) {
    await fs.rm(tmp, { force: true });
    if (err instanceof InputError) throw err;
    throw new InputError({ file }, `room to write the ${what}`, `${writeProblem(err)} (the old file is unchanged)`, { cause: err });
  }
  return staged;
}

/** Move one staged file into place: replace (force, backup) or create without replace. */
async function commit(s: Staged, options: WriteOptions, undoable: boolean): Promise<void> {
  const { file, target, what } = s;
  try {
    if (options.force || options.backup) {
      if (s.old && undoable) {
        // A name removeStaleTemps knows: a killed run leaves nothing it would not clean.
        const saved = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
        await fs.link(target, saved).then(() => { s.saved = saved; }, () => undefined);
      }
      await fs.rename(s.tmp, target);
      return;
    }
    await createWithoutReplace(s.tmp, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new InputError({ file }, `a new file for the ${what} (or --force to replace it)`, 'an existing file (created meanwhile by another run; nothing written)', { cause: err });
    }
    throw new InputError({ file }, `room to write the ${what}`, `${writeProblem(err)} (the old file is unchanged)`, { cause: err });
  }
}

/** Put a target back as it was before commit: removed when it was new, the old file otherwise. */
async function undo(s: Staged): Promise<void> {
  if (s.saved) await fs.rename(s.saved, s.target).catch(() => undefined);
  else if (!s.old) await fs.rm(s.target, { force: true });
}

/**
 * Link `tmp` to `target`, which fails if `target` exists: exactly one of several concurrent
 * writers creates it. A file system without hard links gets an exclusive copy instead.
 */
async function createWithoutReplace(tmp: string, target: string): Promise<void> {
  try {
    await fs.link(tmp, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    await fs.copyFile(tmp, target, constants.COPYFILE_EXCL);
  }
}

function writeProblem(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC') return 'no space left on the device';
  if (code === 'EDQUOT') return 'disk quota exceeded';
  if (code === 'EROFS') return 'a read-only file system';
  return openProblem(err);
}

/** The path a write to `file` lands on: symbolic links followed, also a dangling one. */
async function resolveTarget(file: string): Promise<string> {
  let cur = path.resolve(file);
  for (let hops = 0; hops < 40; hops++) {
    const st = await fs.lstat(cur).catch(() => undefined);
    if (!st) {
      const dir = await fs.realpath(path.dirname(cur)).catch(() => path.dirname(cur));
      return path.join(dir, path.basename(cur));
    }
    if (!st.isSymbolicLink()) return fs.realpath(cur);
    cur = path.resolve(path.dirname(cur), await fs.readlink(cur));
  }
  throw new InputError({ file }, 'a file to write, or a symbolic link to one', 'a symbolic link loop (nothing written)');
}

async function removeStaleTemps(dir: string, base: string): Promise<void> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const prefix = `.${base}.`;
  const now = Date.now();
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) continue;
    const full = path.join(dir, name);
    const st = await fs.lstat(full).catch(() => undefined);
    if (st?.isFile() && now - st.mtimeMs > STALE_TMP_MS) await fs.rm(full, { force: true });
  }
}

/** Check that `dir` is an existing directory; otherwise an InputError saying what was expected. */
export async function requireDirectory(dir: string, what: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(dir);
  } catch (err) {
    const got = openProblem(err);
    throw new InputError({ file: dir }, what, got === 'no such file' ? 'no such directory' : got);
  }
  if (!stat.isDirectory()) throw new InputError({ file: dir }, what, stat.isFile() ? 'a file' : kindOf(stat));
}

// --- one run at a time on a file -------------------------------------------------------------

/** This process's id, from /proc (only src/bin.ts touches `process`); undefined where there is no /proc. */
async function ownPid(): Promise<number | undefined> {
  const self = await fs.readlink('/proc/self').catch(() => undefined);
  return self !== undefined && /^\d+$/.test(self) ? Number(self) : undefined;
}

/**
 * Whether the holder a lock file names is gone: a process of this host that /proc no longer has,
 * or one that has exited and waits only to be reaped (a zombie, state Z or X: a run killed with
 * SIGKILL stays one until its parent, a shell or a terminal multiplexer, collects it).
 */
async function holderGone(holder: { pid?: number; host?: string }): Promise<boolean> {
  if (holder.pid === undefined || holder.host !== os.hostname()) return false;
  if (!(await fs.stat('/proc/self').then(() => true, () => false))) return false;
  const stat = await fs.readFile(`/proc/${holder.pid}/stat`, 'utf8').catch(() => undefined);
  if (stat === undefined) return true;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'Z' || state === 'X';
}

function parseHolder(text: string): { pid?: number; host?: string; since?: string } {
  const m = /^pid (\d+) host (\S+) since (\S+)/.exec(text);
  return m ? { pid: Number(m[1]), host: m[2]!, since: m[3]! } : {};
}

/**
 * Run `fn` holding the lock of `file` (`.NAME.lock` beside its real path): a second run on the
 * same file is refused with the holder's pid, host and start, never interleaved with the first
 * (two triage sessions on one case would each write back what the other had not seen). The lock
 * file is created whole (a hard link of a finished temporary file), so it always names its
 * holder; one left by a killed process of this host is taken over.
 */
export async function withFileLock<T>(at: string, what: string, fn: () => Promise<T>, file = at): Promise<T> {
  const target = await resolveTarget(at);
  const lock = path.join(path.dirname(target), `.${path.basename(target)}.lock`);
  const pid = await ownPid();
  const tmp = path.join(path.dirname(target), `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeFile(tmp, `pid ${pid ?? 'unknown'} host ${os.hostname()} since ${new Date().toISOString()}\n`, { flag: 'wx' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new InputError({ file }, `an existing directory holding the ${what}`, `no such directory ${path.dirname(target)}`, { cause: err });
    throw new InputError({ file }, `a writable directory for the ${what}`, writeProblem(err), { cause: err });
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await createWithoutReplace(tmp, lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new InputError({ file }, `a writable directory for the ${what}`, writeProblem(err), { cause: err });
      }
      const text = await fs.readFile(lock, 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : ''));
      // Released between our try and our read (its holder finished): free to take now.
      if (text === undefined && attempt < 20) continue;
      const holder = parseHolder(text ?? '');
      if (attempt < 3 && (await holderGone(holder))) {
        // Taken over by renaming it away first: of two runs that both found it stale, one removes it.
        const away = `${tmp}.stale`;
        if (await fs.rename(lock, away).then(() => true, () => false)) {
          const again = parseHolder(await fs.readFile(away, 'utf8').catch(() => ''));
          if (again.pid === holder.pid && again.since === holder.since) {
            await fs.rm(away, { force: true });
            continue;
          }
          // Another run took it over meanwhile: its lock goes back.
          await createWithoutReplace(away, lock).catch(() => undefined);
          await fs.rm(away, { force: true });
        }
        continue;
      }
      const who = holder.pid !== undefined ? `pid ${holder.pid} on ${holder.host} since ${holder.since}` : 'a run that did not say which';
      throw new InputError({ file }, `a ${what} no other run is updating`, `one held by ${who} (wait for it to end; remove ${lock} only if that process is gone)`);
    }
  } finally {
    await fs.rm(tmp, { force: true });
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}
