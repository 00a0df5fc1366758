/**
 * A high-water mark of calls whose counting is decided only when each call resolves.
 *
 * With a separate entry event (trace text), an entry tells that a call began, but whether it
 * held a return-probe instance is known only later: at its return (it did), or never (missed,
 * filtered, or still running at stop). The most calls "outstanding at once" under such a rule
 * cannot be counted on the fly; this sweep counts it exactly, in one pass, after the fact.
 *
 * Each entry adds a point (the instant it began); when a call resolves it counts over
 * [its entry, its resolution] (INTERVAL), at its own entry instant only (POINT), or not at all
 * (NONE). A point's value is final once every call that began before it has resolved, and the
 * mark is the largest final value (the first point to reach it gives `at`/`line`).
 *
 * Memory: one point per unresolved call, plus resolved points that can still become the mark.
 * A resolved point can only gain from calls that began before it, and those also cover every
 * later point, so a resolved point with a later point at least as high can never be the first
 * maximum: it is dropped. An equal later point carries its time as a tie, but only with no open
 * call between the two (that call's close would lift the later point alone, and the tie would
 * be lost while the dropped point still ties another). What stays has falling values, equal
 * ones only across an open call, so at most 2 x open calls + mark + 1 points are kept.
 *
 * The points live in typed arrays in entry order, not in objects: every entry makes one per
 * sweep, and an object with two boxed doubles per entry was a third of the ledger's allocation.
 * The arrays are cut in fixed pages, taken from and given back to a free list as the held
 * points move along: the memory is the most points ever held, rounded up to a page. Arrays
 * that doubled left each outgrown copy to the next full collection, which a long run with a
 * few calls that never return (missed outside every operation) may not see before it ends:
 * the memory then grew with the length of the trace.
 * A call knows its point by its sequence number (found again by binary search), so closing a
 * call twice, or after its point was let go, does nothing.
 */
export const INTERVAL = 0;
export const POINT = 1;
export const NONE = 2;

/** One page of points: the columns are views on one buffer. */
interface Page {
  seqs: Float64Array;
  ats: Float64Array;
  lines: Float64Array;
  /** Seq of an earlier dropped point with the same value so far (-1: none), and its time and line. */
  tieSeqs: Float64Array;
  tieAts: Float64Array;
  tieLines: Float64Array;
  vs: Int32Array;
  opens: Uint8Array;
}

/** Bytes a point takes: six doubles, an int32 and a byte. */
const POINT_BYTES = 6 * 8 + 4 + 1;

function newPage(size: number): Page {
  const buf = new ArrayBuffer(size * POINT_BYTES);
  const f64 = (k: number): Float64Array => new Float64Array(buf, k * 8 * size, size);
  return { seqs: f64(0), ats: f64(1), lines: f64(2), tieSeqs: f64(3), tieAts: f64(4), tieLines: f64(5), vs: new Int32Array(buf, 48 * size, size), opens: new Uint8Array(buf, 52 * size, size) };
}

/** Points a page holds by default: 2^10 (53 KiB). */
export const SWEEP_PAGE_SHIFT = 10;

export class RetroSweep {
  private readonly shift: number;
  private readonly size: number;
  private readonly mask: number;
  /** Position i is slot i & mask of pages[i >> shift]; the points held are at [h, n). */
  private pages: Page[] = [];
  private readonly free: Page[] = [];
  private h = 0;
  private n = 0;
  private seq = 0;
  private pruneAt = 64;
  value = 0;
  at: number | undefined;
  line: number | undefined;

  /** `pageShift`: log2 of the points a page holds (tests make it small to cross pages often). */
  constructor(pageShift = SWEEP_PAGE_SHIFT) {
    this.shift = pageShift;
    this.size = 1 << pageShift;
    this.mask = this.size - 1;
  }

  /** A call began at `at` (trace ns) on `line`; the number names its point for `close`. */
  open(at: number, line: number): number {
    if (this.n === this.pages.length << this.shift) this.pages.push(this.free.pop() ?? newPage(this.size));
    const i = this.n++;
    const p = this.pages[i >> this.shift]!;
    const j = i & this.mask;
    const seq = this.seq++;
    p.seqs[j] = seq;
    p.ats[j] = at;
    p.lines[j] = line;
    p.vs[j] = 0;
    p.opens[j] = 1;
    p.tieSeqs[j] = -1;
    return seq;
  }

  /** Give the pages wholly before h back to the free list. */
  private letGo(): void {
    const size = this.size;
    while (this.h >= size) {
      this.free.push(this.pages.shift()!);
      this.h -= size;
      this.n -= size;
    }
  }

  /** Position of the open point `seq`, or -1 (resolved, or let go). */
  private find(seq: number): number {
    const pages = this.pages;
    const shift = this.shift;
    const mask = this.mask;
    let lo = this.h;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const p = pages[mid >> shift]!;
      const s = p.seqs[mid & mask]!;
      if (s === seq) return p.opens[mid & mask] === 1 ? mid : -1;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The call of point `seq` resolved now; `how` says over what it counts. */
  close(seq: number, how: number): void {
    const pos = this.find(seq);
    if (pos < 0) return;
    const shift = this.shift;
    const mask = this.mask;
    const at = this.pages[pos >> shift]!;
    const k = pos & mask;
    at.opens[k] = 0;
    if (how === INTERVAL) {
      // Every point from its entry on (they all began while it was open) gains it.
      let i = this.n - 1;
      while (i >= pos) {
        const p = this.pages[i >> shift]!;
        const vs = p.vs;
        const ties = p.tieSeqs;
        const start = Math.max(pos, i & ~mask);
        for (let j = i & mask, end = start & mask; j >= end; j--) {
          vs[j] = vs[j]! + 1;
          // The dropped point j stands in for began before seq: it does not get this one.
          const t = ties[j]!;
          if (t >= 0 && t < seq) ties[j] = -1;
        }
        i = start - 1;
      }
    } else if (how === POINT) {
      at.vs[k] = at.vs[k]! + 1;
      at.tieSeqs[k] = -1;
    }
    this.settle();
  }

  /** Points before the oldest unresolved call are final. */
  private settle(): void {
    const pages = this.pages;
    const shift = this.shift;
    const mask = this.mask;
    while (this.h < this.n) {
      const p = pages[this.h >> shift]!;
      const j = this.h & mask;
      if (p.opens[j] !== 0) break;
      this.h++;
      const v = p.vs[j]!;
      if (v > this.value) {
        this.value = v;
        const tied = p.tieSeqs[j]! >= 0;
        this.at = tied ? p.tieAts[j]! : p.ats[j]!;
        this.line = tied ? p.tieLines[j]! : p.lines[j]!;
      }
    }
    if (this.h === this.n) {
      // Nothing held: every page is free again, in place.
      this.h = 0;
      this.n = 0;
    } else if (this.n - this.h > this.pruneAt) {
      this.prune();
    } else {
      this.letGo();
    }
  }

  /** Drop resolved points that a later point dominates (see the file comment), compacting toward the end. */
  private prune(): void {
    const pages = this.pages;
    const shift = this.shift;
    const mask = this.mask;
    let w = this.n;
    let max = -1;
    // Where the leftmost point of the highest value so far now is (page and slot).
    let mp: Page | undefined;
    let mj = 0;
    // An open call lies between this point and the max: its INTERVAL close would lift the max
    // and not this point, so an equal value here is no longer a tie that the max can carry.
    let openBetween = false;
    for (let i = this.n - 1; i >= this.h; i--) {
      const p = pages[i >> shift]!;
      const j = i & mask;
      const v = p.vs[j]!;
      if (p.opens[j] === 0 && mp !== undefined && (v < max || (v === max && !openBetween))) {
        const tied = p.tieSeqs[j]! >= 0;
        const first = tied ? p.tieSeqs[j]! : p.seqs[j]!;
        if (v === max && (mp.tieSeqs[mj]! < 0 || first < mp.tieSeqs[mj]!)) {
          mp.tieSeqs[mj] = first;
          mp.tieAts[mj] = tied ? p.tieAts[j]! : p.ats[j]!;
          mp.tieLines[mj] = tied ? p.tieLines[j]! : p.lines[j]!;
        }
        continue;
      }
      w--;
      const q = pages[w >> shift]!;
      const k = w & mask;
      if (w !== i) {
        q.seqs[k] = p.seqs[j]!;
        q.ats[k] = p.ats[j]!;
        q.lines[k] = p.lines[j]!;
        q.vs[k] = v;
        q.opens[k] = p.opens[j]!;
        q.tieSeqs[k] = p.tieSeqs[j]!;
        q.tieAts[k] = p.tieAts[j]!;
        q.tieLines[k] = p.tieLines[j]!;
      }
      // The leftmost of equal values takes the ties, so the earliest time survives.
      if (v >= max) {
        max = v;
        mp = q;
        mj = k;
        openBetween = false;
      } else if (q.opens[k] === 1) {
        openBetween = true;
      }
    }
    this.h = w;
    this.pruneAt = Math.max(64, 2 * (this.n - w));
    this.letGo();
  }

  /** Points referenced now, final ones not yet let go included (for tests of the memory bound). */
  get held(): number {
    return this.n - this.h;
  }

  /** Bytes of the pages this sweep has made, in use or free (for tests of the memory bound). */
  get bytes(): number {
    return (this.pages.length + this.free.length) * this.size * POINT_BYTES;
  }
}
