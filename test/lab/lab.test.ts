import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedKernels } from '../../src/lab/kernels.js';
import { runLab, type LabRun, type LabRow } from '../../src/lab/run.js';
import { LAB_SCENARIOS } from '../../src/lab/scenarios.js';

// Runs the whole lab once on the two Debian kernels that `npm run lab:setup` cached, then checks
// every bundle. Without QEMU or a kernel, beforeAll throws and every test below fails with the
// reason: the lab is never skipped.
const SERIES = ['6.12', '6.1'];

let out: string;
let run: LabRun;

beforeAll(async () => {
  out = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-test-'));
  const kernels = await cachedKernels(process.env, SERIES);
  run = await runLab({ kernels, scenarios: [...LAB_SCENARIOS], out, timeoutMs: 300_000 });
}, 900_000);

afterAll(async () => {
  if (out) await fs.rm(out, { recursive: true, force: true });
});

function row(series: string, bundle: string): LabRow {
  const r = run.rows.find((x) => x.kernel.series === series && x.bundle === bundle);
  if (!r) throw new Error(`no row for ${series} ${bundle}`);
  expect(r.missing, `${series} ${bundle}`).toBeUndefined();
  return r;
}

const kernels = SERIES.map((s) => [s] as const);

describe.each(kernels)('Linux %s under QEMU', (series) => {
  it('boots once per CPU count and finishes every scenario', () => {
    const boots = run.boots.filter((b) => b.kernel.series === series);
    expect(boots.map((b) => b.smp).sort((a, b) => a - b)).toEqual([2, 8]);
    for (const b of boots) expect(b.problems, b.consoleLog).toEqual([]);
  });

  // kernel-notes.md, "Observed on Linux 6.12.95": the seed's overlap fixture.
  it.each([
    // bundle, effective maxactive, return hits, return misses, entry hits, entry/return records, gated misses
    ['constrained', 2, 2, 1, 3, 3, 2, 1],
    ['adequate', 8, 3, 0, 3, 3, 3, 0],
    ['stopped', 8, 3, 0, 3, 3, 0, 0],
    ['default-smp2', 10, 3, 0, 3, 3, 3, 0],
    ['default-smp8', 16, 3, 0, 3, 3, 3, 0],
  ] as const)('%s: maxactive %i, return hits/misses %i/%i, entry hits %i, records %i/%i', (bundle, maxactive, hits, misses, entryHits, entries, returns, gatedMisses) => {
    const o = row(series, bundle).observation!;
    expect(o.registered).toBe(true);
    expect(o.release?.startsWith(series === '6.1' ? '6.1.' : '6.12.')).toBe(true);
    expect(o.maxactive).toBe(maxactive);
    expect({ hits: o.returnHits, misses: o.returnMisses, entryHits: o.entryHits }).toEqual({ hits, misses, entryHits });
    expect({ entries: o.entries, returns: o.returns, foreign: o.foreign }).toEqual({ entries, returns, foreign: 0 });
    // While gated: no return yet (the hit column counts returns), and the miss already counted.
    expect(o.gated).toEqual({ entry_hits: 3, return_hits: 0, return_misses: gatedMisses, all_blocked: true });
    expect(o.ops).toHaveLength(3);
    expect(o.problems).toEqual([]);
  });

  it.each([
    ['fail-missing-symbol', 'Invalid probed address or symbol'],
    ['fail-blacklisted', 'Failed to register probe event'],
    ['fail-r0', 'Invalid maxactive number'],
    ['fail-r9999', 'Maxactive is too big'],
  ] as const)('%s is rejected: %s', (bundle, reason) => {
    const o = row(series, bundle).observation!;
    expect(o.registered).toBe(false);
    expect(o.errorReason).toBe(reason);
  });

  it.each([
    ['constrained', 'capacity-missed'],
    ['adequate', 'fully-observed'],
    ['stopped', 'still-in-flight'],
    ['default-smp2', 'fully-observed'],
    ['default-smp8', 'fully-observed'],
    ['fail-missing-symbol', 'setup-failure'],
    ['fail-blacklisted', 'setup-failure'],
    ['fail-r0', 'setup-failure'],
    ['fail-r9999', 'setup-failure'],
  ] as const)('%s triages to %s', (bundle, verdict) => {
    const r = row(series, bundle);
    expect(r.triage?.verdict, `missing facts: ${r.triage?.missing.join(', ')}`).toBe(verdict);
  });
});
