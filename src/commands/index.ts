import type { Command } from 'commander';
import type { CommandContext } from './context.js';

/**
 * Every subcommand, in the order `--help` lists them: its name, the one line the top-level help
 * shows, and how to load it. A command's module (and what it imports: the prompt library,
 * json-rules-engine, the YAML parsers, zod) is loaded only when that command runs, so
 * `--help` and a one-case audit do not pay for the others. Each module owns its command.
 */
export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<(ctx: CommandContext) => Command>;
  /** Prints a report on stdout: gets -o/--output (written atomically) from cli.ts. */
  report?: boolean;
}

export const commands: CommandEntry[] = [
  { name: 'audit', summary: 'evaluate case files (or directories of them) and print each verdict with its reasons', report: true, load: async () => (await import('./audit.js')).auditCommand },
  { name: 'rules', summary: 'list, explain and lint the rules (the article\'s checklist as data)', report: true, load: async () => (await import('./rules.js')).rulesCommand },
  { name: 'collect', summary: 'print the POSIX sh collector that snapshots kernel artifacts into a bundle', report: true, load: async () => (await import('./collect.js')).collectCommand },
  { name: 'lab', summary: 'run the controlled overlap fixture on real kernels under QEMU', report: true, load: async () => (await import('./lab.js')).labCommand },
  { name: 'case', summary: 'build kretprobe-case/v1 files from evidence', load: async () => (await import('./case.js')).caseCommand },
  { name: 'ledger', summary: 'pair probe records into calls, bind them to the operation ledger, report coverage', report: true, load: async () => (await import('./ledger.js')).ledgerCommand },
  { name: 'capacity', summary: 'estimate admitted overlap from the caller model and recommend maxactive', report: true, load: async () => (await import('./capacity.js')).capacityCommand },
  { name: 'writeup', summary: 'read investigation write-ups (Markdown, text, mail) as cases: writeup extract', load: async () => (await import('./writeup.js')).writeupCommand },
  { name: 'report', summary: 'write a self-contained investigation report (HTML, or Markdown with SVG pictures beside it)', load: async () => (await import('./report.js')).reportCommand },
  { name: 'triage', summary: 'walk a case to a justified verdict, asking only what can still change it', load: async () => (await import('./triage.js')).triageCommand },
];
