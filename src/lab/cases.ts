import { promises as fs } from 'node:fs';
import path from 'node:path';
import { labMismatches, type LabRun } from './run.js';

/**
 * Copy the case of every bundle that showed what its kernel is expected to show into
 * DIR/<series>/<bundle>.yaml as a reference case, headed by its provenance (kernel release,
 * Debian version and suite, date). A bundle that did not match is not written: a reference case
 * records an observation the lab checked. Returns the files written.
 */
export async function writeReferenceCases(run: LabRun, dir: string, date: string): Promise<string[]> {
  const written: string[] = [];
  for (const row of run.rows) {
    const file = row.triage?.caseFile;
    if (!file || labMismatches(row).length > 0) continue;
    const k = row.kernel;
    const release = row.module?.release ?? row.observation?.release ?? k.release;
    const from = [k.version ? `Debian ${k.version}` : undefined, k.suite].filter(Boolean).join(', ');
    const body = (await fs.readFile(file, 'utf8')).replace(/^#[^\n]*\n/, '');
    const head =
      `# Reference case recorded by \`kretprobe-triage lab\` (issue 12): Linux ${release}${from ? ` (${from})` : ''} under QEMU TCG, ${row.smp} possible CPUs, ${date}.\n` +
      `# provenance: start/ end/ ops.jsonl${row.kind === 'module' ? ' probe.jsonl' : ''} name files of the lab bundle ${row.bundle}/ (not shipped); lab: facts come from the fixture harness${row.kind === 'module' ? ' and lab/module/krtfix.c' : ''}.\n`;
    const out = path.join(dir, k.series, `${row.bundle}.yaml`);
    await fs.mkdir(path.dirname(out), { recursive: true });
    await fs.writeFile(out, head + body);
    written.push(out);
  }
  return written;
}
