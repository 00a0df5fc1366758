import { Writable } from 'node:stream';
import { input, select } from '@inquirer/prompts';

/**
 * The only module that talks to inquirer (tests mock it). Two prompts are all triage needs: pick
 * one of a list, or type a line. Both end with PromptClosed when the person presses Ctrl-C or
 * the terminal goes away.
 */

/** Where prompts read keys from and draw to. */
export interface PromptIo {
  input: NodeJS.ReadableStream;
  /** Text the prompt draws; undefined lets inquirer draw on its default terminal. */
  write?: (text: string) => void;
  /** Terminal width, when known. */
  columns?: number;
}

/** The person stopped answering (Ctrl-C, closed terminal): not an error, the session just ends. */
export class PromptClosed extends Error {
  override readonly name = 'PromptClosed';
}

function context(io: PromptIo): { input: NodeJS.ReadableStream; output?: NodeJS.WritableStream } {
  if (!io.write) return { input: io.input };
  const write = io.write;
  // inquirer ends its output stream after each prompt, so each prompt gets a fresh one.
  const output = new Writable({
    write(chunk: Buffer | string, _enc, done) {
      write(chunk.toString());
      done();
    },
  });
  Object.assign(output, { columns: io.columns ?? 100, isTTY: true });
  return { input: io.input, output };
}

function closed(err: unknown): never {
  const name = err instanceof Error ? err.name : '';
  if (name === 'ExitPromptError' || name === 'AbortPromptError' || name === 'CancelPromptError') throw new PromptClosed(name, { cause: err });
  throw err;
}

/** Pick one of `choices`; resolves to the chosen value. */
export async function askSelect(message: string, choices: Array<{ name: string; value: string }>, io: PromptIo): Promise<string> {
  try {
    return await select({ message, choices, pageSize: 12, loop: false }, context(io));
  } catch (err) {
    return closed(err);
  }
}

/** Type one line; `validate` returns true or what was expected. */
export async function askInput(message: string, validate: (text: string) => true | string, io: PromptIo): Promise<string> {
  try {
    return await input({ message, validate }, context(io));
  } catch (err) {
    return closed(err);
  }
}
