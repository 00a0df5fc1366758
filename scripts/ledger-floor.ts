/**
 * The floor the ledger bench compares with (issue 24): the least a program must do to read the
 * ledger's inputs line by line. Each file is read with readSync into one reused 1 MiB buffer and
 * split at every newline byte (Buffer.indexOf), counting lines; no decoding, no parsing, no
 * validation. `npm run bench:ledger` runs it as a whole process over the same two files the
 * ledger reads (trace and ops.jsonl), interleaved with the ledger, and prints this definition.
 */
import { closeSync, openSync, readSync } from 'node:fs';

export const FLOOR_DEFINITION = 'readSync into one 1 MiB buffer + split at each newline byte (Buffer.indexOf), counting lines, over the same trace and ops.jsonl: no decoding, no parsing, no validation; a whole node process';

/** The files the floor reads for a ledger run over `trace` and `ops`: the same two. */
export function floorFiles(trace: string, ops: string): string[] {
  return [trace, ops];
}

export function floorRead(files: string[]): { lines: number; bytes: number } {
  const buf = Buffer.allocUnsafe(1 << 20);
  let lines = 0;
  let bytes = 0;
  for (const f of files) {
    const fd = openSync(f, 'r');
    let tail = false;
    try {
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, null);
        if (n === 0) break;
        bytes += n;
        let from = 0;
        for (;;) {
          const nl = buf.indexOf(10, from);
          if (nl < 0 || nl >= n) break;
          lines++;
          from = nl + 1;
        }
        tail = from < n;
      }
    } finally {
      closeSync(fd);
    }
    // A last line without a newline is a line too.
    if (tail) lines++;
  }
  return { lines, bytes };
}
