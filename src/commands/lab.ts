import { Command } from 'commander';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { CommandContext } from './context.js';
import { InputError, shown } from '../errors.js';
import { cachedKernels, customKernel } from '../lab/kernels.js';
import { labMismatches, runLab } from '../lab/run.js';
import { LAB_SCENARIOS, selectScenarios } from '../lab/scenarios.js';
import { formatLabTable, formatLabTimes } from '../lab/table.js';
import { BUNDLES_ARCHIVE, writeReferenceCases } from '../lab/cases.js';
import { rederiveSeries } from '../lab/rederive.js';
import { requireDirectory } from '../fsutil.js';

/** --out: a directory, or a new one in an existing directory; checked before any kernel is looked for or booted. */
async function checkOutputDirectory(out: string): Promise<void> {
  const what = 'a directory for --out (bundles, cases and console logs)';
  if (await fs.lstat(out).then(() => true, () => false)) await requireDirectory(out, what);
  else await requireDirectory(path.dirname(out), `${what} in an existing directory`);
}

/** `lab`: run the article's overlap fixture on real kernels under QEMU and triage the bundles. */
export function labCommand(ctx: CommandContext): Command {
  return new Command('lab')
    .description('run the controlled overlap fixture on Debian kernels (or --kernel) under QEMU, collect bundles, triage them')
    .option('--kernel <path>', 'boot this kernel image instead of the ones `npm run lab:setup` cached')
    .option('--module-build <dir>', 'with --kernel: a directory holding krtfix.ko built from lab/module for that kernel (module scenarios)')
    .option('--series <series...>', 'only these cached kernel series (5.10, 6.1, 6.12, ..., 6.1-arm64)')
    .option('--out <dir>', 'where bundles, cases and console logs go', 'lab-out')
    .option('--scenario <name...>', `scenarios to run (default all): ${LAB_SCENARIOS.map((s) => s.name).join(', ')}`)
    .option('--timeout <seconds>', 'give up on one boot after this long', '300')
    .option('--cases <dir>', 'write the case of every bundle that matched as a reference case DIR/<series>/<bundle>.yaml')
    .option('--rederive <dir>', 'boot nothing: re-derive the recorded reference cases under DIR/<series>/ from the bundles shipped beside them, and rewrite those today\'s readers derive differently')
    .addHelpText(
      'after',
      `
Set-up first: npm run lab:setup (QEMU, busybox-static, cpio, Debian kernels of four series and the lab
module built against each one's headers, into a cache). With --kernel PATH only the tracefs scenarios
run, unless --module-build DIR gives krtfix.ko for that kernel; module scenarios without a module fail.
Exit codes: 0 every scenario showed what the kernel is expected to show, 1 some did not, 2 the lab could not run.`,
    )
    .action(async (opts: { kernel?: string; moduleBuild?: string; series?: string[]; out: string; scenario?: string[]; timeout: string; cases?: string; rederive?: string }) => {
      if (opts.rederive !== undefined) {
        const root = path.resolve(ctx.io.cwd, opts.rederive);
        await requireDirectory(root, 'a directory of reference cases for --rederive (cases/lab)');
        const series = (await fs.readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory() && (opts.series === undefined || opts.series.includes(d.name))).map((d) => d.name).sort();
        let rewritten = 0;
        for (const s of series) {
          if (!(await fs.stat(path.join(root, s, BUNDLES_ARCHIVE)).then(() => true, () => false))) continue;
          for (const r of await rederiveSeries(path.join(root, s), { write: true })) {
            if (r.problem) ctx.io.stdout(`${s}/${r.bundle}: ${r.problem}\n`);
            else if (r.drift.length > 0) {
              rewritten++;
              ctx.io.stdout(`${s}/${r.bundle}: rewritten (${r.drift.map((d) => d.split(':')[0]).join(', ')})\n`);
            }
          }
        }
        ctx.io.stdout(`${rewritten} reference cases rewritten from their bundles under ${opts.rederive}\n`);
        ctx.exit(0);
        return;
      }
      const { selected, unknown } = selectScenarios(opts.scenario);
      if (unknown.length > 0) {
        throw new InputError({}, `--scenario one of ${LAB_SCENARIOS.map((s) => s.name).join(', ')}`, shown(unknown.join(' ')));
      }
      const timeout = Number(opts.timeout);
      if (!Number.isFinite(timeout) || timeout <= 0) throw new InputError({}, '--timeout a positive number of seconds', shown(opts.timeout));
      if (opts.moduleBuild !== undefined && opts.kernel === undefined) throw new InputError({}, '--module-build together with --kernel PATH', shown('--module-build alone'));
      await checkOutputDirectory(path.resolve(ctx.io.cwd, opts.out));
      const kernels = opts.kernel
        ? [await customKernel(path.resolve(ctx.io.cwd, opts.kernel), opts.moduleBuild === undefined ? undefined : path.resolve(ctx.io.cwd, opts.moduleBuild))]
        : await cachedKernels(ctx.io.env, opts.series);
      const out = path.resolve(ctx.io.cwd, opts.out);
      const run = await runLab({
        kernels,
        scenarios: selected,
        out,
        timeoutMs: timeout * 1000,
        progress: (line) => ctx.io.stderr(`${line}\n`),
      });
      ctx.io.stdout(formatLabTable(run.rows));
      ctx.io.stdout(formatLabTimes(run));
      if (opts.cases !== undefined) {
        const written = await writeReferenceCases(run, path.resolve(ctx.io.cwd, opts.cases), new Date().toISOString().slice(0, 10));
        ctx.io.stdout(`${written.length} reference cases written under ${opts.cases}\n`);
      }
      let bad = 0;
      for (const row of run.rows) {
        for (const m of labMismatches(row)) {
          bad++;
          ctx.io.stdout(`${row.kernel.release} ${row.bundle}: ${m}\n`);
        }
      }
      ctx.io.stdout(`bundles and console logs in ${out}\n`);
      ctx.exit(bad > 0 ? 1 : 0);
    });
}
