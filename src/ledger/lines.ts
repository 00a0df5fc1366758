import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Line splitting over bytes with bounded memory: lines are handed out as ranges of the read
 * buffer (no decoding, no copy), the only bytes kept between chunks are the unfinished last
 * line, and a line longer than MAX_LINE is cut off and reported rather than buffered (a 2 GB
 * file without newlines must not become a 2 GB string).
 */
export const MAX_LINE = 1 << 16;

/** Called for each line b[start, end) (without the newline and a trailing CR); `truncated`: longer than MAX_LINE, only its head is passed. */
export type LineSink = (b: Buffer, start: number, end: number, no: number, truncated: boolean) => void;

/** Incremental splitter: feed chunks, get whole lines; `end()` flushes the last one. */
export class LineSplitter {
  private carry: Buffer | undefined;
  private skipping = false;
  private no = 0;
  /** The last line had no final newline (a cut-off file). */
  lastLineUnterminated = false;

  constructor(private readonly sink: LineSink) {}

  get lines(): number {
    return this.no;
  }

  private emit(b: Buffer, start: number, end: number): void {
    this.no++;
    if (end > start && b[end - 1] === 13) end--;
    if (end - start > MAX_LINE) this.sink(b, start, start + 200, this.no, true);
    else this.sink(b, start, end, this.no, false);
  }

  private tooLong(b: Buffer, start: number): void {
    this.no++;
    this.sink(b, start, Math.min(b.length, start + 200), this.no, true);
    this.skipping = true;
    this.carry = undefined;
  }

  push(chunk: Buffer): void {
    let from = 0;
    if (this.skipping) {
      const nl = chunk.indexOf(10);
      if (nl < 0) return;
      this.skipping = false;
      from = nl + 1;
    } else if (this.carry !== undefined) {
      const nl = chunk.indexOf(10);
      if (nl < 0) {
        this.carry = Buffer.concat([this.carry, chunk]);
        if (this.carry.length > MAX_LINE) this.tooLong(this.carry, 0);
        return;
      }
      const line = Buffer.concat([this.carry, chunk.subarray(0, nl)]);
      this.carry = undefined;
      this.emit(line, 0, line.length);
      from = nl + 1;
    }
    const n = chunk.length;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      if (nl < 0) break;
      this.emit(chunk, from, nl);
      from = nl + 1;
    }
    if (from < n) {
      if (n - from > MAX_LINE) this.tooLong(chunk, from);
      // A copy, so the chunk itself can be freed.
      else this.carry = Buffer.from(chunk.subarray(from));
    }
  }

  end(): void {
    if (this.carry !== undefined && !this.skipping) {
      const line = this.carry;
      this.carry = undefined;
      this.lastLineUnterminated = true;
      this.emit(line, 0, line.length);
    }
  }
}

/**
 * A regular file's bytes in chunks read with readSync into one buffer, reused for every chunk:
 * the splitter is done with a chunk (and has copied the unfinished line) before the next read.
 * A read stream allocates a fresh 1 MB buffer per chunk instead, and those, freed only when a
 * collection finds them, let the resident size creep up with the length of the file; an
 * awaited FileHandle.read per chunk handed each read to libuv's thread pool and left the main
 * thread idle while it ran (6.5 % of a 1 M-record trace-text profile).
 */
export function* fileChunksSync(fd: number, size = 1 << 20): Generator<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  for (;;) {
    const n = readSync(fd, buf, 0, size, null);
    if (n === 0) return;
    yield buf.subarray(0, n);
  }
}

/** Split chunks (a readable stream, or a synchronous source such as fileChunksSync) into lines, calling `sink` synchronously per line. */
export async function forEachLine(stream: NodeJS.ReadableStream | AsyncIterable<Buffer> | Iterable<Buffer>, sink: LineSink, onChunk?: (bytes: number) => void): Promise<LineSplitter> {
  const splitter = new LineSplitter(sink);
  if (typeof (stream as Partial<Iterable<Buffer>>)[Symbol.iterator] === 'function') {
    for (const b of stream as Iterable<Buffer>) {
      splitter.push(b);
      onChunk?.(b.length);
    }
    splitter.end();
    return splitter;
  }
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    splitter.push(b);
    onChunk?.(b.length);
  }
  splitter.end();
  return splitter;
}

/** One line handed out by SyncFileLines (the object is reused: copy what you keep). */
export interface PulledLine {
  b: Buffer;
  start: number;
  end: number;
  no: number;
  truncated: boolean;
}

/**
 * A pull-style line reader over a file, synchronous so that the ledger can pull operations
 * while it is inside a trace chunk. Memory: one chunk plus the line ranges not yet pulled.
 */
export class SyncFileLines {
  private fd: number | undefined;
  private readonly buf = Buffer.allocUnsafe(1 << 20);
  private queue: PulledLine[] = [];
  private count = 0;
  private head = 0;
  private done = false;
  private readonly splitter: LineSplitter;

  /**
   * `file`: a path, or a descriptor already opened (src/fsutil.ts openInputSync checks it is a
   * regular file). `owns`: this reader closes the descriptor (at the end, or on close()); a
   * worker thread reading the ledger's descriptor must not (Node warns when a thread closes a
   * descriptor another one opened), the ledger closes it after the worker's end.
   */
  constructor(
    file: string | number,
    private readonly owns = true,
  ) {
    this.fd = typeof file === 'number' ? file : openSync(file, 'r');
    this.splitter = new LineSplitter((b, start, end, no, truncated) => {
      // Reuse the line objects of the previous chunk.
      let slot = this.queue[this.count];
      if (slot === undefined) {
        slot = { b, start, end, no, truncated };
        this.queue.push(slot);
      } else {
        slot.b = b;
        slot.start = start;
        slot.end = end;
        slot.no = no;
        slot.truncated = truncated;
      }
      this.count++;
    });
  }

  get lastLineUnterminated(): boolean {
    return this.splitter.lastLineUnterminated;
  }

  /** The file's size in bytes when opened (0 once closed). */
  get size(): number {
    return this.fd === undefined ? 0 : fstatSync(this.fd).size;
  }

  /** The next line, or undefined at end of file. */
  next(): PulledLine | undefined {
    while (this.head >= this.count) {
      if (this.done) return undefined;
      this.count = 0;
      this.head = 0;
      // One buffer for the whole file: every line of the previous chunk has been pulled (and
      // whatever was kept of it copied out) before the next read.
      const buf = this.buf;
      const n = readSync(this.fd!, buf, 0, buf.length, null);
      if (n === 0) {
        this.splitter.end();
        this.done = true;
        this.close();
      } else {
        this.splitter.push(buf.subarray(0, n));
      }
    }
    return this.queue[this.head++];
  }

  close(): void {
    if (this.fd !== undefined) {
      if (this.owns) closeSync(this.fd);
      this.fd = undefined;
    }
  }

  /** Hand the descriptor, not yet read, to another reader (a worker thread): this one forgets it. */
  release(): number {
    const fd = this.fd;
    if (fd === undefined || this.count > 0 || this.done) throw new Error('release: the file was already read or closed');
    this.fd = undefined;
    return fd;
  }
}
