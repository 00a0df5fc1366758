import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.js';
import type { LoadedCase } from '../case/parse.js';
import type { Waiver } from '../case/waivers.js';
import type { Extraction } from '../writeup/extract.js';
import type { Sidecar } from '../writeup/judge.js';
import { isWriteupName, MAX_WRITEUP_BYTES } from '../writeup/text.js';
import { openProblem, readInputFileSync } from '../fsutil.js';
import { walkFiles } from '../walk.js';
import { MAX_YAML_BYTES } from '../yamlfile.js';

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
  loadersReplaced = true;
}

let loadersReplaced = false;
/** Whether every loader is the shipped one (a worker thread, which has only those, reads alike). */
export function shippedLoaders(): boolean {
  return !loadersReplaced;
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
  // The glob library loads only when a pattern is given.
  const glob = options.exclude?.length || paths.some((p) => /[*?[\]{}()!]/.test(p)) ? await import('./glob.js') : undefined;
  const excluded = (options.exclude ?? []).map((g) => glob!.excludeMatcher(g));
  const relOf = (p: string) => path.relative(options.cwd, path.resolve(options.cwd, p)).split(path.sep).join('/');
  const isExcluded = (p: string) => excluded.length > 0 && excluded.some((m) => m(relOf(p)));
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
    if (glob?.isGlob(p) && !(await exists(p))) {
      // A pattern: the files under its base directory whose path (as written: relative to the
      // working directory, or absolute) it matches, walked like a directory.
      const absolute = path.isAbsolute(p);
      if (!(await exists(glob.globBase(p)))) {
        yield new InputError({ file: p }, 'files matching this pattern', `no directory ${glob.globBase(p)}`);
        continue;
      }
      const matches = glob.compileGlob(p.replace(/^\.\//, ''));
      let found = 0;
      for await (const ref of walk(glob.globBase(p), isExcluded)) {
        if (ref instanceof InputError) {
          yield ref;
          continue;
        }
        const name = absolute ? path.resolve(options.cwd, ref.file).split(path.sep).join('/') : relOf(ref.file);
        if (matches(name) && (await once(ref.file))) {
          found++;
          yield ref;
        }
      }
      if (found === 0) yield new InputError({ file: p }, 'files matching this pattern', 'none');
      continue;
    }
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
    for await (const ref of walk(p, isExcluded)) {
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

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(() => true, () => false);
}

async function hasAny(dir: string): Promise<boolean> {
  // A directory whose cases were all reached before (named twice) is not an empty directory.
  for await (const ref of walk(dir, () => false)) if (!(ref instanceof InputError)) return true;
  return false;
}

async function* walk(dir: string, isExcluded: (p: string) => boolean): AsyncGenerator<InputRef | InputError> {
  const accept = (name: string) => {
    const k = kindOf(name);
    return k !== undefined && hasLoader(k);
  };
  for await (const found of walkFiles(dir, { accept, skip: isExcluded })) {
    if (typeof found === 'string') yield { file: found, kind: kindOf(found)! };
    else {
      const got = openProblem(found.error);
      yield new InputError({ file: found.file }, 'a case file, or a symbolic link to one', `${got === 'no such file' ? 'a symbolic link to nothing' : got} (skipped)`);
    }
  }
}

/**
 * Read and load one input: its AuditInput, or the InputError that says why it cannot be audited.
 * Read synchronously: these are small files, and each step of an asynchronous read (open, stat,
 * read, close) is a round trip through libuv's thread pool that costs more than the read itself
 * (a third of a 10,000-case audit's time went there).
 */
export async function loadInput(ref: InputRef | InputError, readStdin: () => Promise<string>, ctx: LoaderContext = {}): Promise<AuditInput | InputError> {
  if (ref instanceof InputError) return ref;
  try {
    const text = ref.file === '-' ? await readStdin() : ref.kind === 'case' ? readInputFileSync(ref.file, 'case file', MAX_YAML_BYTES) : readInputFileSync(ref.file, 'write-up', MAX_WRITEUP_BYTES);
    const loader = await loaderFor(sniff(ref, text), ref.file, ctx);
    return await loader(text, ref.file === '-' ? '<stdin>' : ref.file);
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
}

/**
 * Load inputs in order, a few ahead of the caller (a loader may wait for an import). A file that cannot be read or parsed comes out as its InputError, in
 * its place, and the rest still load.
 */
export async function* loadInputs(refs: AsyncIterable<InputRef | InputError>, readStdin: () => Promise<string>, readAhead = 8, ctx: LoaderContext = {}): AsyncGenerator<AuditInput | InputError> {
  const pending: Array<Promise<AuditInput | InputError>> = [];
  const load = (ref: InputRef | InputError) => loadInput(ref, readStdin, ctx);
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
