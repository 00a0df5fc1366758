import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { loadRules } from '../index.js';
import { BUNDLES_ARCHIVE, isRecorded, KERNEL_FILE, RECORDED_MARK, tar, type RecordedKernel } from './cases.js';
import { observeBpftraceBundle } from './bpftraceObserve.js';
import { caseDrift } from './drift.js';
import type { LabKernel } from './kernels.js';
import { observeModuleBundle } from './moduleObserve.js';
import { observeBundle } from './observe.js';
import { expectationFor, LAB_SCENARIOS } from './scenarios.js';
import { triageBpftraceBundle, triageBundle, triageModuleBundle } from './triage.js';

/** One shipped reference case re-derived from its raw bundle. */
export interface Rederived {
  bundle: string;
  /** Fields where the re-derived case differs from the shipped one (drift.ts); empty when none. */
  drift: string[];
  /** Why the case could not be re-derived (no bundle in the archive, an unknown scenario). */
  problem: string | undefined;
  /** Recorded by older code (no RECORDED_MARK): not re-derived, it has no bundle. */
  legacy: boolean;
}

/**
 * Re-derive every reference case of one series directory (`cases/lab/6.1/`) offline from the
 * raw bundles in its bundles.tar.gz, with the same observe + triage steps as a live run, and
 * compare each with the shipped case. Needs only the host's tar. With `write`, a recorded case
 * that today's code reads differently from the same bundle is rewritten (`lab --rederive`): the
 * observation is the bundle, and the case is what the readers make of it.
 */
export async function rederiveSeries(seriesDir: string, opts: { write?: boolean } = {}): Promise<Rederived[]> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-rederive-'));
  try {
    const out: Rederived[] = [];
    const cases = (await fs.readdir(seriesDir)).filter((f) => f.endsWith('.yaml')).sort();
    const recorded: string[] = [];
    for (const file of cases) {
      if (isRecorded(await fs.readFile(path.join(seriesDir, file), 'utf8'))) recorded.push(file);
      else out.push({ bundle: file.replace(/\.yaml$/, ''), drift: [], problem: undefined, legacy: true });
    }
    if (recorded.length === 0) return out;
    await tar(['-xzf', path.join(seriesDir, BUNDLES_ARCHIVE), '-C', work]);
    const rec = JSON.parse(await fs.readFile(path.join(work, KERNEL_FILE), 'utf8')) as RecordedKernel;
    const kernel: LabKernel = { series: rec.series, release: rec.release, image: '(not booted: re-derived from its bundles)' };
    if (rec.version) kernel.version = rec.version;
    const rules = await loadRules();
    for (const file of recorded) {
      const bundle = file.replace(/\.yaml$/, '');
      const scenario = LAB_SCENARIOS.find((s) => s.bundles.includes(bundle));
      const dir = path.join(work, bundle);
      const present = await fs.stat(dir).then(() => true, () => false);
      if (!scenario || !present) {
        out.push({ bundle, drift: [], problem: !scenario ? `no lab scenario sends a bundle ${bundle}` : `no bundle ${bundle}/ in ${BUNDLES_ARCHIVE}`, legacy: false });
        continue;
      }
      const ctx = { kernel, rules, expected: expectationFor(bundle, rec.traits, rec.smp[bundle] ?? scenario.smp), date: rec.date };
      const t =
        scenario.kind === 'bpftrace'
          ? await triageBpftraceBundle(await observeBpftraceBundle(dir), ctx)
          : scenario.kind === 'module'
            ? await triageModuleBundle(await observeModuleBundle(dir), ctx)
            : await triageBundle(await observeBundle(dir), ctx);
      const liveText = await fs.readFile(t.caseFile!, 'utf8');
      const shippedText = await fs.readFile(path.join(seriesDir, file), 'utf8');
      const drift = caseDrift(parse(liveText) as unknown, parse(shippedText) as unknown, ctx.expected?.varying);
      out.push({ bundle, drift, problem: undefined, legacy: false });
      if (opts.write === true && drift.length > 0) {
        // The same observation read by today's code: the shipped header (kernel, date, the mark)
        // stays, the body is the re-derived case, written whole under a temporary name first.
        const shippedLines = shippedText.split('\n');
        const head = shippedLines.slice(0, shippedLines.indexOf(RECORDED_MARK) + 1).join('\n');
        const target = path.join(seriesDir, file);
        // The source line names the day the bundle was recorded (a field that varies by nature,
        // src/lab/drift.ts), not the day it was re-derived: the shipped one stays.
        const shippedSource = /^source: .*$/m.exec(shippedText)?.[0];
        const body = liveText.replace(/^#[^\n]*\n/, '');
        await fs.writeFile(`${target}.tmp`, `${head}\n${shippedSource === undefined ? body : body.replace(/^source: .*$/m, () => shippedSource)}`);
        await fs.rename(`${target}.tmp`, target);
      }
    }
    return out;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}
