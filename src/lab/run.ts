import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { splitConsole } from './console.js';
import { bootGuest, buildInitramfs, untar } from './guest.js';
import type { LabKernel } from './kernels.js';
import { observeBundle, type LabObservation } from './observe.js';
import { LAB_EXPECTED, planBoots, type LabExpectation, type LabScenario } from './scenarios.js';
import { loadRules } from '../index.js';
import { triageBundle, type LabTriage } from './triage.js';

export interface LabOptions {
  kernels: LabKernel[];
  scenarios: LabScenario[];
  /** Bundles, cases and console logs go to OUT/<kernel release>/. */
  out: string;
  /** Per boot; TCG boots take 10-40 s on a 2-core machine. */
  timeoutMs?: number;
  progress?: (line: string) => void;
}

/** One bundle of one kernel: what the kernel showed, the verdict, what was expected. */
export interface LabRow {
  scenario: string;
  bundle: string;
  kernel: LabKernel;
  smp: number;
  observation: LabObservation | undefined;
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
}

/** Boot each kernel once per CPU count and turn every bundle the guest sent into a row. */
export async function runLab(opts: LabOptions): Promise<LabRun> {
  const say = opts.progress ?? (() => {});
  const rows: LabRow[] = [];
  const boots: LabBoot[] = [];
  const rules = await loadRules();
  const date = new Date().toISOString().slice(0, 10);
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-'));
  try {
    for (const kernel of opts.kernels) {
      const kdir = path.join(opts.out, kernel.release);
      await fs.mkdir(kdir, { recursive: true });
      for (const boot of planBoots(opts.scenarios)) {
        const guestNames = [...new Set(boot.scenarios.map((s) => s.guest))];
        const initrd = path.join(work, `initramfs-${kernel.release}-smp${boot.smp}.cpio`);
        await fs.writeFile(initrd, await buildInitramfs({ scenarios: guestNames, defaultName: `default-smp${boot.smp}` }, kernel));
        say(`boot ${kernel.release} -smp ${boot.smp}: ${boot.scenarios.map((s) => s.name).join(' ')}`);
        const result = await bootGuest({ kernel, initrd, smp: boot.smp, timeoutMs: opts.timeoutMs ?? 300_000 });
        const consoleLog = path.join(kdir, `console-smp${boot.smp}.log`);
        await fs.writeFile(consoleLog, result.console);
        const guest = splitConsole(result.console);
        const problems = [...guest.problems];
        if (result.timedOut) problems.push(`QEMU timed out after ${Math.round(result.ms / 1000)} s`);
        if (!guest.done) problems.push(`the guest did not finish its scenarios (console in ${consoleLog})`);
        boots.push({ kernel, smp: boot.smp, ms: result.ms, done: guest.done, problems, consoleLog });
        say(`  boot took ${(result.ms / 1000).toFixed(1)} s${problems.length ? `; ${problems.join('; ')}` : ''}`);
        for (const scenario of boot.scenarios) {
          for (const bundle of scenario.bundles) {
            const row: LabRow = {
              scenario: scenario.name,
              bundle,
              kernel,
              smp: boot.smp,
              observation: undefined,
              triage: undefined,
              expected: LAB_EXPECTED[bundle],
              missing: undefined,
            };
            rows.push(row);
            const tgz = guest.bundles.get(bundle);
            if (!tgz) {
              row.missing = `the guest sent no bundle ${bundle}`;
              continue;
            }
            const dir = path.join(kdir, bundle);
            await fs.rm(dir, { recursive: true, force: true });
            await untar(tgz, kdir);
            row.observation = await observeBundle(dir);
            row.triage = await triageBundle(row.observation, { kernel, rules, expected: row.expected, date });
            const secs = row.observation.elapsedNs === undefined ? '?' : (row.observation.elapsedNs / 1e9).toFixed(1);
            say(`  ${bundle}: ${secs} s in the guest`);
          }
        }
      }
    }
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return { rows, boots };
}

/** Every way a row differs from what the kernel is expected to show; empty when it matches. */
export function labMismatches(row: LabRow): string[] {
  if (row.missing) return [row.missing];
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
  if (e.errorReason === undefined) {
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
