import { Worker } from 'node:worker_threads';
import { MAX_LINE, SyncFileLines } from './lines.js';
import { fastOpInto, fullOpBytes, type OpRecord } from './records.js';

/**
 * ops.jsonl parsed on a second thread while the main thread scans the trace (trace text only:
 * its operations need no id, so a record is numbers only). The worker writes records into a
 * ring in shared memory; the ledger pulls them synchronously, waiting (Atomics.wait) only when
 * the ring is empty. Problems and counts come back as one message at the end.
 */

const SLOTS = 1 << 15;
/** Header (Int32): [0] records written, [1] records read, [2] done flag. */
const H_WRITTEN = 0;
const H_READ = 1;
const H_DONE = 2;

interface Shared {
  header: Int32Array;
  num: Float64Array; // submit, done (NaN: null) per slot
  int: Int32Array; // task, line, reaches (0 false, 1 true, 2 absent) per slot
}

function views(sab: SharedArrayBuffer): Shared {
  return {
    header: new Int32Array(sab, 0, 4),
    num: new Float64Array(sab, 16, SLOTS * 2),
    int: new Int32Array(sab, 16 + SLOTS * 16, SLOTS * 3),
  };
}

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

/** The worker's side: read, parse, write records; wait when the ring is full. */
export function runOpsWorker(file: string, sab: SharedArrayBuffer, keep: number): OpsThreadEnd {
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
  const put = (r: OpRecord): void => {
    while (written - Atomics.load(s.header, H_READ) >= SLOTS) {
      Atomics.store(s.header, H_WRITTEN, written);
      Atomics.notify(s.header, H_WRITTEN);
      Atomics.wait(s.header, H_READ, Atomics.load(s.header, H_READ), 50);
    }
    const i = written % SLOTS;
    s.num[i * 2] = r.submitNs;
    s.num[i * 2 + 1] = r.doneNs === null ? NaN : r.doneNs;
    s.int[i * 3] = r.task;
    s.int[i * 3 + 1] = r.line;
    s.int[i * 3 + 2] = r.reachesTarget === undefined ? 2 : r.reachesTarget ? 1 : 0;
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
      put(rec);
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
  private readonly sab = new SharedArrayBuffer(16 + SLOTS * 16 + SLOTS * 12);
  private readonly s = views(this.sab);
  private readonly worker: Worker;
  private read = 0;
  private available = 0;
  private readonly ended: Promise<OpsThreadEnd>;

  constructor(file: string, keep: number) {
    this.worker = new Worker(new URL('./opsWorker.js', import.meta.url), { workerData: { file, sab: this.sab, keep } });
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
    out.op = '';
    out.submitNs = s.num[i * 2]!;
    const done = s.num[i * 2 + 1]!;
    out.doneNs = Number.isNaN(done) ? null : done;
    out.task = s.int[i * 3]!;
    out.line = s.int[i * 3 + 1]!;
    const reaches = s.int[i * 3 + 2]!;
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
