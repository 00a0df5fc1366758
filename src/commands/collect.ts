import { Command } from 'commander';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandContext } from './context.js';
import { InputError } from '../errors.js';

/**
 * Find `collector/collect.sh` by walking up from this module: it sits two levels up from
 * `src/commands/` and three from `dist/src/commands/`, and the package may be installed anywhere.
 */
export async function findCollectorScript(from: string = path.dirname(fileURLToPath(import.meta.url))): Promise<string> {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'collector', 'collect.sh');
    try {
      await fs.access(candidate);
      return candidate;
    } catch {
      // keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`collector/collect.sh not found above ${from}: the package is incomplete`);
    dir = parent;
  }
}

/** `collect`: hand out the collector script, which runs on the machine under investigation. */
export function collectCommand(ctx: CommandContext): Command {
  return new Command('collect')
    .description('print the POSIX sh collector that snapshots kernel artifacts into a bundle (run it as root on the target)')
    .option('--print-script', 'print collector/collect.sh to stdout')
    .option('--path', 'print where collector/collect.sh is installed')
    .addHelpText(
      'after',
      `
On the target:
  sh collect.sh snapshot start --event GRP/EVENT --symbol SYM --out DIR
  ... run the test ...
  sh collect.sh snapshot end   --event GRP/EVENT --symbol SYM --out DIR
Then here: kretprobe-triage case from-bundle DIR -o case.yaml`,
    )
    .action(async (opts: { printScript?: boolean; path?: boolean }) => {
      if (!opts.printScript && !opts.path) throw new InputError({}, '--print-script or --path', 'neither');
      const script = await findCollectorScript();
      if (opts.path) ctx.io.stdout(`${script}\n`);
      if (opts.printScript) ctx.io.stdout(await fs.readFile(script, 'utf8'));
      ctx.exit(0);
    });
}
