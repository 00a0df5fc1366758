import { constants, fstatSync, openSync, closeSync, readSync, promises as fs, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
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
    const reader = boundedReader(file, what, size, maxBytes);
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

/** The buffer of one bounded read: at most one byte past the limit, whatever stat said (the file may be growing). */
function boundedReader(file: string, what: string, size: number, maxBytes: number) {
  if (size > maxBytes) throw new InputError({ file }, `${a(what)} of at most ${sizeWords(maxBytes)}`, `${size} bytes`);
  let done = false;
  const r = {
    buf: Buffer.allocUnsafe(Math.min(maxBytes, Math.max(size, 64 * 1024)) + 1),
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
 * content: write a sibling temporary file, flush it, rename it over the target. The one owner of
 * the write policy of every command that writes a user's file:
 *
 * - only a regular file is replaced (a directory, device, FIFO or socket is refused), and never
 *   a file the same run reads (`inputs`);
 * - an existing target is refused unless `force` (replace) or `backup` (keep `file.bak` once);
 * - a symbolic link is followed: its target is replaced and the link stays; the file's mode
 *   (permission bits) is kept;
 * - `.NAME.<hex>.tmp` files a killed run left beside the target are removed;
 * - a missing directory, a full disk or a permission problem is an InputError, not a crash.
 */
export async function writeFileAtomic(file: string, text: string, options: WriteOptions = {}): Promise<void> {
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
  if (old && !options.backup && !options.force) {
    throw new InputError({ file }, `a new file for the ${what} (or --force to replace it)`, 'an existing file (nothing written)');
  }
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
  try {
    try {
      // The mode given to open is masked by the umask; an existing file's mode is kept exactly.
      if (old) await handle.chmod(old.mode & 0o7777);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.backup && old) {
      const bak = `${target}.bak`;
      if (!(await fs.lstat(bak).catch(() => undefined))) await fs.copyFile(target, bak);
    }
    await fs.rename(tmp, target);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    if (err instanceof InputError) throw err;
    throw new InputError({ file }, `room to write the ${what}`, `${writeProblem(err)} (the old file is unchanged)`, { cause: err });
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
