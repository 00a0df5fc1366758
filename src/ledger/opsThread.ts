import { Worker } from 'node:worker_threads';
import { MAX_LINE, SyncFileLines } from './lines.js';
import { fastOpInto, fullOpBytes, opIdBytes, type OpRecord } from './records.js';

/**
 * ops.jsonl parsed on a second thread while the main thread scans the trace. The worker writes
 * records into a ring in shared memory; the ledger pulls them synchronously, waiting
 * (Atomics.wait) only when the ring is empty. Problems and counts come back as one message at
 * the end. With probe.jsonl the records name operations, so each record's id travels too: its
 * bytes, as they stood in the line, in a second ring (the main thread decodes them).
 */

const SLOTS = 1 << 15;
/** Bytes of the id ring (an id is at most a line, MAX_LINE, long). */
const ID_BYTES = 1 << 22;
/** Header (Int32): [0] records written, [1] records read, [2] done flag. */
const H_WRITTEN = 0;
const H_READ = 1;
const H_DONE = 2;
/** Int32 fields per slot: task, line, reaches (0 false, 1 true, 2 absent), id offset, id length. */
const INTS = 5;

interface Shared {
  header: Int32Array;
  num: Float64Array; // submit, done (NaN: null) per slot
  int: Int32Array;
  ids: Buffer;
}

function views(sab: SharedArrayBuffer): Shared {
  return {
    header: new Int32Array(sab, 0, 4),
    num: new Float64Array(sab, 16, SLOTS * 2),
    int: new Int32Array(sab, 16 + SLOTS * 16, SLOTS * INTS),
    ids: Buffer.from(sab, 16 + SLOTS * 16 + SLOTS * INTS * 4, ID_BYTES),
  };
}

const SAB_BYTES = 16 + SLOTS * 16 + SLOTS * INTS * 4 + ID_BYTES;

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

/** The worker's side: read, parse, write records (and, with `ids`, their ids); wait when a ring is full. */
export function runOpsWorker(file: string, sab: SharedArrayBuffer, keep: number, ids = false): OpsThreadEnd {
  const s = views(sab);
  const reader = new SyncFileLines(file);
  const rec: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 0 };
  const end: OpsThreadEnd = { valid: 0, lines: 0, problems: [], problemCount: 0 };
  const problem = (p: OpsProblem): void => {
    end.problemCount++;
    if (end.problems.length < keep) end.problems.push(p);
  };
  let written = 0;
  let sinceNotify = 0;
  // The id ring: the next id goes at `wpos`; the oldest unread record's id starts the used part.
  let wpos = 0;
  const waitForReader = (): void => {
    Atomics.store(s.header, H_WRITTEN, written);
    Atomics.notify(s.header, H_WRITTEN);
    Atomics.wait(s.header, H_READ, Atomics.load(s.header, H_READ), 50);
  };
  /** Where an id of `len` bytes fits now, or -1 (the reader has not freed enough yet). */
  const idRoom = (len: number): number => {
    const read = Atomics.load(s.header, H_READ);
    if (read === written) return len <= ID_BYTES - wpos ? wpos : 0;
    const oldest = s.int[(read % SLOTS) * INTS + 3]!;
    if (wpos >= oldest) {
      if (len <= ID_BYTES - wpos) return wpos;
      return len < oldest ? 0 : -1;
    }
    return len < oldest - wpos ? wpos : -1;
  };
  const put = (r: OpRecord, idFrom?: Buffer, idStart = 0, idEnd = 0): void => {
    while (written - Atomics.load(s.header, H_READ) >= SLOTS) waitForReader();
    const i = written % SLOTS;
    if (ids) {
      // The id's bytes: from the line (the fast path), or encoded (the full parser's string).
      const bytes = idFrom ?? Buffer.from(r.op, 'utf8');
      const from = idFrom === undefined ? 0 : idStart;
      const len = (idFrom === undefined ? bytes.length : idEnd) - from;
      let at = idRoom(len);
      while (at < 0) {
        waitForReader();
        at = idRoom(len);
      }
      bytes.copy(s.ids, at, from, from + len);
      s.int[i * INTS + 3] = at;
      s.int[i * INTS + 4] = len;
      wpos = at + len;
    }
    s.num[i * 2] = r.submitNs;
    s.num[i * 2 + 1] = r.doneNs === null ? NaN : r.doneNs;
    s.int[i * INTS] = r.task;
    s.int[i * INTS + 1] = r.line;
    s.int[i * INTS + 2] = r.reachesTarget === undefined ? 2 : r.reachesTarget ? 1 : 0;
    written++;
    if (++sinceNotify >= 1024) {
      sinceNotify = 0;
      Atomics.store(s.header, H_WRITTEN, written);
      Atomics.notify(s.header, H_WRITTEN);
    }
  };
  for (;;) {
    const l = reader.next();
    if (l === undefined) break;
    end.lines = l.no;
    if (l.truncated) {
      problem({ line: l.no, expected: `a line of at most ${MAX_LINE} characters`, got: 'a longer line' });
      continue;
    }
    let blank = true;
    for (let i = l.start; i < l.end; i++) {
      const c = l.b[i];
      if (c !== 32 && c !== 9 && c !== 13) {
        blank = false;
        break;
      }
    }
    if (blank) continue;
    if (fastOpInto(rec, l.b, l.start, l.end, l.no, false)) {
      end.valid++;
      put(rec, l.b, opIdBytes.start, opIdBytes.end);
      continue;
    }
    const r = fullOpBytes(l.b, l.start, l.end, l.no);
    if (r.ok) {
      end.valid++;
      put(r.value);
    } else {
      const cut = reader.lastLineUnterminated ? ' (the last line has no newline: truncated?)' : '';
      problem({ line: l.no, expected: r.expected, got: r.got + cut });
    }
  }
  Atomics.store(s.header, H_WRITTEN, written);
  Atomics.store(s.header, H_DONE, 1);
  Atomics.notify(s.header, H_WRITTEN);
  return end;
}

/** The ledger's side: a pull reader over the worker's ring. */
export class OpsThread {
  private readonly sab = new SharedArrayBuffer(SAB_BYTES);
  private readonly s = views(this.sab);
  private readonly worker: Worker;
  private read = 0;
  private available = 0;
  private readonly ended: Promise<OpsThreadEnd>;

  /** `ids`: the records name operations (probe.jsonl), so the ids come across too. */
  constructor(file: string, keep: number, private readonly ids = false) {
    this.worker = new Worker(new URL('./opsWorker.js', import.meta.url), { workerData: { file, sab: this.sab, keep, ids } });
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

  /** The next operation into `out`, or false at the end. */
  next(out: OpRecord): boolean {
    const h = this.s.header;
    while (this.read >= this.available) {
      this.available = Atomics.load(h, H_WRITTEN);
      if (this.read < this.available) break;
      if (Atomics.load(h, H_DONE) === 1) {
        this.available = Atomics.load(h, H_WRITTEN);
        if (this.read >= this.available) return false;
        break;
      }
      Atomics.wait(h, H_WRITTEN, this.available, 50);
    }
    const i = this.read % SLOTS;
    const s = this.s;
    if (this.ids) {
      const at = s.int[i * INTS + 3]!;
      out.op = s.ids.toString('utf8', at, at + s.int[i * INTS + 4]!);
    } else {
      out.op = '';
    }
    out.submitNs = s.num[i * 2]!;
    const done = s.num[i * 2 + 1]!;
    out.doneNs = Number.isNaN(done) ? null : done;
    out.task = s.int[i * INTS]!;
    out.line = s.int[i * INTS + 1]!;
    const reaches = s.int[i * INTS + 2]!;
    out.reachesTarget = reaches === 2 ? undefined : reaches === 1;
    this.read++;
    if ((this.read & 1023) === 0) {
      Atomics.store(h, H_READ, this.read);
      Atomics.notify(h, H_READ);
    }
    return true;
  }

  /** The worker's counts and problems once it has finished. */
  end(): Promise<OpsThreadEnd> {
    Atomics.store(this.s.header, H_READ, this.read);
    Atomics.notify(this.s.header, H_READ);
    // Awaited now: the process must wait for its last message (unref'd, it would exit first).
    this.worker.ref();
    return this.ended;
  }

  stop(): void {
    void this.worker.terminate();
  }
}
