import { promises as fs } from 'node:fs';
import path from 'node:path';

/** A symbolic link the walk met and could not follow (dangling, a loop, unreadable). */
export interface WalkProblem {
  file: string;
  error: unknown;
}

export interface WalkOptions {
  /** Whether a file of this name is wanted. */
  accept: (name: string) => boolean;
  /** Paths not to go into or onto. */
  skip?: (full: string) => boolean;
}

/**
 * The one directory walker for case files and write-ups (`audit DIR`, `loadCases(DIR)`): files
 * whose name `accept` takes, depth first in name order, never into `node_modules` or a hidden
 * directory, and never into or onto a path `skip` refuses.
 *
 * The walk descends only real directories, so it can neither loop nor reach a file twice. A
 * symbolic link is followed only to what that descent does not reach (a link to a sibling, to
 * the directory itself or to an ancestor adds nothing); its target is yielded under the link's
 * name. A link with a wanted name that cannot be followed is yielded as a WalkProblem, never
 * skipped in silence.
 */
export async function* walkFiles(dir: string, opts: WalkOptions): AsyncGenerator<string | WalkProblem> {
  const real = await fs.realpath(dir).catch(() => path.resolve(dir));
  yield* walk(dir, real, { walked: new Set([real]), opts });
}

/** The directories one walk has gone through, by real path: the root, and every link target it followed. */
interface WalkState {
  walked: Set<string>;
  opts: WalkOptions;
}

const skippedDir = (name: string) => name === 'node_modules' || name.startsWith('.');

/** Whether the walk reaches `real` without following a link: inside a walked directory, through no skipped one, under a wanted name. */
function reached(real: string, isFile: boolean, state: WalkState): boolean {
  if (isFile && !state.opts.accept(path.basename(real))) return false;
  const parts: string[] = [];
  for (let cur = isFile && !state.walked.has(real) ? path.dirname(real) : real; ; ) {
    if (state.walked.has(cur)) return parts.every((name) => !skippedDir(name));
    const up = path.dirname(cur);
    if (up === cur) return false;
    parts.push(path.basename(cur));
    cur = up;
  }
}

async function* walk(dir: string, realDir: string, state: WalkState): AsyncGenerator<string | WalkProblem> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (state.opts.skip?.(full)) continue;
    if (e.isDirectory()) {
      if (skippedDir(e.name)) continue;
      // The target of a link followed before is walked once, under the link's name.
      const real = path.join(realDir, e.name);
      if (!state.walked.has(real)) yield* walk(full, real, state);
    } else if (e.isFile()) {
      if (state.opts.accept(e.name) && !state.walked.has(path.join(realDir, e.name))) yield full;
    } else if (e.isSymbolicLink()) {
      yield* followLink(full, e.name, state);
    }
  }
}

async function* followLink(full: string, name: string, state: WalkState): AsyncGenerator<string | WalkProblem> {
  let stat;
  let real: string;
  try {
    stat = await fs.stat(full);
    real = await fs.realpath(full);
  } catch (error) {
    // Only a link whose name says it is wanted is worth a line: any other was not going to be read.
    if (state.opts.accept(name)) yield { file: full, error };
    return;
  }
  if (reached(real, stat.isFile(), state)) return;
  if (stat.isDirectory()) {
    if (skippedDir(name)) return;
    state.walked.add(real);
    yield* walk(full, real, state);
  } else if (stat.isFile() && state.opts.accept(name)) {
    state.walked.add(real);
    yield full;
  }
}
