import path from 'node:path';
import type { Command as CommandT } from 'commander';
import { InputError } from './errors.js';
import type { Io } from './io.js';
import { escapeControls, oneLine, PROGRESS_DRAW } from './safetext.js';
import type { CommandEntry } from './commands/index.js';
import type { CommandContext } from './commands/context.js';
import { readHelpSnapshot } from './help-snapshot.js';

export const EXIT_HELP = `Exit codes:
  0  nothing flagged
  1  a claim is unsupported or overreaches, or a verdict at/above --fail-on
     (accepted findings do not count; --soft-fail exits 0 whatever is found)
  2  usage or input error (one line on stderr: file:line:col: expected ...; got ...);
     in a batch each bad file is one such line, the others are still audited
  3  inconclusive: insufficient-evidence somewhere and nothing worse`;

export type { CommandContext } from './commands/context.js';

/** Parse argv, run one command, return the exit code. Never exits the process itself. */
export async function main(argv: string[], io: Io, options: { noHelpSnapshot?: boolean } = {}): Promise<number> {
  let code = 0;
  // Text from inputs never drives the terminal, and one error is one line (src/safetext.ts).
  const rawOut = io.stdout;
  const rawErr = io.stderr;
  io.stdout = (text) => rawOut(escapeControls(text, { newlines: true, sgr: io.color }));
  io.stderr = (text) => rawErr(io.stderrIsTTY && PROGRESS_DRAW.test(text) ? text : oneLine(text));
  const ctx: CommandContext = { io, exit: (c) => { code = c; } };
  if (argv[0] === '--version' || argv[0] === '-V') {
    const { toolVersion, rulesVersion } = await import('./version.js');
    const { defaultRulesDir } = await import('./rules/load.js');
    io.stdout(`kretprobe-triage ${await toolVersion()} (rules ${await rulesVersion(defaultRulesDir())})\n`);
    return 0;
  }
  // The top-level help where commander would wrap it at 80 columns: the build's copy of what it
  // prints (src/help-snapshot.ts), without loading commander.
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h') && io.helpWidth?.stdout === undefined && !options.noHelpSnapshot) {
    const help = readHelpSnapshot();
    if (help !== undefined) {
      io.stdout(help);
      return 0;
    }
  }
  const [{ Command, CommanderError }, { commands }] = await Promise.all([import('commander'), import('./commands/index.js')]);
  // Commander's own errors (unknown option, missing argument) as one line, like every other error.
  const commanderOutput = {
    writeOut: (s: string) => io.stdout(s),
    // Commander's help may go to stderr: many lines, its own.
    writeErr: (s: string) => rawErr(escapeControls(s, { newlines: true })),
    outputError: (s: string, write: (s: string) => void) => write(oneLine(`kretprobe-triage: ${s.replace(/\s+/g, ' ').trim()} (run with --help for usage)\n`)),
    // A terminal's width (src/bin.ts), else commander's 80.
    getOutHelpWidth: () => io.helpWidth?.stdout ?? 80,
    getErrHelpWidth: () => io.helpWidth?.stderr ?? 80,
  };
  const program = new Command('kretprobe-triage')
    .description('Tell a stuck function from an observer that dropped the call, for kretprobe investigations.')
    .option('--no-color', 'plain text output (also NO_COLOR=1)')
    .option('-V, --version', 'print the tool version and the rules version (a content hash of rules/)')
    .addHelpText('after', `\n${EXIT_HELP}\n`)
    .exitOverride()
    .configureOutput(commanderOutput);
  // -o/--output on a report command: the report goes to a buffer and then, in one atomic write, to the file.
  let output: { file: string; chunks: string[]; force: boolean; inputs: string[] } | undefined;
  program.hook('preAction', (thisCommand, actionCommand) => {
    if (thisCommand.opts().color === false) io.color = false;
    const actionOpts = actionCommand.opts() as { output?: string; force?: boolean } & Record<string, unknown>;
    const file = buffered.has(actionCommand) ? actionOpts.output : undefined;
    if (file !== undefined) {
      // Every path this run reads (its arguments and file options) is an input -o must not replace.
      const inputs = [...actionCommand.args, ...Object.entries(actionOpts).filter(([k, v]) => k !== 'output' && k !== 'outputFile' && typeof v === 'string').map(([, v]) => v as string)]
        .map((p) => path.resolve(io.cwd, p));
      output = { file: path.resolve(io.cwd, file), chunks: [], force: actionOpts.force === true, inputs };
      const chunks = output.chunks;
      io.stdout = (text) => { chunks.push(text); };
      io.color = false;
    }
  });
  // Only the command that runs is loaded; the others are listed by name and summary.
  const invoked = argv.find((a) => !a.startsWith('-'));
  for (const entry of commands) {
    const sub = entry.name === invoked ? await realCommand(entry, ctx) : new Command(entry.name).summary(entry.summary).description(entry.summary).allowUnknownOption().allowExcessArguments();
    sub.exitOverride().configureOutput(commanderOutput);
    for (const nested of sub.commands) nested.exitOverride().configureOutput(commanderOutput);
    program.addCommand(sub);
  }
  try {
    (await import('./fsutil.js')).beginRun();
    await program.parseAsync(argv, { from: 'user' });
    if (output) {
      const { writeFileAtomic } = await import('./fsutil.js');
      await writeFileAtomic(output.file, escapeControls(output.chunks.join(''), { newlines: true }), { force: output.force, inputs: output.inputs, what: 'report' });
    }
    return code;
  } catch (err) {
    return reportError(err, io, CommanderError);
  }
}

/** The leaves whose -o cli.ts itself provides (their stdout is the report it writes). */
const buffered = new WeakSet<CommandT>();

/**
 * One convention for every command: `-o, --output FILE` writes the command's output to FILE
 * atomically (`--output-file` is an alias, the name ESLint uses), `--force` replaces an existing
 * FILE, `-f, --format` picks the format. Commands that write their own files declare `-o,
 * --output`; the others print a report and get it here.
 */
async function realCommand(entry: CommandEntry, ctx: CommandContext): Promise<CommandT> {
  const { Option } = await import('commander');
  const cmd = (await entry.load())(ctx).summary(entry.summary);
  const leaves = cmd.commands.length ? cmd.commands : [cmd];
  for (const leaf of leaves) {
    if (entry.report && !leaf.options.some((o) => o.short === '-o' || o.long === '--output')) {
      leaf.option('-o, --output <file>', 'write the report to this file (atomically: all of it or nothing) instead of stdout');
      buffered.add(leaf);
    }
    if (leaf.options.some((o) => o.long === '--output')) {
      if (!leaf.options.some((o) => o.long === '--force')) leaf.option('--force', 'with -o: replace an existing file');
      leaf.addOption(new Option('--output-file <file>', 'the same as --output').hideHelp());
      leaf.on('option:output-file', (v: string) => leaf.setOptionValue('output', v));
    }
  }
  return cmd;
}

function reportError(err: unknown, io: Io, CommanderError: typeof import('commander').CommanderError): number {
  if (err instanceof CommanderError) {
    // Commander has already printed its message; help and version are not errors.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') return 0;
    return 2;
  }
  if (err instanceof InputError) {
    io.stderr(`kretprobe-triage: ${err.message}\n`);
    return 2;
  }
  const message = err instanceof Error ? err.message : String(err);
  io.stderr(`kretprobe-triage: internal error (a bug in this tool, please report it): ${message.split('\n')[0]}\n`);
  if (io.env.KRT_DEBUG && err instanceof Error && err.stack) for (const line of err.stack.split('\n')) io.stderr(`${line}\n`);
  return 2;
}
