import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRow, put, type Row } from './harness.js';

/**
 * Issue 25, one row per item through the CLI, as issue 13's rows: the exit code, exactly one
 * stderr line, every file unchanged (sha256 and mode) unless the row names it.
 */
const GOOD = 'format: kretprobe-case/v1\nid: good\nprobe: { target: f, registration: { result: EINVAL } }\n';
const caseWithId = (id: string) => GOOD.replace('id: good', `id: ${id}`);

let base: string;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-issue25-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** The case ids an `audit --format json` run reports, in order (one JSON document per case). */
function auditedIds(stdout: string): string[] {
  return [...stdout.matchAll(/^\{"id":"([^"]+)"/gm)].map((m) => m[1]!);
}

/** A batch directory with every kind of symbolic link: each case is audited once, and a link that cannot be followed is named. */
async function symlinkBatch(d: string): Promise<void> {
  for (const [rel, id] of [['b/a.yaml', 'a'], ['b/sub/s.yaml', 's'], ['ext/e.yaml', 'e'], ['ext/d/f.yaml', 'f']] as const) await put(d, rel, caseWithId(id));
  const link = (target: string, name: string) => fs.symlink(target, path.join(d, 'b', name));
  await link('../ext/e.yaml', 'link-e.yaml'); // a case outside: followed
  await link('../ext/d', 'linkd'); // a directory outside: followed
  await link('../ext', 'linkext'); // holds only what was followed already
  await link('.', 'self'); // a loop to itself
  await link('..', 'up'); // a loop through an ancestor
  await link('a.yaml', 'dup.yaml'); // a case reached anyway
  await link('nowhere.yaml', 'dangle.yaml'); // to nothing: named
}

const ROWS: Row[] = [
  {
    name: 'silent wrong answer 5: symlinked cases in a batch are followed once, loops guarded, a dangling one named',
    setup: symlinkBatch,
    args: ['audit', '--format', 'json', 'b'],
    code: 2,
    stderr: /^kretprobe-triage: b\/dangle\.yaml: expected a case file, or a symbolic link to one; got a symbolic link to nothing \(skipped\)$/,
    after: (_, r) => {
      expect(auditedIds(r.stdout).sort()).toEqual(['a', 'e', 'f', 's']);
    },
  },
  {
    name: 'silent wrong answer 5: a symbolic link loop in a batch is named',
    setup: async (d) => { await put(d, 'b/a.yaml', caseWithId('a')); await fs.symlink('loop.yaml', path.join(d, 'b/loop.yaml')); },
    args: ['audit', '--format', 'json', 'b'],
    code: 2,
    stderr: /^kretprobe-triage: b\/loop\.yaml: expected a case file, or a symbolic link to one; got a symbolic link loop \(skipped\)$/,
    after: (_, r) => { expect(auditedIds(r.stdout)).toEqual(['a']); },
  },
];

describe('issue 25: every item through the CLI', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_, row) => checkRow(base, row), 60_000);
});
