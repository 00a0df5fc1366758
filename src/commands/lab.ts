import { Command } from 'commander';
import path from 'node:path';
import type { CommandContext } from '../cli.js';
import { InputError, shown } from '../errors.js';
import { cachedKernels, customKernel } from '../lab/kernels.js';
import { labMismatches, runLab } from '../lab/run.js';
import { LAB_SCENARIOS, selectScenarios } from '../lab/scenarios.js';
import { formatLabTable } from '../lab/table.js';

/** `lab`: run the article's overlap fixture on real kernels under QEMU and triage the bundles. */
export function labCommand(ctx: CommandContext): Command {
  return new Command('lab')
    .description('run the controlled overlap fixture on Debian kernels (or --kernel) under QEMU, collect bundles, triage them')
    .option('--kernel <path>', 'boot this kernel image instead of the ones `npm run lab:setup` cached')
    .option('--out <dir>', 'where bundles, cases and console logs go', 'lab-out')
    .option('--scenario <name...>', `scenarios to run (default all): ${LAB_SCENARIOS.map((s) => s.name).join(', ')}`)
    .option('--timeout <seconds>', 'give up on one boot after this long', '300')
    .addHelpText(
      'after',
      `
Set-up first: npm run lab:setup (QEMU, busybox-static, cpio and two Debian kernels into a cache).
Exit codes: 0 every scenario showed what the kernel is expected to show, 1 some did not, 2 the lab could not run.`,
    )
    .action(async (opts: { kernel?: string; out: string; scenario?: string[]; timeout: string }) => {
      const { selected, unknown } = selectScenarios(opts.scenario);
      if (unknown.length > 0) {
        throw new InputError({}, `--scenario one of ${LAB_SCENARIOS.map((s) => s.name).join(', ')}`, shown(unknown.join(' ')));
      }
      const timeout = Number(opts.timeout);
      if (!Number.isFinite(timeout) || timeout <= 0) throw new InputError({}, '--timeout a positive number of seconds', shown(opts.timeout));
      const kernels = opts.kernel ? [await customKernel(path.resolve(ctx.io.cwd, opts.kernel))] : await cachedKernels(ctx.io.env);
      const out = path.resolve(ctx.io.cwd, opts.out);
      const run = await runLab({
        kernels,
        scenarios: selected,
        out,
        timeoutMs: timeout * 1000,
        progress: (line) => ctx.io.stderr(`${line}\n`),
      });
      ctx.io.stdout(formatLabTable(run.rows));
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
