import { describe, expect, it } from 'vitest';
import { parseKernelManifest } from '../../src/lab/kernels.js';
import { parseModuleCounters } from '../../src/lab/moduleObserve.js';
import { expectationFor, expectedDefaultMaxactive, LAB_SCENARIOS, scenariosForArch, type KernelTraits } from '../../src/lab/scenarios.js';
import { GUEST_ARCH } from '../../src/lab/guest.js';
import { caseDrift, isVarying } from '../../src/lab/drift.js';

const k = (version: [number, number, number], preemption: boolean | undefined, fprobeEvents = false): KernelTraits => ({ version, preemption, fprobeEvents });

describe('expected default pool (kernel-history.md §2)', () => {
  it.each([
    ['5.10 not preemptible: possible CPUs', k([5, 10, 223], false), 2, 2],
    ['5.10 not preemptible, 8 CPUs', k([5, 10, 223], false), 8, 8],
    ['5.10 preemptible', k([5, 10, 223], true), 2, 10],
    ['6.1.2 not preemptible (before the stable fix)', k([6, 1, 2], false), 2, 2],
    ['6.1.3 (the stable fix)', k([6, 1, 3], false), 2, 10],
    ['6.12, 8 CPUs', k([6, 12, 95], false), 8, 16],
    ['unknown config before 6.2', k([5, 15, 0], undefined), 2, undefined],
  ] as const)('%s', (_name, traits, cpus, want) => {
    expect(expectedDefaultMaxactive(traits, cpus)).toBe(want);
  });

  it('mod-default misses on 5.10 and not on 6.x: the difference is the expectation', () => {
    expect(expectationFor('mod-default', k([5, 10, 223], false))).toMatchObject({ verdict: 'capacity-missed', module: { nmissed: 2, entries: 2, maxactive: 2 } });
    expect(expectationFor('mod-default', k([6, 1, 176], true))).toMatchObject({ verdict: 'fully-observed', module: { nmissed: 0, entries: 4, maxactive: 10 } });
  });

  it('module rounds: filtered calls hand their instance back, missed ones skip the entry handler', () => {
    expect(expectationFor('mod-filter-overflow', k([6, 1, 176], true))?.module).toEqual({ nmissed: 2, kp_nmissed: 0, maxactive: 2, calls: 5, entries: 3, returns: 2, filtered: 1 });
    expect(expectationFor('mod-recursion', k([6, 1, 176], true))?.module).toMatchObject({ nmissed: 1, calls: 1, entries: 2, returns: 2 });
    expect(expectationFor('mod-stopped', k([6, 1, 176], true))?.records).toEqual({ entry: 3, return: 0, filtered: 0 });
  });

  it('fprobe exits: rejected without fprobe events, pooled until 6.13, f2 rejected from 6.14', () => {
    expect(expectationFor('fprobe-f2', k([6, 1, 176], true, false))).toEqual({ verdict: 'setup-failure', rejected: true });
    expect(expectationFor('fprobe-f2', k([6, 12, 95], true, true))).toMatchObject({ maxactive: 2, returns: 2 });
    expect(expectationFor('fprobe-f2', k([7, 3, 4], true, true))).toEqual({ verdict: 'setup-failure', rejected: true, errorReason: 'Invalid maxactive number' });
    expect(expectationFor('fprobe-default', k([7, 3, 4], true, true))).toMatchObject({ verdict: 'fully-observed', returns: 3 });
  });
});

describe('module counters and the kernel manifest', () => {
  it('reads the module counters file', () => {
    const m = parseModuleCounters('epoch mod-x-1\nnmissed 2\nkp_nmissed 0\n\nmaxactive 10\n');
    expect([...m]).toEqual([['epoch', 'mod-x-1'], ['nmissed', '2'], ['kp_nmissed', '0'], ['maxactive', '10']]);
  });

  it('reads 3-column and 7-column manifest lines', () => {
    const ks = parseKernelManifest('6.1\t6.1.0-50-amd64\t/k/vmlinuz\n7.3\t7.3.4+deb13-amd64\t/k/v73\t/m/krtfix.ko\t7.3.4\ttrixie-backports\tnewest\n', 'kernels.tsv');
    expect(ks).toEqual([
      { series: '6.1', release: '6.1.0-50-amd64', image: '/k/vmlinuz' },
      { series: '7.3', release: '7.3.4+deb13-amd64', image: '/k/v73', module: '/m/krtfix.ko', version: '7.3.4', suite: 'trixie-backports', role: 'newest' },
    ]);
  });

  it('reads the arm64 manifest: arch and the guest busybox in columns 9 and 10 (lab-setup-arm64.sh)', () => {
    const line = '6.1-arm64\t6.1.0-50-arm64\t/a/vmlinuz\t/a/krtfix.ko\t6.1.176\tbookworm\tseries\t-\tarm64\t/a/busybox\n';
    expect(parseKernelManifest(line, 'kernels.tsv')).toEqual([
      { series: '6.1-arm64', release: '6.1.0-50-arm64', image: '/a/vmlinuz', module: '/a/krtfix.ko', version: '6.1.176', suite: 'bookworm', role: 'series', arch: 'arm64', busybox: '/a/busybox' },
    ]);
  });

  it('refuses an architecture the lab cannot boot, with its line', () => {
    expect(() => parseKernelManifest('6.1\t6.1.0-50-amd64\t/k/vmlinuz\t-\t6.1.176\tbookworm\tseries\t-\tarmhf\n', 'kernels.tsv')).toThrow(/kernels.tsv:1:1.*armhf/);
  });

  it('arm64 runs the module scenarios only; amd64 every scenario', () => {
    const all = [...LAB_SCENARIOS];
    expect(scenariosForArch(all, 'arm64').map((s) => s.kind)).toEqual(all.filter((s) => s.kind === 'module').map(() => 'module'));
    expect(scenariosForArch(all, 'arm64').length).toBe(13);
    expect(scenariosForArch(all, undefined)).toEqual(all);
  });

  it('boots an arm64 guest with qemu-system-aarch64 -M virt -cpu max on ttyAMA0', () => {
    expect(GUEST_ARCH.arm64).toMatchObject({ qemu: 'qemu-system-aarch64', qemuPackage: 'qemu-system-arm', console: 'ttyAMA0' });
    expect(GUEST_ARCH.arm64.machine.slice(0, 3)).toEqual(['-M', 'virt', '-cpu']);
    expect(GUEST_ARCH.amd64).toMatchObject({ qemu: 'qemu-system-x86_64', console: 'ttyS0', machine: [] });
  });

  it('refuses a manifest line without an image', () => {
    expect(() => parseKernelManifest('6.1\t6.1.0\n', 'kernels.tsv')).toThrow(/kernels.tsv:1:1/);
  });
});

describe('collector --module-dir (the lab module\'s counters in a bundle)', () => {
  it('copies DIR/counters as module_counters and needs no --event', async () => {
    const { execFileSync } = await import('node:child_process');
    const { promises: fs } = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-moddir-'));
    try {
      await fs.mkdir(path.join(root, 'sys/kernel/debug/krtfix'), { recursive: true });
      await fs.writeFile(path.join(root, 'sys/kernel/debug/krtfix/counters'), 'epoch e-1\nnmissed 2\nkp_nmissed 0\n');
      await fs.mkdir(path.join(root, 'proc/sys/kernel'), { recursive: true });
      await fs.writeFile(path.join(root, 'proc/sys/kernel/osrelease'), '6.1.0-50-amd64\n');
      const out = path.join(root, 'bundle');
      execFileSync('sh', ['collector/collect.sh', 'snapshot', 'end', '--module-dir', '/sys/kernel/debug/krtfix', '--symbol', 'krtfix_target', '--root', root, '--out', out], { stdio: 'pipe' });
      expect(await fs.readFile(path.join(out, 'end/module_counters'), 'utf8')).toBe('epoch e-1\nnmissed 2\nkp_nmissed 0\n');
      expect(await fs.readFile(path.join(out, 'end/manifest'), 'utf8')).toContain('module_dir=/sys/kernel/debug/krtfix\n');
    } finally {
      await fs.rm(root, { recursive: true, force: true });
    }
  });
});

describe('case drift (src/lab/drift.ts)', () => {
  const base = { id: 'lab-6-1-x', source: 'lab, 2026-12-01', kernel: { release: '6.1.0-50-amd64', possible_cpus: 2 }, concurrency: { observed_high_water: 3, observed_high_water_at_ns: 100 }, counters: { end: { nmissed: 0 } }, coverage: { clones: [] } };
  it('ignores only the declared varying fields', () => {
    const live = { ...base, source: 'lab, 2026-12-02', kernel: { release: '6.1.0-51-amd64', possible_cpus: 2 }, concurrency: { observed_high_water: 3, observed_high_water_at_ns: 999 } };
    expect(caseDrift(live, base)).toEqual([]);
    expect(isVarying('concurrency.observed_demand_high_water_at_ns')).toBe(true);
    expect(isVarying('concurrency.observed_demand_high_water')).toBe(false);
  });
  it('names every other field that differs, appears or disappears', () => {
    const live = { ...base, concurrency: { observed_high_water: 1, observed_high_water_at_ns: 100 }, counters: { end: { nmissed: 0, hits: 3 } }, coverage: {} };
    expect(caseDrift(live, base)).toEqual([
      'concurrency.observed_high_water: shipped 3; live 1',
      'counters.end.hits: shipped (absent); live 3',
      'coverage: shipped (absent); live "{}"',
      'coverage.clones: shipped "[]"; live (absent)',
    ]);
  });
});

describe('module registration failures: the expectation per kernel (kernel-facts.md §1)', () => {
  it.each([[k([5, 10, 223], false)], [k([6, 1, 176], true)], [k([6, 12, 95], false)], [k([7, 3, 4], false)]])('%o', (traits) => {
    expect(expectationFor('mod-data-size-4097', traits)).toMatchObject({ verdict: 'setup-failure', rejected: true, errno: 'E2BIG' });
    expect(expectationFor('mod-blacklisted', traits)).toMatchObject({ verdict: 'setup-failure', errno: 'EINVAL' });
    expect(expectationFor('mod-missing-symbol', traits)).toMatchObject({ verdict: 'setup-failure', errno: 'ENOENT' });
    // The C API has no maxactive cap: 4097 (one past tracefs's 4096) is the pool it gets.
    expect(expectationFor('mod-maxactive-4097', traits)).toMatchObject({ verdict: 'fully-observed', module: { maxactive: 4097, nmissed: 0 } });
  });
});
