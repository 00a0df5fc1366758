import { KeyHeap } from './heap.js';
import type { OpRecord } from './records.js';

/**
 * The reorder window over ops.jsonl (see DEFAULT_OPS_REORDER in read.ts for the bound it
 * enforces): lines in submit order so far queue first-in first-out (a sorted file costs a
 * queue, not a heap); a line below the largest submit_ns seen goes to a heap. `pop` hands out
 * the smaller of the two heads.
 *
 * The held lines live in typed arrays by slot, not in objects: the window is always full (it
 * holds its bound's worth of lines all the time), and objects that live that long are promoted
 * and then traced by every major collection, while a heap of objects compares through pointers
 * scattered over the old generation (15 % of a shuffled probe.jsonl run's profile went there).
 * Only an operation's id, when records name operations, is kept as a string.
 */
/** Bytes an id may take to be kept as bytes (a UUID's 36 fit); a longer one is kept as a string. */
const ID_BYTES = 40;

/** Buffer's own latin1 decoder (see flatjson.ts): ASCII bytes decode the same as latin1. */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (start: number, end: number) => string }).latin1Slice;

export class ReorderWindow {
  private cap = 0;
  private submit: Float64Array = new Float64Array(0);
  /** NaN: null. */
  private done: Float64Array = new Float64Array(0);
  private task: Float64Array = new Float64Array(0);
  private line: Float64Array = new Float64Array(0);
  /** 0 false, 1 true, 2 absent. */
  private reaches = new Uint8Array(0);
  /**
   * Ids by slot: as ASCII bytes, ID_BYTES per slot, when they fit (idLen the length), else as
   * strings (idLen -1). A window's worth of id strings, each held for a window's worth of lines,
   * outlived V8's young generation and were copied, promoted and traced by every full
   * collection: a 1 M-record probe.jsonl run took 2.45 s of CPU and 116 MB with the default
   * window against 1.8 s and 68 MB with a window of 1 line. Made when handed out, a string
   * lives only while its operation is active.
   */
  private idBytes: Buffer = Buffer.alloc(0);
  private idLen = new Int32Array(0);
  private ids: string[] = [];
  private free = new Int32Array(0);
  private nFree = 0;
  private ring = new Int32Array(0);
  private head = 0;
  private count = 0;
  // The late lines' slots by submit_ns, then line.
  private readonly heap = new KeyHeap<number>();
  private max = -Infinity;

  /** `keepIds`: keep each operation's id (records name operations: probe.jsonl). */
  constructor(private readonly keepIds: boolean) {}

  get size(): number {
    return this.count + this.heap.size;
  }

  private grow(): void {
    const old = this.cap;
    const cap = Math.max(1024, old * 2);
    const f64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    this.submit = f64(this.submit);
    this.done = f64(this.done);
    this.task = f64(this.task);
    this.line = f64(this.line);
    const r = new Uint8Array(cap);
    r.set(this.reaches);
    this.reaches = r;
    if (this.keepIds) {
      const ib = Buffer.allocUnsafe(cap * ID_BYTES);
      ib.set(this.idBytes);
      this.idBytes = ib;
      const il = new Int32Array(cap);
      il.set(this.idLen);
      this.idLen = il;
    }
    // Unroll the ring into the larger one.
    const ring = new Int32Array(cap);
    for (let i = 0; i < this.count; i++) ring[i] = this.ring[(this.head + i) % old]!;
    this.ring = ring;
    this.head = 0;
    // Every old slot is in use (the window grows only when full): the new ones are free.
    const free = new Int32Array(cap);
    for (let s = cap - 1, k = 0; s >= old; s--, k++) free[k] = s;
    this.free = free;
    this.nFree = cap - old;
    this.cap = cap;
  }

  /**
   * Hold a copy of `x` (the caller may reuse it). Its id is `x.op`, or when `idIn` is given the
   * bytes idIn[idFrom, idTo) (its characters when `ascii`: read when the line was, not yet decoded).
   */
  push(x: OpRecord, idIn?: Buffer, idFrom = 0, idTo = 0, ascii = false): void {
    if (this.nFree === 0) this.grow();
    const s = this.free[--this.nFree]!;
    this.submit[s] = x.submitNs;
    this.done[s] = x.doneNs === null ? NaN : x.doneNs;
    this.task[s] = x.task;
    this.line[s] = x.line;
    this.reaches[s] = x.reachesTarget === undefined ? 2 : x.reachesTarget ? 1 : 0;
    if (this.keepIds) {
      const n = idTo - idFrom;
      if (idIn !== undefined && ascii && n <= ID_BYTES) {
        // Byte by byte: an id is a few bytes, and subarray() then set() made a Buffer object
        // per line (a tenth of the ops parse with ids).
        const to = this.idBytes;
        for (let k = 0, at = s * ID_BYTES; k < n; k++) to[at + k] = idIn[idFrom + k]!;
        this.idLen[s] = n;
      } else {
        this.ids[s] = idIn !== undefined ? idIn.toString('utf8', idFrom, idTo) : x.op;
        this.idLen[s] = -1;
      }
    }
    if (x.submitNs < this.max) {
      this.heap.push(s, x.submitNs, x.line);
      return;
    }
    this.max = x.submitNs;
    this.ring[(this.head + this.count) % this.cap] = s;
    this.count++;
  }

  /** The smallest held line into `out`; false when none is held. */
  popInto(out: OpRecord): boolean {
    let s: number;
    const late = this.heap.peek();
    const q = this.ring[this.head]!;
    const lk = this.heap.peekKey();
    if (this.count > 0 && (late === undefined || !(lk < this.submit[q]! || (lk === this.submit[q]! && this.heap.peekTie() < this.line[q]!)))) {
      s = q;
      this.head = (this.head + 1) % this.cap;
      this.count--;
    } else if (late !== undefined) {
      s = this.heap.pop()!;
    } else {
      return false;
    }
    out.submitNs = this.submit[s]!;
    const done = this.done[s]!;
    out.doneNs = done === done ? done : null;
    out.task = this.task[s]!;
    out.line = this.line[s]!;
    const r = this.reaches[s]!;
    out.reachesTarget = r === 2 ? undefined : r === 1;
    if (this.keepIds) {
      const n = this.idLen[s]!;
      if (n >= 0) {
        const at = s * ID_BYTES;
        out.op = latin1Slice !== undefined ? latin1Slice.call(this.idBytes, at, at + n) : this.idBytes.toString('latin1', at, at + n);
      } else {
        out.op = this.ids[s]!;
        this.ids[s] = '';
      }
    } else {
      out.op = '';
    }
    this.free[this.nFree++] = s;
    return true;
  }
}
