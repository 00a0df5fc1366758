import type { Io } from '../io.js';

/** A command sets the exit code through this; the last word wins. (Apart from cli.ts, so commands never import the CLI that loads them.) */
export interface CommandContext {
  io: Io;
  exit: (code: number) => void;
}
