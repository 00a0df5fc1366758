import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';

// The report's Inputs section is a table of figures, one per row, never a JSON dump of an object.
describe('report: the Inputs section', () => {
  it('shows the ledger\'s operation figures as rows, no cell holds JSON', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-inputs-'));
    const md = path.join(dir, 'r.md');
    const r = cli(['report', 'cases/lab/6.12/constrained.yaml', '--ops', 'test/fixtures/ledger/fixture-r2.ops.jsonl', '--trace', 'test/fixtures/ledger/fixture-r2.trace.txt', '--capture-stop-ns', '6200000000', '-o', md]);
    expect(r.code, r.stderr).toBe(0);
    const inputs = readFileSync(md, 'utf8').split(/^## /m).find((s) => s.startsWith('Inputs'))!;
    const cells = inputs.split('\n').filter((l) => l.startsWith('| ')).map((l) => l.split(' | ').map((c) => c.replace(/^\|\s*|\s*\|$/g, '')));
    expect(cells.filter((c) => c.some((x) => /^[{[]/.test(x)))).toEqual([]);
    const value = (label: string) => cells.find((c) => c[0] === label)?.[1];
    expect([value('operations in the ledger'), value('eligible operations')]).toEqual(['3', '3']);
  });
});

describe('report: a picture with nothing to draw is left out', () => {
  it('a case with no accounting numbers and no latency figures gets neither the identity bar nor the histogram', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-empty-'));
    const r = cli(['report', 'cases/scope/blacklisted-do-int3.yaml', '-o', path.join(dir, 'r.md')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).filter((f) => f.endsWith('.svg'))).toEqual([]);
  });

  it('a case with them gets both', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-full-'));
    const r = cli(['report', 'cases/lab/6.12/constrained.yaml', '-o', path.join(dir, 'r.md')]);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir).filter((f) => f.endsWith('.svg')).sort()).toEqual(['r.durations.svg', 'r.identity.svg']);
  });
});
