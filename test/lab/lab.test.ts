import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedKernels, type LabKernel } from '../../src/lab/kernels.js';
import { labMismatches, runLab, type LabRun, type LabRow } from '../../src/lab/run.js';
import { LAB_SCENARIOS } from '../../src/lab/scenarios.js';
import { formatLabTable, formatLabTimes } from '../../src/lab/table.js';

// Runs the whole lab once on every kernel `npm run lab:setup` cached (5.10, 6.1, 6.12 and the
// newest Debian carries), then checks every bundle. Without QEMU, a kernel or its module build,
// loading the kernel list or beforeAll throws and every test fails with the reason: never skipped.
const REQUIRED = ['5.10', '6.1', '6.12'];
const KERNELS: LabKernel[] = await cachedKernels(process.env);
for (const s of REQUIRED) {
  if (!KERNELS.some((k) => k.series === s)) throw new Error(`lab: no cached kernel of series ${s} (run \`npm run lab:setup -- --refresh\`)`);
}
if (!KERNELS.some((k) => k.role === 'newest')) throw new Error('lab: no cached newest kernel (run `npm run lab:setup -- --refresh`)');
for (const k of KERNELS) if (!k.module) throw new Error(`lab: no module build for ${k.release} (run \`npm run lab:setup\`)`);

let out: string;
let run: LabRun;

beforeAll(async () => {
  out = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-test-'));
  run = await runLab({ kernels: KERNELS, scenarios: [...LAB_SCENARIOS], out, timeoutMs: 300_000 });
  // Time per kernel and per scenario, and the scenario x kernel table, for the CI log.
  process.stdout.write(`\n${formatLabTable(run.rows)}\n${formatLabTimes(run)}\n`);
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

const SERIES = KERNELS.map((k) => [k.series] as const);
const BUNDLES = LAB_SCENARIOS.flatMap((s) => s.bundles);
const FIXTURES = ['constrained', 'adequate', 'stopped', 'default-smp2', 'default-smp8'];
const MODULE = LAB_SCENARIOS.filter((s) => s.kind === 'module').map((s) => s.name);

describe.each(SERIES)('Linux %s under QEMU', (series) => {
  it('boots once per CPU count and finishes every scenario', () => {
    const boots = run.boots.filter((b) => b.kernel.series === series);
    expect(boots.map((b) => b.smp).sort((a, b) => a - b)).toEqual([2, 8]);
    for (const b of boots) expect(b.problems, b.consoleLog).toEqual([]);
  });

  // Every counter, record count and verdict the scenario's expectation names (scenarios.ts).
  it.each(BUNDLES)('%s shows what the kernel is expected to show', (bundle) => {
    const r = row(series, bundle);
    expect(r.expected, `an expectation for ${bundle} on ${series}`).toBeDefined();
    expect(labMismatches(r)).toEqual([]);
    expect(r.triage?.verdict).toBe(r.expected?.verdict);
    for (const rule of r.expected?.rules ?? []) expect(r.triage?.rules, `${bundle}: rule ${rule} fires`).toContain(rule);
  });

  it.each(FIXTURES)('%s: every reader held in pipe_read before the release, no foreign records', (bundle) => {
    const o = row(series, bundle).observation!;
    expect(o.registered).toBe(true);
    expect(o.release?.startsWith(`${series}.`)).toBe(true);
    // While gated: no return yet (the hit column counts returns), and the misses already counted.
    expect(o.gated?.return_hits).toBe(0);
    expect(o.gated?.entry_hits).toBe(3);
    expect(o.gated?.all_blocked).toBe(true);
    expect(o.gated?.return_misses).toBe(o.returnMisses);
    expect(o.foreign).toBe(0);
    expect(o.ops).toHaveLength(3);
  });

  it.each(MODULE)('%s: the module loaded, every call held at the gate, its records in probe.jsonl', (bundle) => {
    const o = row(series, bundle).module!;
    expect(o.registered).toBe(true);
    expect(o.release?.startsWith(`${series}.`)).toBe(true);
    expect(o.gated?.all_blocked).toBe(true);
    expect(o.problems).toEqual([]);
    expect(o.counters.end?.records_dropped).toBe(0);
  });

  // Where the kernels differ, the difference is the assertion (lab/README.md).
  it('default pool (maxactive 0 / r:): 2 on 5.10 (not preemptible, before 6.2), 10 from 6.1.3 on', () => {
    const want = series === '5.10' ? 2 : 10;
    expect(row(series, 'mod-default').module?.counters.registered?.maxactive).toBe(want);
    expect(row(series, 'default-smp2').observation?.maxactive).toBe(want);
    expect(row(series, 'default-smp8').observation?.maxactive).toBe(series === '5.10' ? 8 : 16);
    expect(row(series, 'mod-default').triage?.verdict).toBe(series === '5.10' ? 'capacity-missed' : 'fully-observed');
  });

  it('fprobe exits: none before 6.5; f2: pooled on 6.12 (a return lost, no counter shows it), rejected on 7.x', () => {
    const f2 = row(series, 'fprobe-f2').observation!;
    const fd = row(series, 'fprobe-default').observation!;
    if (series === '5.10' || series === '6.1') {
      expect([f2.registered, fd.registered]).toEqual([false, false]);
    } else if (series === '6.12') {
      expect({ registered: f2.registered, maxactive: f2.maxactive, entries: f2.entries, returns: f2.returns }).toEqual({ registered: true, maxactive: 2, entries: 3, returns: 2 });
      expect({ registered: fd.registered, entries: fd.entries, returns: fd.returns }).toEqual({ registered: true, entries: 3, returns: 3 });
    } else {
      expect({ registered: f2.registered, reason: f2.errorReason }).toEqual({ registered: false, reason: 'Invalid maxactive number' });
      expect({ registered: fd.registered, entries: fd.entries, returns: fd.returns }).toEqual({ registered: true, entries: 3, returns: 3 });
    }
  });

  it('re-entry through the entry handler raises kp.nmissed, not the pool miss count', () => {
    const c = row(series, 'mod-reenter').module?.counters.end;
    expect({ nmissed: c?.nmissed, kp_nmissed: c?.kp_nmissed, reentered: c?.reentered }).toEqual({ nmissed: 0, kp_nmissed: 3, reentered: 3 });
  });

  it('a reload between the snapshots is a new epoch: the counters do not subtract', () => {
    const o = row(series, 'mod-reload').module!;
    expect(o.counters.start?.epoch).toBe('mod-reload-1');
    expect(o.counters.end?.epoch).toBe('mod-reload-2');
    expect(row(series, 'mod-reload').triage?.rules).toContain('counters/epoch-changed');
  });
});
