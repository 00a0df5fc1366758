import { Command } from 'commander';
import path from 'node:path';
import { stringify } from 'yaml';
import type { CommandContext } from './context.js';
import { caseSchema } from '../case/schema.js';
import { MAX_YAML_BYTES } from '../yamlfile.js';
import { formatInputError, InputError, shown } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';
import { caseFromBundle, PHASES, type BundleOptions, type CaseObject } from '../evidence/bundle.js';

/** Render a built case as YAML after checking it against the case schema (a mismatch is our bug). */
export function renderBundleCase(data: CaseObject, bundle: string): string {
  const checked = caseSchema.safeParse(data);
  if (!checked.success) {
    const first = checked.error.issues[0];
    throw new Error(`case from-bundle built an invalid case at ${first?.path.join('.') ?? '?'}: ${first?.message ?? 'unknown'}`);
  }
  const head = `# Built by kretprobe-triage case from-bundle from ${bundle}.\n# provenance: maps each fact to the bundle file:line it was read from; absent facts are unknown.\n`;
  return head + stringify(data, { lineWidth: 0 });
}

/** `case`: build case files from evidence. */
export function caseCommand(ctx: CommandContext): Command {
  const cmd = new Command('case').description('build kretprobe-case/v1 files from evidence');
  cmd
    .command('from-bundle')
    .description('build a case from a bundle collected by `collect.sh snapshot start|end`')
    .argument('<dir>', 'bundle directory holding start/ and/or end/')
    .option('-o, --output <file>', 'write the case here (atomically) instead of stdout; an existing file is refused without --force')
    .option('--force', 'with -o: replace an existing file')
    .option('--event <grp/event>', 'the return event (default: from the bundle manifest)')
    .option('--entry-event <grp/event>', 'the separate entry event on the same function (default: from the manifest)')
    .option('--symbol <sym>', 'the target function (default: from the manifest)')
    .option('--definition <text>', 'the probe definition as you wrote it, e.g. "r:kfix/gate pipe_read", for maxactive.requested')
    .option('--id <id>', 'case id (default: the bundle directory name, kebab-cased)')
    .option('--title <text>', 'case title')
    .action(async (dir: string, opts: { output?: string; force?: boolean; event?: string; entryEvent?: string; symbol?: string; definition?: string; id?: string; title?: string }) => {
      const bundle = path.resolve(ctx.io.cwd, dir);
      if (opts.id !== undefined && !caseSchema.shape.id.safeParse(opts.id).success) {
        throw new InputError({}, '--id: a kebab-case id (lower-case letters and digits in words joined by single hyphens, e.g. pipe-read-1)', shown(opts.id));
      }
      for (const [name, ev] of [['--event', opts.event], ['--entry-event', opts.entryEvent]] as const) {
        if (ev !== undefined && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(ev)) throw new InputError({}, `${name}: GRP/EVENT (letters, digits, _ . -)`, shown(ev));
        if (ev !== undefined && ev.split('/').some((part) => part === '.' || part === '..')) throw new InputError({}, `${name}: GRP/EVENT without path components`, shown(ev));
      }
      const options: BundleOptions = {
        event: opts.event,
        eventNamedByUser: opts.event !== undefined,
        entryEvent: opts.entryEvent,
        symbol: opts.symbol,
        definition: opts.definition,
        id: opts.id,
        title: opts.title,
      };
      const { case: data, problems } = await caseFromBundle(bundle, options);
      for (const p of problems) {
        ctx.io.stderr(`kretprobe-triage: warning: ${formatInputError({ file: p.file, line: p.line > 0 ? p.line : undefined }, p.expected, p.got)}\n`);
      }
      const text = renderBundleCase(data, dir);
      if (opts.output) {
        await writeFileAtomic(path.resolve(ctx.io.cwd, opts.output), text, {
          force: opts.force ?? false,
          inputs: PHASES.map((p) => path.join(bundle, p)),
          maxBytes: MAX_YAML_BYTES,
          what: 'case file',
        });
      }
      else ctx.io.stdout(text);
      ctx.exit(0);
    });
  return cmd;
}
