import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';
import { POOL_MIN_INPUTS, workersFor } from '../../src/audit/pool.js';

// `audit --jobs N` judges a batch on N threads. Whatever N, the output must be the one the main
// thread alone gives, byte for byte and in walk order, skipped files and waivers included.
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'krt-jobs-'));
  // Every shipped case and write-up (cases, write-ups with sidecars, reference expectations) ...
  cpSync(path.join(ROOT, 'cases'), path.join(dir, 'cases'), { recursive: true });
  // ... and, among them, files that cannot be audited: bad YAML, a waiver naming no rule, a link to nothing.
  const good = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8');
  writeFileSync(path.join(dir, 'cases/kernel-notes/r2-z-broken.yaml'), 'format: kretprobe-case/v1\nid: broken\nprobe: [\n');
  writeFileSync(path.join(dir, 'cases/kernel-notes/r2-z-waiver.yaml'), `${good.replace(/^id: .*$/m, 'id: bad-waiver')}accepted:\n  - { rule: no/such-rule, reason: x }\n`);
  symlinkSync(path.join(dir, 'nowhere.yaml'), path.join(dir, 'cases/kernel-notes/r2-z-dangling.yaml'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('audit --jobs', () => {
  it('gives the same output, errors and exit code on 1, 2 and 3 threads, in every format', () => {
    const target = path.join(dir, 'cases');
    for (const format of ['json', 'text', 'sarif', 'markdown']) {
      const one = cli(['audit', target, '--format', format, '--jobs', '1']);
      expect(one.code).toBe(2);
      expect(one.stderr.trim().split('\n')).toHaveLength(3);
      for (const jobs of ['2', '3']) {
        const many = cli(['audit', target, '--format', format, '--jobs', jobs]);
        expect({ format, jobs, code: many.code, stderr: many.stderr }).toEqual({ format, jobs, code: one.code, stderr: one.stderr });
        // A mismatch here prints two whole reports; compare them as lines so the first difference shows.
        expect(many.stdout.split('\n')).toEqual(one.stdout.split('\n'));
      }
    }
  }, 240_000);

  it('gives the same output when it chooses its threads itself (a batch may be read on a second thread)', () => {
    const target = path.join(dir, 'cases');
    const one = cli(['audit', target, '--format', 'json', '--jobs', '1']);
    const auto = cli(['audit', target, '--format', 'json']);
    expect({ code: auto.code, stderr: auto.stderr }).toEqual({ code: one.code, stderr: one.stderr });
    expect(auto.stdout.split('\n')).toEqual(one.stdout.split('\n'));
  }, 120_000);

  it('keeps reference mode: --expect met on several threads', () => {
    const r = cli(['audit', path.join(ROOT, 'cases'), '--expect', '--jobs', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^reference expectations: (\d+)\/\1 met$/m);
  }, 120_000);

  it('refuses a --jobs that is not a whole number of threads, in one line', () => {
    for (const bad of ['0', '-1', 'two', '1.5', '999']) {
      const r = cli(['audit', path.join(ROOT, 'cases/kernel-notes'), '--jobs', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`kretprobe-triage: expected --jobs: a whole number of threads from 1 to 256; got "${bad}"\n`);
      expect(r.stdout).toBe('');
    }
  });
});

describe('workersFor', () => {
  it('takes --jobs as the threads in all', () => {
    expect(workersFor(1, 10_000, 8, 8, 0)).toBe(0);
    expect(workersFor(4, 3, 0, 2, 9)).toBe(3);
  });
  it('starts none for a small batch or a single core', () => {
    expect(workersFor(undefined, POOL_MIN_INPUTS - 1, 7, 8, 0)).toBe(0);
    expect(workersFor(undefined, 10_000, 0.9, 1, 0)).toBe(0);
  });
  it('starts one per idle core beyond the first, at most cores - 1', () => {
    // 2 cores, the main thread busy and the other idle: judging alone pays better there.
    expect(workersFor(undefined, 10_000, 1, 2, 0)).toBe(0);
    expect(workersFor(undefined, 10_000, 3, 4, 0)).toBe(2);
    expect(workersFor(undefined, 10_000, 1.8, 4, 0)).toBe(1);
    expect(workersFor(undefined, 10_000, 0.4, 4, 0)).toBe(0);
    expect(workersFor(undefined, 10_000, 64, 8, 0)).toBe(7);
  });
  it('reads the load average when idle time could not be measured (the main thread counted in it)', () => {
    expect(workersFor(undefined, 10_000, undefined, 8, 1)).toBe(5);
    expect(workersFor(undefined, 10_000, undefined, 4, 3.5)).toBe(0);
  });
});
