import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkMissed, observeBpftraceBundle, type BpftraceObservation } from '../../src/lab/bpftraceObserve.js';
import { BUNDLES_ARCHIVE, KERNEL_FILE, tar, type RecordedKernel } from '../../src/lab/cases.js';
import { BT_CALLS, BT_MULTI_FUNCS } from '../../src/lab/scenarios.js';
import { bpfReturnPool, hasChange } from '../../src/kernel/history.js';

// The kernel-history rules about BPF return probes (src/kernel/history.ts: bpfReturnPool, the
// `bpfLinkMissed` change, `fprobeWithoutPool`) against the lab's recorded cells (issue 22): the
// raw bpftrace bundles shipped in cases/lab/<series>/bundles.tar.gz, read with the lab's own
// observer (the project's bpftrace/bpftool parsers). A model that disagrees with what the kernels
// showed fails here, offline. Every series with a Debian bpftrace (6.1, 6.12, 7.3) must ship all
// three bundles: none is skipped.
const ROOT = path.resolve(import.meta.dirname, '../../cases/lab');
const SERIES = ['6.1', '6.12', '7.3'];
const BUNDLES = ['bt-kretprobe', 'bt-fexit', 'bt-multi'];

let work: string;
const cells = new Map<string, { kernel: RecordedKernel; obs: BpftraceObservation }>();

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-bpf-model-'));
  for (const series of SERIES) {
    const dir = path.join(work, series);
    await fs.mkdir(dir);
    await tar(['-xzf', path.join(ROOT, series, BUNDLES_ARCHIVE), '-C', dir]);
    const kernel = JSON.parse(await fs.readFile(path.join(dir, KERNEL_FILE), 'utf8')) as RecordedKernel;
    for (const b of BUNDLES) {
      if (await fs.stat(path.join(dir, b)).then(() => true, () => false)) cells.set(`${series}/${b}`, { kernel, obs: await observeBpftraceBundle(path.join(dir, b)) });
    }
  }
}, 60_000);

afterAll(async () => {
  if (work) await fs.rm(work, { recursive: true, force: true });
});

function cell(series: string, bundle: string): { kernel: RecordedKernel; obs: BpftraceObservation; release: string; cpus: number } {
  const c = cells.get(`${series}/${bundle}`);
  if (!c) throw new Error(`cases/lab/${series}/${BUNDLES_ARCHIVE} has no bundle ${bundle}/`);
  // The upstream version the set-up recorded (6.1.176): `uname -r` of a Debian 6.1 says 6.1.0-50.
  const release = c.kernel.version ?? c.kernel.release;
  const cpus = c.kernel.smp[bundle];
  if (cpus === undefined) throw new Error(`${KERNEL_FILE} of ${series} has no -smp for ${bundle}`);
  expect(c.obs.problems, `${series} ${bundle}`).toEqual([]);
  // The module's own kretprobe (maxactive 32) saw every call return: the truth the tracer is held to.
  expect({ calls: c.obs.module.counters.end?.calls, returns: c.obs.module.counters.end?.returns, nmissed: c.obs.module.counters.end?.nmissed }).toEqual({ calls: BT_CALLS, returns: BT_CALLS, nmissed: 0 });
  expect(c.obs.module.gated?.all_blocked, `${series} ${bundle}: every caller held at once`).toBe(true);
  return { ...c, release, cpus };
}

/** What a tracer with this pool sees of BT_CALLS callers held at once: the pool's worth, or all without one. */
const seen = (pool: number | null | undefined): number | undefined => (pool === undefined ? undefined : pool === null ? BT_CALLS : Math.min(BT_CALLS, pool));

describe.each(SERIES)('BPF return probes on Linux %s: the model against the recorded cell', (series) => {
  it('perf_event_open kretprobe (bt-kretprobe): the default pool, no link, so no missed anywhere', () => {
    const { obs, release, cpus, kernel } = cell(series, 'bt-kretprobe');
    const pool = bpfReturnPool('perf-kretprobe', release, { preemption: kernel.traits.preemption, possibleCpus: cpus });
    expect(pool).toBeTypeOf('number');
    expect(pool! < BT_CALLS, 'the load exceeds the pool').toBe(true);
    expect(obs.returns).toBe(seen(pool));
    expect({ text: obs.links.text.length, json: obs.links.json.length }).toEqual({ text: 0, json: 0 });
  });

  it('fexit (bt-fexit): a trampoline, no pool: every held caller returns; the tracing link has no missed', () => {
    const { obs, release, kernel } = cell(series, 'bt-fexit');
    expect(bpfReturnPool('fexit', release, {})).toBeNull();
    // No pool: every return ran the program, or (a kernel that preempts kernel code: a run
    // preempted inside the program blocks it on that CPU) was skipped as a recursion miss.
    expect((obs.returns ?? 0) + obs.recursionMisses).toBe(BT_CALLS);
    expect(kernel.traits.preemptMode, `${KERNEL_FILE} of ${series} records the preemption model`).toBeDefined();
    if (kernel.traits.preemptMode === 'voluntary' || kernel.traits.preemptMode === 'none') expect({ returns: obs.returns, recursionMisses: obs.recursionMisses }).toEqual({ returns: BT_CALLS, recursionMisses: 0 });
    expect(obs.targetLink.json?.type).toBe('tracing');
    expect(obs.targetLink.json?.tracing?.attachType).toBe('trace_fexit');
    expect(linkMissed(obs.targetLink.json)).toBeUndefined();
    expect(linkMissed(obs.targetLink.text)).toBeUndefined();
  });

  it('several kretprobe targets (bt-multi): kprobe_multi with CONFIG_FPROBE (fprobe pool until 6.14, missed from 6.7), else one perf kretprobe each', () => {
    const { obs, release, cpus, kernel } = cell(series, 'bt-multi');
    expect(kernel.traits.fprobe, `${KERNEL_FILE} of ${series} records CONFIG_FPROBE`).toBeTypeOf('boolean');
    if (!kernel.traits.fprobe) {
      // No fprobe, no kprobe_multi: bpftrace falls back to one perf kretprobe per function.
      const pool = bpfReturnPool('perf-kretprobe', release, { preemption: kernel.traits.preemption, possibleCpus: cpus });
      expect({ attached: obs.output.attached?.probes, returns: obs.returns, links: obs.links.json.length }).toEqual({ attached: BT_MULTI_FUNCS, returns: seen(pool), links: 0 });
      return;
    }
    const link = obs.targetLink.json;
    expect({ type: link?.type, funcs: link?.multi?.funcCnt }).toEqual({ type: 'kprobe_multi', funcs: BT_MULTI_FUNCS });
    const pool = bpfReturnPool('kprobe-multi', release, { possibleCpus: cpus, functions: BT_MULTI_FUNCS });
    expect(pool).not.toBeUndefined();
    expect(obs.returns).toBe(seen(pool));
    // The link's missed exists from 6.7 and, here, is exactly the calls the pool could not take.
    const hasMissed = hasChange(release, 'bpfLinkMissed');
    expect(hasMissed).toBeTypeOf('boolean');
    expect(linkMissed(link)).toBe(hasMissed ? BT_CALLS - seen(pool)! : undefined);
  });
});

describe('where the releases differ (issue 22), as the cells show it', () => {
  it('kprobe_multi: 6.1 has none; 6.12 pools functions x 2 x CPUs and misses the rest; 7.3 has no pool', () => {
    const r = (s: string) => ({ type: cell(s, 'bt-multi').obs.targetLink.json?.type, returns: cell(s, 'bt-multi').obs.returns, missed: linkMissed(cell(s, 'bt-multi').obs.targetLink.json) });
    expect(r('6.1')).toEqual({ type: undefined, returns: 10, missed: undefined });
    expect(r('6.12')).toEqual({ type: 'kprobe_multi', returns: 8, missed: 4 });
    expect(r('7.3')).toEqual({ type: 'kprobe_multi', returns: 12, missed: 0 });
  });
});

describe('bpfReturnPool, the model itself', () => {
  it.each([
    ['perf-kretprobe', '6.1.176', {}, 2, 10],
    ['perf-kretprobe', '5.10.223', { preemption: false }, 2, 2],
    ['perf-kretprobe', '6.1.0-50-amd64', {}, 2, undefined],
    ['kprobe-multi', '6.12.95', { functions: 2 }, 2, 8],
    ['kprobe-multi', '6.12.95', { functions: 1 }, 8, 16],
    ['kprobe-multi', '6.14.0', { functions: 2 }, 2, null],
    ['kprobe-multi', '7.3.4', { functions: 2 }, 2, null],
    ['kprobe-multi', '6.12.95', { functions: 2 }, undefined, undefined],
    ['fexit', '6.1.176', {}, 2, null],
  ] as const)('%s on %s %j, %s CPUs: %s', (how, release, opts, cpus, want) => {
    expect(bpfReturnPool(how, release, { ...opts, possibleCpus: cpus })).toBe(want);
  });
});
