import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The top-level `--help`, as commander prints it where it wraps at 80 columns (not a terminal),
 * written by the build (`npm run build`: dist/help.snapshot.txt, scripts/snapshot-help.ts).
 * Loading commander is most of what `--help` costs (it loads node:child_process at once, for
 * subcommands that are programs of their own, which this tool has none of), so the CLI prints
 * the snapshot instead while it was made by the same build from the same code: its first line
 * is a key of the contents of the compiled modules the help comes from and of commander's
 * package.json. Any change to them (another build, another commander) changes the key, and
 * commander prints it.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
export const HELP_SNAPSHOT_FILE = path.resolve(here, '../help.snapshot.txt');
// What the top-level help is made of: the program (cli.js), the commands' names and summaries
// (commands/index.js), and commander's formatting (its package.json names its version).
const SOURCES = [path.join(here, 'cli.js'), path.join(here, 'commands', 'index.js')];

/**
 * The key of the code the help comes from: each file's length and two 32-bit FNV-1a hashes of
 * its bytes (with two offsets). Content, not time of change: an install copies the files (npm
 * pack, npm install of a tarball) and gives them new times, yet they are the same build. Reading
 * and hashing the three files takes well under a millisecond.
 */
export function helpSnapshotKey(): string {
  const files = [...SOURCES, commanderPackage()];
  return files.map((f) => {
    let bytes: Buffer;
    try {
      if (f === undefined) return 'none';
      bytes = readFileSync(f);
    } catch {
      return 'none';
    }
    return `${bytes.length}:${fnv1a(bytes, 0x811c9dc5).toString(16)}${fnv1a(bytes, 0x01000193).toString(16).padStart(8, '0')}`;
  }).join(' ');
}

function fnv1a(bytes: Uint8Array, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193) >>> 0;
  return h;
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
