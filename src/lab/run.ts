import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { splitConsole } from './console.js';
import { bootGuest, buildInitramfs, untar } from './guest.js';
import type { LabKernel } from './kernels.js';
import { observeBundle, type LabObservation } from './observe.js';
import { expectationFor, planBoots, scenariosForArch, type LabExpectation, type LabScenario } from './scenarios.js';
import { loadRules } from '../index.js';
import { triageBpftraceBundle, triageBundle, triageModuleBundle, type LabTriage } from './triage.js';
import { kernelTraits } from './kernels.js';
import { observeModuleBundle, type ModuleObservation } from './moduleObserve.js';
import { linkMissed, observeBpftraceBundle, type BpftraceObservation } from './bpftraceObserve.js';

export interface LabOptions {
  kernels: LabKernel[];
  scenarios: LabScenario[];
  /** Bundles, cases and console logs go to OUT/<kernel release>/. */
  out: string;
  /** Per boot; TCG boots take 10-40 s on a 2-core machine. */
  timeoutMs?: number;
  /** Kernels booted at once (default 2: the lab's QEMU is single-threaded TCG, one per core). */
  parallel?: number;
  progress?: (line: string) => void;
}

/** One bundle of one kernel: what the kernel showed, the verdict, what was expected. */
export interface LabRow {
  scenario: string;
  bundle: string;
  kernel: LabKernel;
  smp: number;
  kind: 'tracefs' | 'module' | 'bpftrace';
  /** A bpftrace bundle's observation (its module part is in `module` too). */
  bpftrace?: BpftraceObservation;
  /** A tracefs bundle's observation. */
  observation: LabObservation | undefined;
  /** A module bundle's observation. */
  module: ModuleObservation | undefined;
  triage: LabTriage | undefined;
  expected: LabExpectation | undefined;
  /** Why the bundle is not there (the guest failed or stopped early). */
  missing: string | undefined;
}

export interface LabBoot {
  kernel: LabKernel;
  smp: number;
  ms: number;
  done: boolean;
  problems: string[];
  consoleLog: string;
}

export interface LabRun {
  rows: LabRow[];
  boots: LabBoot[];
  /** Wall time per kernel: every boot of it plus the host's triage of its bundles. */
  kernelMs: Map<LabKernel, number>;
  /** Wall time of the whole run (kernels overlap: see LabOptions.parallel). */
  wallMs: number;
}

/** Boot each kernel once per CPU count and turn every bundle the guest sent into a row. */
export async function runLab(opts: LabOptions): Promise<LabRun> {
  const say = opts.progress ?? (() => {});
  const rows: LabRow[] = [];
  const boots: LabBoot[] = [];
  const kernelMs = new Map<LabKernel, number>();
  const runStart = Date.now();
  const rules = await loadRules();
  const date = new Date().toISOString().slice(0, 10);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-'));
  try {
    const perKernel = new Map<LabKernel, { rows: LabRow[]; boots: LabBoot[] }>();
    const runKernel = async (kernel: LabKernel): Promise<void> => {
      const rows: LabRow[] = [];
      const boots: LabBoot[] = [];
      perKernel.set(kernel, { rows, boots });
      const kernelStart = Date.now();
      const kdir = path.join(opts.out, kernel.release);
      await fs.mkdir(kdir, { recursive: true });
      const traits = await kernelTraits(kernel);
      for (const boot of planBoots(opts.scenarios)) {
        // bpftrace scenarios exist for the kernels the set-up got Debian's bpftrace for (not 5.10).
        if (boot.tools && kernel.tools === undefined) continue;
        // A second architecture runs the module scenarios only (scenarios.ts, scenariosForArch).
        const scenarios = scenariosForArch(boot.scenarios, kernel.arch);
        if (scenarios.length === 0) continue;
        // Without a module build the module scenarios cannot run: each becomes a failed row below.
        const runnable = scenarios.filter((s) => s.kind === 'tracefs' || kernel.module !== undefined);
        const guestNames = [...new Set(runnable.map((s) => s.guest))];
        const tag = `smp${boot.smp}${boot.tools ? '-bpftrace' : ''}`;
        const initrd = path.join(work, `initramfs-${kernel.release}-${tag}.cpio`);
        await fs.writeFile(initrd, await buildInitramfs({ scenarios: guestNames, defaultName: `default-smp${boot.smp}`, tools: boot.tools ? kernel.tools : undefined }, kernel));
        say(`boot ${kernel.release} -smp ${boot.smp}: ${runnable.map((s) => s.name).join(' ')}`);
        // The tools' initramfs (200 MB+) lives in guest RAM, and bpftrace loads LLVM.
        const consoleLog = path.join(kdir, `console-${tag}.log`);
        const result = await bootGuest({ kernel, initrd, smp: boot.smp, timeoutMs: (opts.timeoutMs ?? 300_000) * (boot.tools ? 2 : 1), memMb: boot.tools ? 2048 : 512, liveLog: consoleLog });
        await fs.rm(initrd, { force: true });
        await fs.writeFile(consoleLog, result.console);
        const guest = splitConsole(result.console);
        const problems = [...guest.problems];
        if (result.timedOut) problems.push(`QEMU timed out after ${Math.round(result.ms / 1000)} s`);
        if (!guest.done) problems.push(`the guest did not finish its scenarios (console in ${consoleLog})`);
        boots.push({ kernel, smp: boot.smp, ms: result.ms, done: guest.done, problems, consoleLog });
        say(`  boot took ${(result.ms / 1000).toFixed(1)} s${problems.length ? `; ${problems.join('; ')}` : ''}`);
        for (const scenario of scenarios) {
          for (const bundle of scenario.bundles) {
            const row: LabRow = {
              scenario: scenario.name,
              bundle,
              kind: scenario.kind,
              kernel,
              smp: boot.smp,
              observation: undefined,
              module: undefined,
              triage: undefined,
              expected: expectationFor(bundle, traits, boot.smp),
              missing: undefined,
            };
            rows.push(row);
            if (scenario.kind === 'module' && kernel.module === undefined) {
              row.missing = `no lab module built for ${kernel.release} (lab-setup builds one per cached kernel; --kernel needs --module-build DIR)`;
              continue;
            }
            const tgz = guest.bundles.get(bundle);
            if (!tgz) {
              row.missing = `the guest sent no bundle ${bundle}`;
              continue;
            }
            const dir = path.join(kdir, bundle);
            await fs.rm(dir, { recursive: true, force: true });
            await untar(tgz, kdir);
            const ctx = { kernel, rules, expected: row.expected, date };
            let elapsedNs: number | undefined;
            try {
              if (scenario.kind === 'bpftrace') {
                row.bpftrace = await observeBpftraceBundle(dir);
                row.module = row.bpftrace.module;
                elapsedNs = row.module.elapsedNs;
                row.triage = await triageBpftraceBundle(row.bpftrace, ctx);
              } else if (scenario.kind === 'module') {
                row.module = await observeModuleBundle(dir);
                elapsedNs = row.module.elapsedNs;
                row.triage = await triageModuleBundle(row.module, ctx);
              } else {
                row.observation = await observeBundle(dir);
                elapsedNs = row.observation.elapsedNs;
                row.triage = await triageBundle(row.observation, ctx);
              }
            } catch (err) {
              // One bad bundle (a registration that failed before any snapshot) fails its row only.
              row.missing = `no case from bundle ${bundle}: ${(err as Error).message}`;
            }
            const secs = elapsedNs === undefined ? '?' : (elapsedNs / 1e9).toFixed(1);
            say(`  ${kernel.release} ${bundle}: ${secs} s in the guest`);
          }
        }
      }
      kernelMs.set(kernel, Date.now() - kernelStart);
      say(`kernel ${kernel.release}: ${((Date.now() - kernelStart) / 1000).toFixed(1)} s`);
    };
    // Kernels boot side by side, `parallel` at a time (one single-threaded TCG QEMU per core).
    const queue = [...opts.kernels];
    const lanes = Array.from({ length: Math.max(1, Math.min(opts.parallel ?? 2, queue.length)) }, async () => {
      for (let k = queue.shift(); k !== undefined; k = queue.shift()) await runKernel(k);
    });
    await Promise.all(lanes);
    for (const kernel of opts.kernels) {
      const got = perKernel.get(kernel);
      if (got) {
        rows.push(...got.rows);
        boots.push(...got.boots);
      }
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return { rows, boots, kernelMs, wallMs: Date.now() - runStart };
}

/** Every way a row differs from what the kernel is expected to show; empty when it matches. */
export function labMismatches(row: LabRow): string[] {
  if (row.missing) return [row.missing];
  if (row.kind === 'bpftrace') return bpftraceMismatches(row);
  if (row.kind === 'module') return moduleMismatches(row);
  const o = row.observation;
  const e = row.expected;
  if (!o || !e) return [`no expectation for bundle ${row.bundle}`];
  const out: string[] = [...o.problems];
  const check = (what: string, got: unknown, want: unknown): void => {
    if (want !== undefined && got !== want) out.push(`${what}: expected ${String(want)}; got ${String(got)}`);
  };
  check('return hits', o.returnHits, e.returnHits);
  check('return misses', o.returnMisses, e.returnMisses);
  check('entry hits', o.entryHits, e.entryHits);
  check('entry records', o.entries, e.entries);
  check('return records', o.returns, e.returns);
  check('effective maxactive', o.maxactive, e.maxactive);
  check('error_log reason', o.errorReason, e.errorReason);
  if (e.errorReason === undefined && e.rejected !== true) {
    check('registered', o.registered, true);
    check('foreign pipe_read records', o.foreign, 0);
    if (o.gated && !o.gated.all_blocked) out.push('not every reader was blocked in pipe_read before the snapshot');
  } else check('registered', o.registered, false);
  const t = row.triage;
  if (t?.verdict !== undefined && t.verdict !== e.verdict) {
    out.push(`verdict: expected ${e.verdict}; got ${t.verdict}${t.missing.length ? ` (missing: ${t.missing.join(', ')})` : ''}`);
  }
  return out;
}

/** A module row against its expectation: every counter of the module, its records, the verdict. */
function moduleMismatches(row: LabRow): string[] {
  const o = row.module;
  const e = row.expected;
  if (!o || !e) return [`no expectation for bundle ${row.bundle}`];
  const out: string[] = [...o.problems];
  const check = (what: string, got: unknown, want: unknown): void => {
    if (want !== undefined && got !== want) out.push(`${what}: expected ${String(want)}; got ${String(got)}`);
  };
  if (e.rejected === true) {
    check('registered', o.registered, false);
    check('register_kretprobe errno', o.refused?.errno, e.errno);
  } else if (!o.registered) out.push(`the module did not load (register_kretprobe ${o.refused?.errno ?? '?'}: ${o.refused?.insmod ?? '?'})`);
  const end = o.counters.end ?? {};
  for (const [k, want] of Object.entries(e.module ?? {})) check(`end counter ${k}`, end[k], want);
  if (e.records) {
    check('entry records', o.records.entry, e.records.entry);
    check('return records', o.records.return, e.records.return);
    check('filtered records', o.records.filtered, e.records.filtered);
  }
  if (o.registered && o.gated && !o.gated.all_blocked) out.push('not every call was held at the gate before the snapshot');
  const t = row.triage;
  if (t?.verdict !== undefined && t.verdict !== e.verdict) {
    out.push(`verdict: expected ${e.verdict}; got ${t.verdict}${t.missing.length ? ` (missing: ${t.missing.join(', ')})` : ''}`);
  }
  return out;
}

/** A bpftrace row against its expectation: what bpftrace and bpftool showed, and the module's truth. */
function bpftraceMismatches(row: LabRow): string[] {
  const o = row.bpftrace;
  const e = row.expected?.bpftrace;
  if (!o || !e) return [`no expectation for bundle ${row.bundle}`];
  const out: string[] = [...o.problems, ...o.module.problems];
  const check = (what: string, got: unknown, want: unknown): void => {
    if (want !== undefined && got !== want) out.push(`${what}: expected ${String(want)}; got ${String(got)}`);
  };
  const end = o.module.counters.end ?? {};
  check('module calls (truth)', end.calls, e.calls);
  check('module returns (truth)', end.returns, e.calls);
  check('module nmissed', end.nmissed, 0);
  if (!o.module.gated?.all_blocked) out.push('not every call was held at the gate while bpftool ran');
  if (e.attached !== undefined) check('bpftrace Attaching N probes', o.output.attached?.probes, e.attached);
  else check('bpftrace printed Attaching N probes', o.output.attached !== undefined, true);
  check('bpftrace errors', o.output.errors.length, 0);
  check('bpftrace @returns', o.returns, e.returns);
  if (e.recursionIdentity) {
    check('bpftool prog show after the release captured', o.progsReleased !== undefined, true);
    check('@returns + recursion_misses (every held return seen or skipped)', (o.returns ?? 0) + o.recursionMisses, e.calls);
  }
  const link = o.targetLink.json;
  if (e.link === 'none') check('a BPF link on krtfix_target', link === undefined && o.targetLink.text === undefined, true);
  else {
    check('the BPF link bpftrace made (bpftool -j link show)', link?.type, e.link.type);
    check('the BPF link bpftrace made (bpftool link show)', o.targetLink.text?.type, e.link.type);
    check('link missed in JSON', linkMissed(link), e.link.missed);
    // Plain output prints missed only when nonzero: an absent word reads 0 (a tracing link has none at all).
    check('link missed printed (text)', linkMissed(o.targetLink.text), e.link.type === 'tracing' ? undefined : (e.link.missed ?? 0));
  }
  return out;
}
