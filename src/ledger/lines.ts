import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * Line splitting with bounded memory: the only text kept between chunks is the unfinished
 * last line, and a line longer than MAX_LINE is cut off and reported rather than buffered
 * (a 2 GB file without newlines must not become a 2 GB string).
 */
export const MAX_LINE = 1 << 16;

/** Called for each line; `truncated` is set when the line was longer than MAX_LINE (only its head is passed). */
export type LineSink = (line: string, no: number, truncated: boolean) => void;

/** Incremental splitter: feed decoded text, get whole lines; `end()` flushes the last one. */
export class LineSplitter {
  private carry = '';
  private skipping = false;
  private no = 0;
  /** The last line had no final newline (a cut-off file). */
  lastLineUnterminated = false;

  constructor(private readonly sink: LineSink) {}

  get lines(): number {
    return this.no;
  }

  push(chunk: string): void {
    let from = 0;
    const n = chunk.length;
    while (from < n) {
      const nl = chunk.indexOf('\n', from);
      if (nl < 0) {
        if (!this.skipping) {
          this.carry += chunk.slice(from);
          if (this.carry.length > MAX_LINE) {
            this.no++;
            this.sink(this.carry.slice(0, 200), this.no, true);
            this.carry = '';
            this.skipping = true;
          }
        }
        return;
      }
      if (this.skipping) {
        this.skipping = false;
      } else {
        let line = this.carry.length > 0 ? this.carry + chunk.slice(from, nl) : chunk.slice(from, nl);
        this.carry = '';
        this.no++;
        if (line.length > MAX_LINE) this.sink(line.slice(0, 200), this.no, true);
        else {
          if (line.length > 0 && line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
          this.sink(line, this.no, false);
        }
      }
      from = nl + 1;
    }
  }

  end(): void {
    if (this.carry.length > 0) {
      this.no++;
      this.lastLineUnterminated = true;
      const line = this.carry;
      this.carry = '';
      this.sink(line, this.no, false);
    }
  }
}

/** Split a readable stream into lines, calling `sink` synchronously per line. */
export async function forEachLine(stream: NodeJS.ReadableStream, sink: LineSink, onChunk?: (bytes: number) => void): Promise<LineSplitter> {
  const splitter = new LineSplitter(sink);
  const decoder = new StringDecoder('utf8');
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    if (typeof chunk === 'string') {
      splitter.push(chunk);
      onChunk?.(Buffer.byteLength(chunk));
    } else {
      splitter.push(decoder.write(chunk));
      onChunk?.(chunk.length);
    }
  }
  splitter.push(decoder.end());
  splitter.end();
  return splitter;
}

/**
 * A pull-style line reader over a file, synchronous so that the ledger can pull operations
 * while it is inside a trace chunk. Memory: one chunk plus the lines not yet pulled from it.
 */
export class SyncFileLines {
  private fd: number | undefined;
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private readonly decoder = new StringDecoder('utf8');
  private queue: Array<{ line: string; no: number; truncated: boolean }> = [];
  private head = 0;
  private done = false;
  private readonly splitter: LineSplitter;

  constructor(file: string) {
    this.fd = openSync(file, 'r');
    this.splitter = new LineSplitter((line, no, truncated) => this.queue.push({ line, no, truncated }));
  }

  get lastLineUnterminated(): boolean {
    return this.splitter.lastLineUnterminated;
  }

  /** The next line, or undefined at end of file. */
  next(): { line: string; no: number; truncated: boolean } | undefined {
    while (this.head >= this.queue.length) {
      if (this.done) return undefined;
      this.queue = [];
      this.head = 0;
      const n = readSync(this.fd!, this.buf, 0, this.buf.length, null);
      if (n === 0) {
        this.splitter.push(this.decoder.end());
        this.splitter.end();
        this.done = true;
        this.close();
      } else {
        this.splitter.push(this.decoder.write(this.buf.subarray(0, n)));
      }
    }
    return this.queue[this.head++];
  }

  close(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }
}
