// The floors the CLI benches compare against, each a whole process doing the least a user's run
// must do, and nothing more (test/scripts/bench-floor.test.ts checks that):
//   cases DIR     read every *.yaml / *.yml under DIR (walked in name order) and parse each with
//                 js-yaml, the parser the audit itself reads cases with; no validation, no output.
//   writeups DIR  read every *.md under DIR and parse each with markdown-it (html off, linkify off,
//                 as the write-up reader is set); no extraction, no output.
// It prints one line: the kind, the number of files and of bytes read, and a count of parsed
// top-level items (so nothing can be optimised away and the test can see the work was done).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import MarkdownIt from 'markdown-it';

export const FLOORS = {
  cases: 'read + js-yaml parse of every *.yaml/*.yml file, no validation',
  writeups: 'read + markdown-it parse of every *.md file, no extraction',
} as const;
export type FloorKind = keyof typeof FLOORS;

/** The files a floor reads under `dir`, in walk order. */
export function floorFiles(dir: string, kind: FloorKind): string[] {
  const match = kind === 'cases' ? /\.ya?ml$/ : /\.md$/;
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && match.test(e.name)) out.push(full);
    }
  };
  walk(dir);
  return out;
}

/** Run one floor over `dir`: the counts it prints. */
export function runFloor(kind: FloorKind, dir: string): { files: number; bytes: number; items: number } {
  const files = floorFiles(dir, kind);
  let bytes = 0;
  let items = 0;
  const md = kind === 'writeups' ? new MarkdownIt('default', { html: false, linkify: false }) : undefined;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    bytes += text.length;
    if (md) items += md.parse(text, {}).length;
    else {
      const v = yaml.load(text);
      items += v !== null && typeof v === 'object' ? Object.keys(v).length : 1;
    }
  }
  return { files: files.length, bytes, items };
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  const [kind, dir] = process.argv.slice(2) as [FloorKind, string];
  if (!(kind in FLOORS) || !dir) {
    console.error(`usage: bench-floor ${Object.keys(FLOORS).join('|')} DIR`);
    process.exitCode = 2;
  } else {
    const r = runFloor(kind, dir);
    console.log(`${kind} files=${r.files} bytes=${r.bytes} items=${r.items}`);
  }
}
