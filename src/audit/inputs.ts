import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.js';
import { readSmallFile } from '../case/fast.js';
import type { LoadedCase } from '../case/parse.js';
import type { Waiver } from '../case/waivers.js';
import type { Extraction } from '../writeup/extract.js';
import type { Sidecar } from '../writeup/judge.js';
import { isWriteupName, MAX_WRITEUP_BYTES } from '../writeup/text.js';
import { openProblem, readInputFile } from '../fsutil.js';

/** What `audit` reads: case files, and investigation write-ups. */
export type InputKind = 'case' | 'writeup';

/** One thing to audit, loaded: the case it amounts to and the waivers written in it. */
export interface AuditInput {
  file: string;
  kind: InputKind;
  loaded: LoadedCase;
  waivers: Waiver[];
  /** A write-up's extraction (facts and claims with their positions) and its expectations sidecar. */
  writeup?: { extraction: Extraction; sidecar?: Sidecar };
}

/** Turns a file's text into an AuditInput. Pure apart from what it is given. */
export type InputLoader = (text: string, file: string) => Promise<AuditInput> | AuditInput;

/** What a loader may depend on besides the file: the rules directory of the run (its lexicon). */
export interface LoaderContext {
  rulesDir?: string | undefined;
}

/** A file's kind by its name; undefined for files `audit DIR` leaves alone. */
export function kindOf(file: string): InputKind | undefined {
  if (/\.ya?ml$/i.test(file)) return 'case';
  if (isWriteupName(file)) return 'writeup';
  return undefined;
}

/**
 * The one dispatch point by file kind: each kind's loader, imported when the first file of that
 * kind is met. registerLoader adds or replaces one at run time (for library users and tests).
 */
const LOADERS: Partial<Record<InputKind, (ctx: LoaderContext) => Promise<InputLoader>>> = {
  case: async () => {
    // A valid case is read without zod (case/fast.ts); the first one that needs zod (to say
    // what is wrong, or to decide a refinement) loads the full parser.
    const { parseCaseQuick } = await import('../case/fast.js');
    let full: Promise<typeof import('../case/parse.js')> | undefined;
    return async (text, file) => {
      const loaded = parseCaseQuick(text, file) ?? (await (full ??= import('../case/parse.js'))).parseCase(text, file);
      const waivers = (loaded.data.accepted ?? []).map((w) => ({ rule: w.rule, reason: w.reason }));
      return { file, kind: 'case', loaded, waivers };
    };
  },
  writeup: async (ctx) => {
    const { writeupInput } = await import('../writeup/audit.js');
    return (text, file) => writeupInput(text, file, ctx.rulesDir);
  },
};

export function registerLoader(kind: InputKind, load: (ctx: LoaderContext) => Promise<InputLoader>): void {
  LOADERS[kind] = load;
}

export function hasLoader(kind: InputKind): boolean {
  return LOADERS[kind] !== undefined;
}

const ready = new Map<InputKind, Promise<InputLoader>>();
async function loaderFor(kind: InputKind, file: string, ctx: LoaderContext): Promise<InputLoader> {
  const make = LOADERS[kind];
  if (!make) throw new InputError({ file }, 'a case file (*.yaml); this build has no write-up loader', `a ${kind}`);
  let p = ready.get(kind);
  if (!p) ready.set(kind, (p = make(ctx)));
  return p;
}

/**
 * The content decides for stdin and for a named file whose name says neither: a case states its
 * format on a line of its own; anything else is read as a write-up.
 */
function sniff(ref: InputRef, text: string): InputKind {
  if (ref.kind !== 'case' || /\.ya?ml$/i.test(ref.file)) return ref.kind;
  return /^format:\s*['"]?kretprobe-case\/v1/m.test(text.slice(0, 4096)) ? 'case' : 'writeup';
}

/** Where an input comes from: a path, or `-` for standard input. */
export interface InputRef {
  file: string;
  kind: InputKind;
}

export interface ExpandOptions {
  /** Globs of paths (relative to `cwd`, `/`-separated) to leave out; a pattern without `/` matches any path's last part. */
  exclude?: string[];
  cwd: string;
}

/**
 * The files named on the command line, directories walked in name order, lazily (a batch of
 * 100,000 files is never held as a list). A directory walk skips node_modules, dot-directories
 * and files that are neither cases nor write-ups (nor write-ups when no loader is registered).
 * A file reached twice (named twice, or named and inside a named directory) comes once.
 * A path that does not exist is yielded as an InputError, and the walk goes on.
 */
export async function* expandInputs(paths: string[], options: ExpandOptions): AsyncGenerator<InputRef | InputError> {
  const excluded = (options.exclude ?? []).map(globMatcher);
  const isExcluded = (p: string) => {
    if (!excluded.length) return false;
    const rel = path.relative(options.cwd, path.resolve(options.cwd, p)).split(path.sep).join('/');
    return excluded.some((m) => m(rel));
  };
  // One path never reaches a file twice (a walk follows a symbolic link only to what it does not
  // reach otherwise), so only several paths need the set of files seen — which would otherwise
  // grow with the batch.
  const seen = new Set<string>();
  const once = async (p: string) => {
    if (paths.length === 1) return true;
    let key: string;
    try {
      key = await fs.realpath(p);
    } catch {
      key = path.resolve(options.cwd, p);
    }
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
  let stdinSeen = false;
  for (const p of paths) {
    if (p === '-') {
      if (!stdinSeen) yield { file: '-', kind: 'case' };
      stdinSeen = true;
      continue;
    }
    if (isExcluded(p)) continue;
    let stat;
    try {
      stat = await fs.stat(p);
    } catch {
      yield new InputError({ file: p }, 'an existing case file or directory', 'no such file or directory');
      continue;
    }
    if (!stat.isDirectory()) {
      if (await once(p)) yield { file: p, kind: kindOf(p) ?? 'case' };
      continue;
    }
    let found = 0;
    for await (const ref of walkRoot(p, isExcluded)) {
      if (ref instanceof InputError) {
        yield ref;
        continue;
      }
      if (await once(ref.file)) {
        found++;
        yield ref;
      }
    }
    if (found === 0 && !(await hasAny(p))) yield new InputError({ file: p }, 'a directory holding case files (*.yaml)', 'none');
  }
}

async function hasAny(dir: string): Promise<boolean> {
  // A directory whose cases were all reached before (named twice) is not an empty directory.
  for await (const ref of walkRoot(dir, () => false)) if (!(ref instanceof InputError)) return true;
  return false;
}

/**
 * The directories one walk has gone through, by real path: the root, and the target of every
 * symbolic link it followed. The walk itself descends only real directories, so it can neither
 * loop nor reach a file twice; a link is followed only to what that descent does not reach.
 */
interface WalkState {
  walked: Set<string>;
  isExcluded: (p: string) => boolean;
}

async function* walkRoot(dir: string, isExcluded: (p: string) => boolean): AsyncGenerator<InputRef | InputError> {
  const real = await fs.realpath(dir).catch(() => path.resolve(dir));
  yield* walk(dir, real, { walked: new Set([real]), isExcluded });
}

/**
 * Whether the walk reaches `real` (a real path) without following a link: it lies in a walked
 * directory, through no directory the walk skips, and (a file) under a name the walk reads.
 */
function reached(real: string, isFile: boolean, state: WalkState): boolean {
  if (isFile && kindOf(real) === undefined) return false;
  const parts: string[] = [];
  for (let cur = isFile && !state.walked.has(real) ? path.dirname(real) : real; ; ) {
    if (state.walked.has(cur)) return parts.every((name) => name !== 'node_modules' && !name.startsWith('.'));
    const up = path.dirname(cur);
    if (up === cur) return false;
    parts.push(path.basename(cur));
    cur = up;
  }
}

async function* walk(dir: string, realDir: string, state: WalkState): AsyncGenerator<InputRef | InputError> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (state.isExcluded(full)) continue;
    if (e.isDirectory()) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      // The target of a link followed before is walked once, under the link's name.
      const real = path.join(realDir, e.name);
      if (!state.walked.has(real)) yield* walk(full, real, state);
    } else if (e.isFile()) {
      const kind = kindOf(e.name);
      if (kind && hasLoader(kind) && !state.walked.has(path.join(realDir, e.name))) yield { file: full, kind };
    } else if (e.isSymbolicLink()) {
      yield* followLink(full, e.name, state);
    }
  }
}

/**
 * A symbolic link met in a walk: its target is audited under the link's name unless the walk
 * reaches it anyway (a link to a sibling, to the directory itself, to an ancestor: no loop, no
 * case twice). A link that cannot be followed is named, never skipped in silence.
 */
async function* followLink(full: string, name: string, state: WalkState): AsyncGenerator<InputRef | InputError> {
  let stat;
  let real: string;
  try {
    stat = await fs.stat(full);
    real = await fs.realpath(full);
  } catch (err) {
    // Only a link whose name says case or write-up is worth a line: any other name was not going to be read.
    if (kindOf(name) === undefined) return;
    const got = openProblem(err);
    yield new InputError({ file: full }, 'a case file, or a symbolic link to one', `${got === 'no such file' ? 'a symbolic link to nothing' : got} (skipped)`);
    return;
  }
  if (reached(real, stat.isFile(), state)) return;
  if (stat.isDirectory()) {
    if (name === 'node_modules' || name.startsWith('.')) return;
    state.walked.add(real);
    yield* walk(full, real, state);
  } else if (stat.isFile()) {
    const kind = kindOf(name);
    if (kind && hasLoader(kind)) {
      state.walked.add(real);
      yield { file: full, kind };
    }
  }
}

/** A glob (`*`, `?`, `**`) as a matcher of `/`-separated relative paths. */
export function globMatcher(glob: string): (rel: string) => boolean {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      const slash = glob[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const pattern = glob.replace(/\/+$/, '');
  const rx = new RegExp(`^${re.replace(/\/$/, '')}(?:/.*)?$`);
  if (pattern.includes('/')) return (rel) => rx.test(rel);
  // Like .gitignore: a pattern without a slash matches any one part of the path.
  return (rel) => rel.split('/').some((part) => rx.test(part));
}

/**
 * Load inputs in order, reading a few files ahead (reads go through libuv's thread pool while
 * the caller evaluates). A file that cannot be read or parsed comes out as its InputError, in
 * its place, and the rest still load.
 */
export async function* loadInputs(refs: AsyncIterable<InputRef | InputError>, readStdin: () => Promise<string>, readAhead = 8, ctx: LoaderContext = {}): AsyncGenerator<AuditInput | InputError> {
  const pending: Array<Promise<AuditInput | InputError>> = [];
  const load = async (ref: InputRef | InputError): Promise<AuditInput | InputError> => {
    if (ref instanceof InputError) return ref;
    try {
      const text = ref.file === '-' ? await readStdin() : ref.kind === 'case' ? await readSmallFile(ref.file, 'case file') : await readInputFile(ref.file, 'write-up', MAX_WRITEUP_BYTES);
      const loader = await loaderFor(sniff(ref, text), ref.file, ctx);
      return await loader(text, ref.file === '-' ? '<stdin>' : ref.file);
    } catch (err) {
      if (err instanceof InputError) return err;
      throw err;
    }
  };
  const it = refs[Symbol.asyncIterator]();
  let done = false;
  const fill = async () => {
    while (!done && pending.length < readAhead) {
      const r = await it.next();
      if (r.done) {
        done = true;
        break;
      }
      const p = load(r.value);
      p.catch(() => {}); // surfaced in order below
      pending.push(p);
    }
  };
  for (;;) {
    await fill();
    const next = pending.shift();
    if (!next) return;
    yield await next;
  }
}
