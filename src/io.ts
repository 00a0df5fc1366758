/**
 * What a command may touch of the outside world, passed in so that everything below the CLI
 * stays testable and only src/bin.ts reaches for `process`.
 */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  stdin: NodeJS.ReadableStream;
  /** stdin and stdout are both terminals (a person can answer prompts). */
  interactive: boolean;
  /** stderr is a terminal (progress bars may be drawn). */
  stderrIsTTY: boolean;
  env: Record<string, string | undefined>;
  cwd: string;
  /** Colour on stdout: decided once at the edge from NO_COLOR, --no-color and the terminal. */
  color: boolean;
  /**
   * A promise to wait on while stdout holds more unwritten output than it should (a pipe read
   * more slowly than a batch writes); undefined when it does not. Without the wait, a batch that
   * never lets the event loop run queued its whole output in memory.
   */
  drained?: () => Promise<void> | undefined;
  /** The width help text wraps to on stdout and on stderr: a terminal's columns; undefined (80) elsewhere. */
  helpWidth?: { stdout?: number; stderr?: number };
}

/** An Io that keeps what a command prints, for in-process runs (benchmarks, tests): no terminal, no colour. */
export function bufferedIo(cwd: string, stdin: NodeJS.ReadableStream): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (text: string) => { io.out += text; },
    stderr: (text: string) => { io.err += text; },
    stdin,
    interactive: false,
    stderrIsTTY: false,
    env: {},
    cwd,
    color: false,
  };
  return io;
}
