import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { kernelTraits, type LabKernel } from './kernels.js';
import { labMismatches, type LabRun } from './run.js';
import type { KernelTraits } from './scenarios.js';

/** The archive of raw bundles beside the reference cases of one series (DIR/<series>/). */
export const BUNDLES_ARCHIVE = 'bundles.tar.gz';
/** In that archive: the kernel the bundles came from, enough to re-derive their cases offline. */
export const KERNEL_FILE = 'kernel.json';

/**
 * The header line every case written here carries. A shipped case without it was recorded by
 * older code (issue 12) and partly edited by hand: it has no bundle to re-derive it from, so only
 * its verdict is compared until it is recorded again (`npm run lab -- --cases cases/lab`).
 */
export const RECORDED_MARK = '# Not edited by hand: test:lab compares every live run with this file field by field (src/lab/drift.ts).';

/** Whether a shipped case's text was written by writeReferenceCases (and so ships its bundle). */
export const isRecorded = (text: string): boolean => text.split('\n', 4).includes(RECORDED_MARK);

/** What `kernel.json` holds: the kernel without its host paths, and what the lab knew of it. */
export interface RecordedKernel {
  series: string;
  release: string;
  version?: string;
  suite?: string;
  role?: string;
  traits: KernelTraits;
  /** The `-smp` of the boot each bundle came from. */
  smp: Record<string, number>;
  date: string;
}

/** Run tar with `args` (the host's tar, as untar does). */
export async function tar(args: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('tar', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar ${args.join(' ')} failed (${code}): ${err.trim()}`))));
  });
}

/**
 * Copy the case of every bundle that showed what its kernel is expected to show into
 * DIR/<series>/<bundle>.yaml as a reference case, headed by its provenance (kernel release,
 * Debian version and suite, date), and its raw bundle into DIR/<series>/bundles.tar.gz (merged
 * with the bundles already there), so that the case can be re-derived offline (rederive.ts). A
 * bundle that did not match is not written: a reference case records an observation the lab
 * checked. Returns the files written.
 */
export async function writeReferenceCases(run: LabRun, dir: string, date: string): Promise<string[]> {
  const written: string[] = [];
  const bySeries = new Map<LabKernel, Array<{ bundle: string; dir: string; smp: number }>>();
  for (const row of run.rows) {
    const file = row.triage?.caseFile;
    if (!file || labMismatches(row).length > 0) continue;
    const k = row.kernel;
    const release = row.module?.release ?? row.observation?.release ?? k.release;
    const from = [k.version ? `Debian ${k.version}` : undefined, k.suite].filter(Boolean).join(', ');
    const body = (await fs.readFile(file, 'utf8')).replace(/^#[^\n]*\n/, '');
    const head =
      `# Reference case recorded by \`kretprobe-triage lab\` (issues 12, 22): Linux ${release}${from ? ` (${from})` : ''} under QEMU TCG, ${row.smp} possible CPUs, ${date}.\n` +
      `# provenance: start/ end/ ops.jsonl${row.kind === 'module' ? ' probe.jsonl' : ''} name files of the lab bundle ${row.bundle}/, kept in ${BUNDLES_ARCHIVE} beside this file; lab: facts come from the fixture harness${row.kind === 'module' ? ' and lab/module/krtfix.c' : ''}.\n` +
      `${RECORDED_MARK}\n`;
    const out = path.join(dir, k.series, `${row.bundle}.yaml`);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(out, head + body);
    written.push(out);
    const list = bySeries.get(k) ?? [];
    list.push({ bundle: row.bundle, dir: path.join(path.dirname(file), row.bundle), smp: row.smp });
    bySeries.set(k, list);
  }
  for (const [k, bundles] of bySeries) {
    const archive = path.join(dir, k.series, BUNDLES_ARCHIVE);
    const work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lab-bundles-'));
    try {
      let recorded: RecordedKernel | undefined;
      if (await fs.stat(archive).then(() => true, () => false)) {
        await tar(['-xzf', archive, '-C', work]);
        recorded = JSON.parse(await fs.readFile(path.join(work, KERNEL_FILE), 'utf8')) as RecordedKernel;
        // Another release's bundles are not this kernel's: start the archive afresh.
        if (recorded.release !== k.release) {
          await fs.rm(work, { recursive: true, force: true });
          await fs.mkdir(work);
          recorded = undefined;
        }
      }
      const smp = { ...(recorded?.smp ?? {}) };
      for (const b of bundles) {
        await fs.rm(path.join(work, b.bundle), { recursive: true, force: true });
        // Files and directories only: the tracefs gate's FIFOs stay behind (they hold no data).
        await fs.cp(b.dir, path.join(work, b.bundle), { recursive: true, filter: async (src) => { const st = await fs.lstat(src); return st.isFile() || st.isDirectory(); } });
        smp[b.bundle] = b.smp;
      }
      const meta: RecordedKernel = { series: k.series, release: k.release, traits: await kernelTraits(k), smp, date };
      if (k.version) meta.version = k.version;
      if (k.suite) meta.suite = k.suite;
      if (k.role) meta.role = k.role;
      await fs.writeFile(path.join(work, KERNEL_FILE), `${JSON.stringify(meta, null, 1)}\n`);
      const names = (await fs.readdir(work)).sort();
      await tar(['-czf', `${archive}.tmp`, '--owner=0', '--group=0', '--numeric-owner', '-C', work, ...names]);
      await fs.rename(`${archive}.tmp`, archive);
      written.push(archive);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
  }
  return written;
}
