#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { main } from './cli.js';

// The only module that touches `process`: everything else returns values or throws.

// The process's heap. A batch holds little at once (a few inputs in flight, bounded memos), but V8
// by default lets the heap grow to several times what survives a full collection before it
// collects again, so peak RSS grew with the batch (audit of generated cases: 172 MB at 10 k, 212 MB
// at 100 k). Growing it by half what survives keeps the peak near the live set (135 and 154 MB in
// npm run bench:cli) at no time cost measured there; 1,000 write-ups: 200 -> 137 MB, and faster.
// Read by V8 at each collection.
setFlagsFromString('--heap-growing-percent=50');

// A reader that goes away (`| head`) is not an error worth a stack trace; a full disk or any
// other failure to write the output is one line and exit 2 (the output is incomplete).
function outputFailed(name: string, err: NodeJS.ErrnoException): never {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  const why = err.code === 'ENOSPC' ? 'no space left on the device' : err.code ?? err.message;
  try {
    if (name !== 'stderr') process.stderr.write(`kretprobe-triage: ${name}: expected room to write the output; got ${why} (the output is incomplete)\n`);
  } catch {
    // stderr is gone too: the exit code is all that is left.
  }
  process.exit(2);
}
process.stdout.on('error', (err: NodeJS.ErrnoException) => outputFailed('stdout', err));
process.stderr.on('error', (err: NodeJS.ErrnoException) => outputFailed('stderr', err));
const write = (name: 'stdout' | 'stderr') => (text: string): void => {
  try {
    process[name].write(text);
  } catch (err) {
    outputFailed(name, err as NodeJS.ErrnoException);
  }
};
const code = await main(process.argv.slice(2), {
  stdout: write('stdout'),
  stderr: write('stderr'),
  // process.stdin is a stream made on first use (~4 ms of start-up): only commands that read
  // standard input, or ask whether a person is there, pay for it.
  get stdin() {
    return process.stdin;
  },
  get interactive() {
    return Boolean(process.stdin.isTTY && process.stdout.isTTY);
  },
  stderrIsTTY: Boolean(process.stderr.isTTY),
  // A pipe's writes are queued once it is full, and written only when the event loop runs.
  drained: () => (process.stdout.writableNeedDrain ? new Promise<void>((resolve) => process.stdout.once('drain', resolve)) : undefined),
  helpWidth: { stdout: process.stdout.isTTY ? process.stdout.columns : undefined, stderr: process.stderr.isTTY ? process.stderr.columns : undefined },
  env: process.env,
  cwd: process.cwd(),
  // NO_COLOR (any value) wins; FORCE_COLOR asks for colour on a pipe; otherwise only on a terminal.
  color: process.env.NO_COLOR === undefined && (Boolean(process.stdout.isTTY) || (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0')),
});
process.exitCode = code;
