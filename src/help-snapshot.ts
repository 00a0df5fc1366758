import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The top-level `--help`, as commander prints it where it wraps at 80 columns (not a terminal),
 * written by the build (`npm run build`: dist/help.snapshot.txt, scripts/snapshot-help.ts).
 * Loading commander is most of what `--help` costs (it loads node:child_process at once, for
 * subcommands that are programs of their own, which this tool has none of), so the CLI prints
 * the snapshot instead while it was made by the same build from the same code: its first line
 * is a key of the compiled modules the help comes from and of commander's version. Any change to
 * them (a rebuild, a plain tsc, another commander) changes the key, and commander prints it.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
export const HELP_SNAPSHOT_FILE = path.resolve(here, '../help.snapshot.txt');
// What the top-level help is made of: the program (cli.js), the commands' names and summaries
// (commands/index.js), and commander's formatting (its package.json names its version).
const SOURCES = [path.join(here, 'cli.js'), path.join(here, 'commands', 'index.js')];

/** The key of the code the help comes from: size and time of change of each file it is made of. */
export function helpSnapshotKey(): string {
  const files = [...SOURCES, commanderPackage()];
  return files.map((f) => {
    const st = f === undefined ? undefined : statSync(f, { throwIfNoEntry: false });
    return st ? `${st.size}:${st.mtimeMs}` : 'none';
  }).join(' ');
}

function commanderPackage(): string | undefined {
  try {
    // commander's entry point sits at its package root (esm.mjs), beside its package.json.
    return path.join(path.dirname(fileURLToPath(import.meta.resolve('commander'))), 'package.json');
  } catch {
    return undefined;
  }
}

/** The help text when the snapshot was made from the code that runs now; else undefined. */
export function readHelpSnapshot(): string | undefined {
  let text: string;
  try {
    text = readFileSync(HELP_SNAPSHOT_FILE, 'utf8');
  } catch {
    return undefined;
  }
  const nl = text.indexOf('\n');
  return nl > 0 && text.slice(0, nl) === `key ${helpSnapshotKey()}` ? text.slice(nl + 1) : undefined;
}

/** The snapshot file's text for `help`, the help commander printed. */
export function makeHelpSnapshot(help: string): string {
  return `key ${helpSnapshotKey()}\n${help}`;
}
