import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inBatches, put, runAsync } from './harness.js';

/**
 * Issue 25: two runs at once on one output, 50 rounds each, a few rounds at a time (each in its
 * own directory). Nothing depends on who wins or on timing: every round checks that no write was
 * lost (each run that succeeded is in the file) and that a run that lost says so in one line.
 * The collector's rounds are in collector.test.ts.
 */
const ROUNDS = 50;
const AT_ONCE = 5;
const GOOD = 'format: kretprobe-case/v1\nid: good\nprobe: { target: f, registration: { result: EINVAL } }\n';

let base: string;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-race-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe('issue 25: concurrent writers, no lost write', () => {
  it(`${ROUNDS} rounds of two audit -o new.txt without --force: one creates it, the other is refused, the file is the winner's`, async () => {
    const failures: string[] = [];
    await inBatches(ROUNDS, AT_ONCE, async (i) => {
      const dir = await fs.mkdtemp(path.join(base, `o-${i}-`));
      await put(dir, 'c.yaml', GOOD);
      // Two formats, so the file tells whose output it is.
      const [json, text] = await Promise.all([runAsync(['audit', 'c.yaml', '--format', 'json', '-o', 'new.txt'], dir), runAsync(['audit', 'c.yaml', '-o', 'new.txt'], dir)]);
      const content = await fs.readFile(path.join(dir, 'new.txt'), 'utf8').catch(() => '');
      const winner = json.code === 0 ? json : text;
      const loser = winner === json ? text : json;
      const fileIs = content.startsWith('{') ? json : content.length > 0 ? text : undefined;
      const left = (await fs.readdir(dir)).filter((n) => n !== 'c.yaml' && n !== 'new.txt');
      const ok = winner.code === 0 && loser.code === 2 && fileIs === winner && !json.hung && !text.hung
        && loser.stderr.trim().split('\n').length === 1 && /new\.txt: expected a new file for the report \(or --force to replace it\); got an existing file/.test(loser.stderr)
        && left.length === 0;
      if (!ok) failures.push(`round ${i}: json ${json.code} text ${text.code}; file from ${fileIs === json ? 'json' : fileIs === text ? 'text' : 'nobody'}; left ${left.join(' ')}; ${loser.stderr.trim()}`);
    });
    expect(failures).toEqual([]);
  }, 600_000);

  it(`${ROUNDS} rounds of two triage runs on one case: each run that succeeds has its answer saved, the other is told who holds the session`, async () => {
    const failures: string[] = [];
    await inBatches(ROUNDS, AT_ONCE, async (i) => {
      const dir = await fs.mkdtemp(path.join(base, `t-${i}-`));
      await put(dir, 'c.yaml', 'format: kretprobe-case/v1\nid: good\nprobe: { target: f }\n');
      await put(dir, 'a1.yaml', 'probe.armed: true\n');
      await put(dir, 'a2.yaml', 'probe.interface: tracefs\n');
      const runs = await Promise.all([runAsync(['triage', 'c.yaml', '--answers', 'a1.yaml'], dir), runAsync(['triage', 'c.yaml', '--answers', 'a2.yaml'], dir)]);
      const saved = await fs.readFile(path.join(dir, 'c.yaml'), 'utf8');
      const answers = [/armed: true/, /interface: tracefs/];
      const problems: string[] = [];
      runs.forEach((r, k) => {
        if (r.hung) problems.push(`run ${k + 1} hung`);
        else if (r.code === 2) {
          if (r.stderr.trim().split('\n').length !== 1 || !/c\.yaml: expected a case file no other run is updating; got one held by pid \d+ on \S+ since \S+/.test(r.stderr)) problems.push(`run ${k + 1}: ${r.stderr.trim()}`);
        } else if (![0, 1, 3].includes(r.code ?? -1)) problems.push(`run ${k + 1} exit ${r.code}: ${r.stderr.trim()}`);
        else if (!answers[k]!.test(saved)) problems.push(`run ${k + 1} succeeded but its answer is lost`);
      });
      if (runs.every((r) => r.code === 2)) problems.push('both refused');
      const left = (await fs.readdir(dir)).filter((n) => n.endsWith('.lock') || n.endsWith('.tmp'));
      if (left.length) problems.push(`left ${left.join(' ')}`);
      if (problems.length) failures.push(`round ${i}: ${problems.join('; ')}`);
    });
    expect(failures).toEqual([]);
  }, 600_000);
});
