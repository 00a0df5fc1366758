import { Command, CommanderError } from 'commander';
import { InputError } from './errors.js';
import type { Io } from './io.js';
import { commands } from './commands/index.js';

export const EXIT_HELP = `Exit codes:
  0  nothing flagged
  1  a claim is unsupported or overreaches, or a verdict at/above --fail-on
  2  usage or input error (one line on stderr: file:line:col: expected ...; got ...)
  3  inconclusive: insufficient-evidence somewhere and nothing worse`;

/** A command sets the exit code through this; the last word wins. */
export interface CommandContext {
  io: Io;
  exit: (code: number) => void;
}

/** Parse argv, run one command, return the exit code. Never exits the process itself. */
export async function main(argv: string[], io: Io): Promise<number> {
  let code = 0;
  const ctx: CommandContext = { io, exit: (c) => { code = c; } };
  // Commander's own errors (unknown option, missing argument) as one line, like every other error.
  const output = {
    writeOut: (s: string) => io.stdout(s),
    writeErr: (s: string) => io.stderr(s),
    outputError: (s: string, write: (s: string) => void) => write(`kretprobe-triage: ${s.replace(/\s+/g, ' ').trim()} (run with --help for usage)\n`),
  };
  const program = new Command('kretprobe-triage')
    .description('Tell a stuck function from an observer that dropped the call, for kretprobe investigations.')
    .option('--no-color', 'plain text output (also NO_COLOR=1)')
    .addHelpText('after', `\n${EXIT_HELP}\n`)
    .exitOverride()
    .configureOutput(output);
  program.hook('preAction', (thisCommand) => {
    if (thisCommand.opts().color === false) io.color = false;
  });
  for (const make of commands) {
    const sub = make(ctx).exitOverride().configureOutput(output);
    for (const nested of sub.commands) nested.exitOverride().configureOutput(output);
    program.addCommand(sub);
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    return reportError(err, io);
  }
}

function reportError(err: unknown, io: Io): number {
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
  if (io.env.KRT_DEBUG && err instanceof Error && err.stack) io.stderr(`${err.stack}\n`);
  return 2;
}
