import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedKernels, kernelTraits, type LabKernel } from '../../src/lab/kernels.js';
import { labMismatches, runLab, type LabRun, type LabRow } from '../../src/lab/run.js';
import { BT_CALLS, LAB_SCENARIOS } from '../../src/lab/scenarios.js';
import { linkMissed } from '../../src/lab/bpftraceObserve.js';
import { defaultPool, hasChange } from '../../src/kernel/history.js';
import { formatLabTable, formatLabTimes } from '../../src/lab/table.js';
import { parse } from 'yaml';
import { caseDrift } from '../../src/lab/drift.js';
import { isRecorded } from '../../src/lab/cases.js';

// Runs the whole lab once on every kernel `npm run lab:setup` cached (5.10, 6.1, 6.12 and the
// newest Debian carries), then checks every bundle. Without QEMU, a kernel or its module build,
// loading the kernel list or beforeAll throws and every test fails with the reason: never skipped.
// 6.1-arm64: the second architecture (issue 22), module scenarios only (lab-setup-arm64.sh).
const REQUIRED = ['5.10', '6.1', '6.12', '6.1-arm64'];
const KERNELS: LabKernel[] = await cachedKernels(process.env);
for (const s of REQUIRED) {
  if (!KERNELS.some((k) => k.series === s)) throw new Error(`lab: no cached kernel of series ${s} (run \`npm run lab:setup -- --refresh\`)`);
}
if (!KERNELS.some((k) => k.role === 'newest')) throw new Error('lab: no cached newest kernel (run `npm run lab:setup -- --refresh`)');
for (const k of KERNELS) if (!k.module) throw new Error(`lab: no module build for ${k.release} (run \`npm run lab:setup\`)`);
// Debian's bpftrace for every series but 5.10 (bullseye's is too old to matter): never skipped.
for (const k of KERNELS) if (k.series !== '5.10' && k.arch !== 'arm64' && !k.tools) throw new Error(`lab: no bpftrace tools for ${k.release} (run \`npm run lab:setup\`)`);

let out: string;
let run: LabRun;

beforeAll(async () => {
  out = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-test-'));
  // A boot holds up to 19 scenarios: 3-6 min on an idle 2-core machine, far more under load.
  run = await runLab({ kernels: KERNELS, scenarios: [...LAB_SCENARIOS], out, timeoutMs: 900_000 });
  // Time per kernel and per scenario, and the scenario x kernel table, for the CI log.
  process.stdout.write(`\n${formatLabTable(run.rows)}\n${formatLabTimes(run)}\n`);
}, 2_400_000);

afterAll(async () => {
  if (out) await fs.rm(out, { recursive: true, force: true });
});

function row(series: string, bundle: string): LabRow {
  const r = run.rows.find((x) => x.kernel.series === series && x.bundle === bundle);
  if (!r) throw new Error(`no row for ${series} ${bundle}`);
  expect(r.missing, `${series} ${bundle}`).toBeUndefined();
  return r;
}

const CASES = path.resolve(import.meta.dirname, '../../cases/lab');
const SERIES = KERNELS.filter((k) => k.arch !== 'arm64').map((k) => [k.series] as const);
const ARM64 = KERNELS.filter((k) => k.arch === 'arm64').map((k) => [k.series] as const);
// bpftrace scenarios run on the kernels the set-up got Debian's bpftrace for (every series but 5.10).
const bundlesOf = (series: string): string[] =>
  LAB_SCENARIOS.filter((s) => s.kind !== 'bpftrace' || KERNELS.some((k) => k.series === series && k.tools !== undefined)).flatMap((s) => s.bundles);
const FIXTURES = ['constrained', 'adequate', 'stopped', 'default-smp2', 'default-smp8'];
const MODULE = LAB_SCENARIOS.filter((s) => s.kind === 'module').map((s) => s.name);

describe.each(SERIES)('Linux %s under QEMU', (series) => {
  const BUNDLES = bundlesOf(series);
  it('boots once per CPU count and finishes every scenario', () => {
    const boots = run.boots.filter((b) => b.kernel.series === series);
    expect(boots.map((b) => b.smp).sort((a, b) => a - b)).toEqual(BUNDLES.includes('bt-kretprobe') ? [2, 2, 8] : [2, 8]);
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

  // The live case against the one shipped in cases/lab/<series>/, field by field: only the fields
  // drift.ts declares varying (dates, guest instants, durations, the Debian point release) may differ.
  // A case recorded by older code (no RECORDED_MARK) is compared by its verdict only, until it
  // is recorded again with `npm run lab -- --cases cases/lab`.
  it.each(BUNDLES)('%s: the live case equals the shipped reference case', async (bundle) => {
    const r = row(series, bundle);
    const live = parse(await fs.readFile(r.triage!.caseFile!, 'utf8')) as Record<string, unknown>;
    const text = await fs.readFile(path.join(CASES, series, `${bundle}.yaml`), 'utf8');
    const shipped = parse(text) as Record<string, unknown>;
    if (isRecorded(text)) expect(caseDrift(live, shipped, r.expected?.varying)).toEqual([]);
    else expect(live.expected).toEqual(shipped.expected);
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

  it.each(MODULE)('%s: the module loaded (or was refused as expected), every call held at the gate, its records in probe.jsonl', (bundle) => {
    const r = row(series, bundle);
    const o = r.module!;
    if (r.expected?.rejected === true) {
      // A refused registration: insmod failed, and the module's log line names the errno.
      expect({ registered: o.registered, errno: o.refused?.errno }).toEqual({ registered: false, errno: r.expected.errno });
      expect(o.release?.startsWith(`${series}.`)).toBe(true);
      return;
    }
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

  // Observed the same on all four (5.10.223 has the stable backport of the data_size limit):
  // each kernel's errno is asserted, so a release that changes one fails here.
  it('register_kretprobe: no maxactive cap in the C API; E2BIG, EINVAL, ENOENT for data_size 4097, do_int3, a missing symbol', () => {
    const refused = (b: string): unknown => ({ registered: row(series, b).module?.registered, errno: row(series, b).module?.refused?.errno, verdict: row(series, b).triage?.verdict });
    expect(refused('mod-data-size-4097')).toEqual({ registered: false, errno: 'E2BIG', verdict: 'setup-failure' });
    expect(refused('mod-blacklisted')).toEqual({ registered: false, errno: 'EINVAL', verdict: 'setup-failure' });
    expect(refused('mod-missing-symbol')).toEqual({ registered: false, errno: 'ENOENT', verdict: 'setup-failure' });
    const big = row(series, 'mod-maxactive-4097').module!;
    expect({ registered: big.registered, pool: big.counters.registered?.maxactive, nmissed: big.counters.end?.nmissed }).toEqual({ registered: true, pool: 4097, nmissed: 0 });
  });

  // bpftrace (issue 22): Debian's bpftrace for the series, against BT_CALLS callers held at once.
  if (bundlesOf(series).includes('bt-kretprobe')) {
    it('bpftrace kretprobe: the default pool, no miss count anywhere a user would look; the module counts every call', () => {
      const r = row(series, 'bt-kretprobe');
      const o = r.bpftrace!;
      // The model in src/kernel/history.ts, tied to the cell: the pool perf_event_open's kretprobe
      // got is defaultPool() of the release (every call held at once, so returns = the pool).
      // The upstream version (6.1.176): `uname -r` of a Debian kernel (6.1.0-50) has no patch level.
      const upstream = r.kernel.version ?? o.module.release!;
      const pool = defaultPool(upstream, undefined, 2);
      expect(pool).toBe(10);
      expect({ attached: o.output.attached?.probes, returns: o.returns, errors: o.output.errors }).toEqual({ attached: 1, returns: pool, errors: [] });
      expect({ calls: o.module.counters.end?.calls, returns: o.module.counters.end?.returns, nmissed: o.module.counters.end?.nmissed }).toEqual({ calls: BT_CALLS, returns: BT_CALLS, nmissed: 0 });
      // bpftrace prints no miss count: its only number is the returns it saw.
      expect(o.output.maps.map((m) => m.name)).toEqual(['returns']);
      // Observed on 6.1, 6.12 and 7.3: Debian's bpftrace (0.17 in bookworm, 0.23 in trixie)
      // makes no BPF link for a single kretprobe, so bpftool has no `missed` to show, even on
      // kernels whose links report one (hasChange(..., 'bpfLinkMissed') from 6.7).
      expect({ text: o.links.text.length, json: o.links.json.length }).toEqual({ text: 0, json: 0 });
      expect(o.progs.filter((p) => p.type === 'kprobe').length).toBe(1);
      expect(hasChange(upstream, 'bpfLinkMissed')).toBe(series !== '6.1');
      // The paste read as a write-up, beside the fixture's count of its calls (12 held at once):
      // no counter, but more callers than the default pool are pool misses (counters/nmissed-rose).
      expect(r.triage?.verdict).toBe('capacity-missed');
      expect(r.triage?.rules).toEqual(expect.arrayContaining(['counters/nmissed-rose', 'capacity/pool-below-estimated-overlap']));
    });
  }

  if (bundlesOf(series).includes('bt-fexit')) {
    it('bpftrace fexit: no pool, every held caller returns; a tracing link with no missed; kprobe_multi where CONFIG_FPROBE is', () => {
      const kret = row(series, 'bt-kretprobe').bpftrace!;
      const fexit = row(series, 'bt-fexit').bpftrace!;
      const multi = row(series, 'bt-multi').bpftrace!;
      // The same load: fexit sees all of it where the kretprobe saw its pool.
      // fexit has no pool: every held caller's return ran the program or, on 7.3 (PREEMPT_LAZY:
      // a preempted run blocks the program on its CPU), was skipped as a recursion miss.
      expect({ kretprobe: kret.returns, fexit: (fexit.returns ?? 0) + fexit.recursionMisses }).toEqual({ kretprobe: 10, fexit: BT_CALLS });
      if (series !== '7.3') expect({ returns: fexit.returns, recursionMisses: fexit.recursionMisses }).toEqual({ returns: BT_CALLS, recursionMisses: 0 });
      expect({ type: fexit.targetLink.json?.type, attach: fexit.targetLink.json?.tracing?.attachType, missed: linkMissed(fexit.targetLink.json) }).toEqual({ type: 'tracing', attach: 'trace_fexit', missed: undefined });
      // Debian's 6.1 has no CONFIG_FPROBE: bpftrace attaches one perf kretprobe per function.
      // 6.12: one kprobe_multi link, fprobe's pool of 2 functions x 2 x 2 CPUs = 8, missed 4.
      // 7.3 (fprobe on the function-graph stack since 6.14): no pool, missed 0.
      const want = { '6.1': { type: undefined, returns: 10, missed: undefined }, '6.12': { type: 'kprobe_multi', returns: 8, missed: 4 } }[series] ?? { type: 'kprobe_multi', returns: BT_CALLS, missed: 0 };
      expect({ type: multi.targetLink.json?.type, returns: multi.returns, missed: linkMissed(multi.targetLink.json) }).toEqual(want);
      for (const b of ['bt-kretprobe', 'bt-fexit', 'bt-multi']) expect(row(series, b).bpftrace!.stepTimeouts, `${b}: no guest step timed out`).toEqual([]);
    });
  }

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

// The second architecture (issue 22, item 5): Debian's arm64 6.1 under qemu-system-aarch64
// (-M virt -cpu max, TCG), the module cross-built with gcc-12-aarch64-linux-gnu. The module
// scenarios only; each is checked against the same expectation as on amd64 and its shipped case
// (cases/lab/6.1-arm64/). Observed 2026-12-03: every cell equals amd64 6.1's.
describe.each(ARM64)('Linux %s (arm64) under QEMU', (series) => {
  it('boots once with 2 possible CPUs and finishes every module scenario', () => {
    const boots = run.boots.filter((b) => b.kernel.series === series);
    expect(boots.map((b) => b.smp)).toEqual([2]);
    for (const b of boots) expect(b.problems, b.consoleLog).toEqual([]);
    expect(run.rows.filter((r) => r.kernel.series === series).map((r) => r.bundle)).toEqual(MODULE.flatMap((m) => LAB_SCENARIOS.find((s) => s.name === m)!.bundles));
  });

  it.each(MODULE)('%s shows what the kernel is expected to show, and equals its shipped case', async (bundle) => {
    const r = row(series, bundle);
    expect(r.module?.release, 'an arm64 kernel answered').toMatch(/^6\.1\..*-arm64$/);
    expect(labMismatches(r)).toEqual([]);
    expect(r.triage?.verdict).toBe(r.expected?.verdict);
    for (const rule of r.expected?.rules ?? []) expect(r.triage?.rules, `${bundle}: rule ${rule} fires`).toContain(rule);
    const live = parse(await fs.readFile(r.triage!.caseFile!, 'utf8')) as Record<string, unknown>;
    const text = await fs.readFile(path.join(CASES, series, `${bundle}.yaml`), 'utf8');
    expect(isRecorded(text)).toBe(true);
    expect(caseDrift(live, parse(text) as Record<string, unknown>, r.expected?.varying)).toEqual([]);
  });

  // register_kretprobe works on arm64 (Debian's arm64 6.1 has CONFIG_KRETPROBES). Debian's
  // arm64 6.1 is not preemptible (no CONFIG_PREEMPTION; amd64's has it through PREEMPT_DYNAMIC),
  // so before the change of 6.2 (in the 6.1.3 stable release) its pool would be the possible
  // CPUs, 2: the 10 seen here is that change alone, max(10, 2 x possible CPUs).
  it('default pool (maxactive 0) is 10 with 2 possible CPUs on a non-preemptible kernel: the 6.1.3 change, not the config', async () => {
    const r = row(series, 'mod-default');
    expect((await kernelTraits(r.kernel)).preemption).toBe(false);
    expect(r.module?.possibleCpus).toBe('0-1');
    expect(r.module?.counters.registered?.maxactive).toBe(10);
    expect({ nmissed: r.module?.counters.end?.nmissed, returns: r.module?.counters.end?.returns }).toEqual({ nmissed: 0, returns: 4 });
    expect(r.triage?.verdict).toBe('fully-observed');
  });

  it('pool misses, entry-handler re-entry and the errnos of register_kretprobe are those of amd64', () => {
    const end = (b: string): Record<string, unknown> | undefined => row(series, b).module?.counters.end;
    expect({ nmissed: end('mod-constrained')?.nmissed, returns: end('mod-constrained')?.returns }).toEqual({ nmissed: 2, returns: 2 });
    expect({ nmissed: end('mod-recursion')?.nmissed, entries: end('mod-recursion')?.entries }).toEqual({ nmissed: 1, entries: 2 });
    expect({ nmissed: end('mod-reenter')?.nmissed, kp_nmissed: end('mod-reenter')?.kp_nmissed }).toEqual({ nmissed: 0, kp_nmissed: 3 });
    const errno = (b: string): unknown => row(series, b).module?.refused?.errno;
    // mod-blacklisted probes do_debug_exception, arm64's NOKPROBE_SYMBOL (do_int3 is x86's).
    expect({ dataSize: errno('mod-data-size-4097'), blacklisted: errno('mod-blacklisted'), missing: errno('mod-missing-symbol') }).toEqual({ dataSize: 'E2BIG', blacklisted: 'EINVAL', missing: 'ENOENT' });
    expect(row(series, 'mod-maxactive-4097').module?.counters.registered?.maxactive).toBe(4097);
  });
});
