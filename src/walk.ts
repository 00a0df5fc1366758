import { promises as fs } from 'node:fs';
import path from 'node:path';

/**
 * The one directory walker for case files and write-ups (`audit DIR`, `loadCases(DIR)`): files
 * whose name `accept` takes, depth first in name order, never into `node_modules` or a hidden
 * directory, and never into or onto a path `skip` refuses.
 */
export async function* walkFiles(dir: string, opts: { accept: (name: string) => boolean; skip?: (full: string) => boolean }): AsyncGenerator<string> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (opts.skip?.(full)) continue;
    if (e.isDirectory()) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      yield* walkFiles(full, opts);
    } else if (e.isFile() && opts.accept(e.name)) yield full;
  }
}
