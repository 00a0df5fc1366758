import { Worker } from 'node:worker_threads';
import { SyncFileLines } from './lines.js';
import { OrderedOps } from './opsSource.js';
import { Clock } from './clock.js';
import type { OpRecord } from './records.js';

/**
 * ops.jsonl parsed and put into submit order on a second thread while the main thread scans the
 * trace. The worker writes records into a ring in shared memory, an operation's id (when records
 * name operations: probe.jsonl) as bytes into a second ring; the ledger pulls them synchronously,
 * waiting (Atomics.wait) only when the ring is empty. Problems and counts come back as one
 * message at the end.
 */

const SLOTS = 1 << 15;
/** The id bytes' ring: any id fits (a line is at most MAX_LINE, 64 KiB). */
const ID_BYTES = 1 << 21;
/**
 * Header (Int32): [0] records written, [1] records read, [2] done flag, [3] the worker waits for
 * room, [4] the ledger waits for records, [5] the worker failed, [6] lines it has read. A side wakes the other (a system call) only when that
 * one says it waits; it sets the flag, then checks again, then sleeps, so no wake-up is lost.
 */
const H_WRITTEN = 0;
const H_READ = 1;
const H_DONE = 2;
const H_WORKER_WAITS = 3;
const H_LEDGER_WAITS = 4;
/** Set with the done flag when the worker failed: the ledger stops pulling, and end() rejects. */
const H_FAILED = 5;
/** Lines the worker has read (every 1024, and 1 once it runs): the ledger's sign that it lives. */
const H_LINES = 6;
/**
 * How long the ledger waits on an empty ring while the worker shows no sign of life before it
 * gives up: a worker that never started or died (out of memory) cannot say so, and the ledger,
 * in a synchronous loop, would otherwise wait for ever.
 */
export const OPS_WORKER_STALL_MS = 10_000;
/** Once the ring is full, the worker waits until this many slots are free (fewer, longer waits). */
const REFILL = SLOTS >> 2;
/** The ledger says what it has read every this many records (and whenever it waits). */
const READ_EVERY = 4096;
const NUM_AT = 32;
const INT_AT = NUM_AT + SLOTS * 40;
const ID_AT = INT_AT + SLOTS * 8;
const SAB_BYTES = ID_AT + ID_BYTES;

interface Shared {
  header: Int32Array;
  /**
   * submit, done (NaN: null), the id's first byte (a position that only grows), task, line per
   * slot: doubles, as the records hold them (a line number or a task id past 2^31 stays exact).
   */
  num: Float64Array;
  /**
   * flags (reaches: 0 false, 1 true, 2 absent; +4: the id is ASCII, as latin1 bytes, else
   * UTF-16 code units), the id's length in bytes per slot.
   */
  int: Int32Array;
  ids: Buffer;
}

function views(sab: SharedArrayBuffer): Shared {
  return {
    header: new Int32Array(sab, 0, 8),
    num: new Float64Array(sab, NUM_AT, SLOTS * 5),
    int: new Int32Array(sab, INT_AT, SLOTS * 2),
    ids: Buffer.from(sab, ID_AT, ID_BYTES),
  };
}

/** Buffer's own latin1 decoder (see flatjson.ts): ASCII bytes decode the same as latin1. */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (start: number, end: number) => string }).latin1Slice;

export interface OpsProblem {
  line: number;
  expected: string;
  got: string;
}

export interface OpsThreadEnd {
  valid: number;
  lines: number;
  problems: OpsProblem[];
  problemCount: number;
}

export interface OpsWorkerData {
  /** ops.jsonl, opened by the ledger (a descriptor of this process: the worker reads it, the ledger closes it). */
  fd: number;
  sab: SharedArrayBuffer;
  keep: number;
  keepIds: boolean;
  reorder: number;
  /** The run's time origin in whole seconds (clock.ts): the ledger's, so that both threads' times are on one line. */
  originSec: number;
}

/** The worker's side: read, parse, reorder, write records; wait when a ring is full. */
export function runOpsWorker(d: OpsWorkerData): OpsThreadEnd {
  const s = views(d.sab);
  const end: OpsThreadEnd = { valid: 0, lines: 0, problems: [], problemCount: 0 };
  Atomics.store(s.header, H_LINES, 1);
  const ops = new OrderedOps(
    new SyncFileLines(d.fd, false),
    d.keepIds,
    d.reorder,
    (line, expected, got) => {
      end.problemCount++;
      if (end.problems.length < d.keep) end.problems.push({ line, expected, got });
    },
    new Clock(d.originSec ?? 0),
    (lines) => Atomics.store(s.header, H_LINES, lines),
  );
  let written = 0;
  let sinceNotify = 0;
  /** Where the next id's bytes go (a position that only grows; modulo ID_BYTES in the ring). */
  let idPos = 0;
  const publish = (): void => {
    Atomics.store(s.header, H_WRITTEN, written);
    if (Atomics.load(s.header, H_LEDGER_WAITS) === 1) Atomics.notify(s.header, H_WRITTEN);
  };
  /** Bytes of the id ring still held by records not yet read. */
  const idsHeld = (read: number): number => (read >= written ? 0 : idPos - s.num[(read % SLOTS) * 5 + 2]!);
  // The record being written: its id's length and first byte, and how many slots must be free.
  let len = 0;
  let ascii = true;
  let at = 0;
  let room = SLOTS;
  const fits = (read: number): boolean => written - read < room && at + len - (idPos - idsHeld(read)) <= ID_BYTES;
  for (let r = ops.next(); r !== undefined; r = ops.next()) {
    // UTF-16 code units carry any string exactly (an escaped lone surrogate in the JSON too, which
    // UTF-8 would turn into U+FFFD, and the record naming it would no longer match).
    ascii = d.keepIds && Buffer.byteLength(r.op, 'utf8') === r.op.length;
    len = !d.keepIds ? 0 : ascii ? r.op.length : r.op.length * 2;
    // An id does not wrap around the ring's end: it starts over at 0.
    at = idPos;
    if ((at % ID_BYTES) + len > ID_BYTES) at += ID_BYTES - (at % ID_BYTES);
    room = SLOTS;
    for (;;) {
      if (fits(Atomics.load(s.header, H_READ))) break;
      room = SLOTS - REFILL;
      publish();
      Atomics.store(s.header, H_WORKER_WAITS, 1);
      const read = Atomics.load(s.header, H_READ);
      if (!fits(read)) Atomics.wait(s.header, H_READ, read, 50);
      Atomics.store(s.header, H_WORKER_WAITS, 0);
    }
    const i = written % SLOTS;
    s.num[i * 5] = r.submitNs;
    s.num[i * 5 + 1] = r.doneNs === null ? NaN : r.doneNs;
    s.num[i * 5 + 2] = at;
    s.num[i * 5 + 3] = r.task;
    s.num[i * 5 + 4] = r.line;
    const reaches = r.reachesTarget === undefined ? 2 : r.reachesTarget ? 1 : 0;
    if (len > 0) s.ids.write(r.op, at % ID_BYTES, len, ascii ? 'latin1' : 'utf16le');
    s.int[i * 2] = reaches | (ascii ? 4 : 0);
    s.int[i * 2 + 1] = len;
    idPos = at + len;
    written++;
    if (++sinceNotify >= 1024) {
      sinceNotify = 0;
      publish();
    }
  }
  end.valid = ops.valid;
  end.lines = ops.lines;
  Atomics.store(s.header, H_DONE, 1);
  Atomics.store(s.header, H_WRITTEN, written);
  Atomics.notify(s.header, H_WRITTEN);
  return end;
}

/** The worker's side when it fails: no more records (the ledger must not wait for them). */
export function failOpsRing(sab: SharedArrayBuffer): void {
  const h = views(sab).header;
  Atomics.store(h, H_FAILED, 1);
  Atomics.store(h, H_DONE, 1);
  Atomics.notify(h, H_WRITTEN);
}

/** The ledger's side: a pull reader over the worker's ring. */
export class OpsThread {
  private readonly sab = new SharedArrayBuffer(SAB_BYTES);
  private readonly s = views(this.sab);
  private readonly worker: Worker;
  private read = 0;
  private available = 0;
  private readonly ended: Promise<OpsThreadEnd>;

  /**
   * `fd`: ops.jsonl, not yet read (the caller closes it after `end()`); `keepIds` and `reorder` as for
   * OrderedOps; `stallMs`: see OPS_WORKER_STALL_MS.
   */
  constructor(fd: number, keep: number, keepIds: boolean, reorder: number, private readonly stallMs = OPS_WORKER_STALL_MS, originSec = 0) {
    const workerData: OpsWorkerData = { fd, sab: this.sab, keep, keepIds, reorder, originSec };
    // The reorder window's ids live for a window's worth of lines, long enough that V8 kept
    // doubling the worker's young generation (16 -> 32 MB between 1 M and 10 M records: RSS rose
    // with the length of the file). Capped, they are promoted and collected instead: RSS 88 MB
    // at 1 M and 92 MB at 10 M records of probe.jsonl, against 95 and 116 MB, for the same CPU.
    // No inherited node flags: ours need none, and some stop a worker from starting at all
    // (--input-type, given to `node -e`, refuses a worker's file entry).
    this.worker = new Worker(new URL('./opsWorker.js', import.meta.url), { workerData, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    this.ended = new Promise((resolve, reject) => {
      this.worker.once('message', (m: OpsThreadEnd | { error: string; code?: string }) => {
        if ('error' in m) reject(Object.assign(new Error(m.error), { code: m.code }));
        else resolve(m);
      });
      this.worker.once('error', reject);
    });
    // An error before the end must not go unhandled if nobody awaits `end()` (the trace failed first).
    this.ended.catch(() => undefined);
    // Never the reason the process stays alive (after the listeners, which would ref it again).
    this.worker.unref();
  }

  private publishRead(): void {
    Atomics.store(this.s.header, H_READ, this.read);
    if (Atomics.load(this.s.header, H_WORKER_WAITS) === 1) Atomics.notify(this.s.header, H_READ);
  }

  /** The next operation into `out`, or false at the end. */
  next(out: OpRecord): boolean {
    const h = this.s.header;
    let since = 0;
    let lines = -1;
    while (this.read >= this.available) {
      this.available = Atomics.load(h, H_WRITTEN);
      if (this.read < this.available) break;
      if (Atomics.load(h, H_DONE) === 1) {
        this.available = Atomics.load(h, H_WRITTEN);
        if (this.read >= this.available) return false;
        break;
      }
      // The worker may be waiting for room in the id ring: say what is read before waiting.
      this.publishRead();
      Atomics.store(h, H_LEDGER_WAITS, 1);
      if (Atomics.load(h, H_WRITTEN) === this.available && Atomics.load(h, H_DONE) === 0) Atomics.wait(h, H_WRITTEN, this.available, 50);
      Atomics.store(h, H_LEDGER_WAITS, 0);
      const now = Atomics.load(h, H_LINES);
      if (now !== lines) {
        lines = now;
        since = performance.now();
      } else if (performance.now() - since > this.stallMs) {
        void this.stop();
        throw new Error(`the worker reading ops.jsonl stopped without finishing (no sign of it for ${this.stallMs / 1000} s${now === 0 ? ', it never started' : ''}); --no-ops-thread reads ops.jsonl on the main thread`);
      }
    }
    const i = this.read % SLOTS;
    const s = this.s;
    out.submitNs = s.num[i * 5]!;
    const done = s.num[i * 5 + 1]!;
    out.doneNs = done === done ? done : null;
    out.task = s.num[i * 5 + 3]!;
    out.line = s.num[i * 5 + 4]!;
    const flags = s.int[i * 2]!;
    const reaches = flags & 3;
    out.reachesTarget = reaches === 2 ? undefined : reaches === 1;
    const len = s.int[i * 2 + 1]!;
    if (len === 0) out.op = '';
    else {
      const at = s.num[i * 5 + 2]! % ID_BYTES;
      out.op = (flags & 4) === 0 ? s.ids.toString('utf16le', at, at + len) : latin1Slice !== undefined ? latin1Slice.call(s.ids, at, at + len) : s.ids.toString('latin1', at, at + len);
    }
    this.read++;
    if (this.read % READ_EVERY === 0) this.publishRead();
    return true;
  }

  /** The worker's counts and problems once it has finished. */
  end(): Promise<OpsThreadEnd> {
    this.publishRead();
    // Awaited now: the process must wait for its last message (unref'd, it would exit first).
    this.worker.ref();
    return this.ended;
  }

  /** Stop the worker (nothing if it has ended); resolves once it has. */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
