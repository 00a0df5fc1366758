#!/usr/bin/env node
import { main } from './cli.js';

// The only module that touches `process`: everything else returns values or throws.

// A reader that goes away (`| head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}
const code = await main(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: process.stdin,
  interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
  stderrIsTTY: Boolean(process.stderr.isTTY),
  env: process.env,
  cwd: process.cwd(),
  // NO_COLOR (any value) wins; FORCE_COLOR asks for colour on a pipe; otherwise only on a terminal.
  color: process.env.NO_COLOR === undefined && (Boolean(process.stdout.isTTY) || (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== '0')),
});
process.exitCode = code;
