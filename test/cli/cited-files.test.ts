import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

// What the tool prints may send a reader to a file: that file must be one the npm package holds
// (package.json `files`, plus README.md, LICENSE and package.json that npm always includes).
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
const shippedRoots = new Set([...pkg.files, 'README.md', 'LICENSE', 'package.json']);

/**
 * Every project file an output names: a path under one of the repository's top-level
 * directories, or a bare `NAME.md`, anchors cut off. (Paths of the inputs a run was given are
 * the user's, not citations.)
 */
const REPO_DIRS = 'docs|rules|schema|collector|cases|lab|src|test|scripts|dist';
function citedFiles(text: string, inputs: string[] = []): string[] {
  const found = new Set<string>();
  const rx = new RegExp(`(?<![\\w./-])((?:${REPO_DIRS})/(?:[\\w.-]+/)*[\\w.-]+\\.(?:md|yaml|yml|json|sh|ts|js|txt)|[A-Z][A-Z0-9_-]*\\.md)(?=[#\\s)\\]:;,.'"\`]|$)`, 'g');
  for (const m of text.matchAll(rx)) if (!inputs.includes(m[1]!)) found.add(m[1]!);
  return [...found].sort();
}
const notShipped = (files: string[]) => files.filter((f) => !(shippedRoots.has(f.split('/')[0]!) && (!f.includes('/') || existsSync(path.join(ROOT, f)))));

describe('output cites only files the package contains', () => {
  it('the citation scanner finds a file outside the package', () => {
    expect(notShipped(citedFiles('see DESIGN.md; and src/ledger/format.ts, docs/case-format.md#x'))).toEqual(['DESIGN.md', 'src/ledger/format.ts']);
  });

  it.each([
    [['rules', 'facts']],
    [['rules', 'list']],
    [['rules', 'explain', 'counters/nmissed-rose']],
    [['ledger', '--ops', 'test/fixtures/ledger/fixture-r2.ops.jsonl', '--trace', 'test/fixtures/ledger/fixture-r2.trace.txt']],
    [['audit', 'cases/', '--verbose']],
    [['audit', 'cases/', '--format', 'sarif']],
    [['audit', '--help']],
    [['--help']],
  ])('%j', (args) => {
    const r = cli(args);
    expect(r.stdout.length).toBeGreaterThan(0);
    expect(notShipped(citedFiles(r.stdout + r.stderr, args))).toEqual([]);
  });
});
