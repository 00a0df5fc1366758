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
  /** The page open() writes to, and the position of its first slot. */
  private wp: Page | undefined;
  private wBase: number;
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
    this.wBase = -this.size;
  }

  /** A call began at `at` (trace ns) on `line`; the number names its point for `close`. */
  open(at: number, line: number): number {
    const i = this.n++;
    let j = i - this.wBase;
    if (j === this.size) {
      this.writeNext(i);
      j = 0;
    }
    const p = this.wp!;
    const seq = this.seq++;
    p.seqs[j] = seq;
    p.ats[j] = at;
    p.lines[j] = line;
    p.vs[j] = 0;
    p.opens[j] = 1;
    p.tieSeqs[j] = -1;
    return seq;
  }

  /** Position i starts a page: write there (a page held already, else a free or new one). */
  private writeNext(i: number): void {
    const k = i >> this.shift;
    let p = this.pages[k];
    if (p === undefined) {
      p = this.free.pop() ?? newPage(this.size);
      this.pages.push(p);
    }
    this.wp = p;
    this.wBase = i;
  }

  /** Give the pages wholly before h back to the free list. */
  private letGo(): void {
    const size = this.size;
    while (this.h >= size) {
      this.free.push(this.pages.shift()!);
      this.h -= size;
      this.n -= size;
      this.wBase -= size;
    }
  }

  /** Position of the open point `seq`, or -1 (resolved, or let go). */
  private find(seq: number): number {
    if (this.h === this.n) return -1;
    const pages = this.pages;
    const shift = this.shift;
    const mask = this.mask;
    // Seqs rise with the position: first the page (most often the only one), then the slot.
    let pl = this.h >> shift;
    let ph = (this.n - 1) >> shift;
    while (pl < ph) {
      const mid = (pl + ph + 1) >> 1;
      if (pages[mid]!.seqs[0]! <= seq) pl = mid;
      else ph = mid - 1;
    }
    const p = pages[pl]!;
    const base = pl << shift;
    const seqs = p.seqs;
    let lo = Math.max(this.h, base) - base;
    let hi = Math.min(this.n - 1, base + mask) - base;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = seqs[mid]!;
      if (s === seq) return p.opens[mid] === 1 ? base + mid : -1;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The call of point `seq` resolved now; `how` says over what it counts. */
  close(seq: number, how: number): void {
    const pos = this.find(seq);
    if (pos < 0) return;
    const p = this.pages[pos >> this.shift]!;
    const k = pos & this.mask;
    p.opens[k] = 0;
    if (how === INTERVAL) {
      if (pos >= this.wBase) {
        // Most often the call and every point after it are on the write page.
        const { vs, tieSeqs } = p;
        for (let j = this.n - 1 - this.wBase; j >= k; j--) {
          vs[j] = vs[j]! + 1;
          const t = tieSeqs[j]!;
          if (t >= 0 && t < seq) tieSeqs[j] = -1;
        }
      } else this.lift(pos, seq);
    } else if (how === POINT) {
      p.vs[k] = p.vs[k]! + 1;
      p.tieSeqs[k] = -1;
    }
    // Only the oldest unresolved call's close can make points final; any may call for a prune.
    if (pos === this.h) this.settle();
    else if (this.n - this.h > this.pruneAt) this.prune();
  }

  /** Every point from `pos` on (they all began while call `seq` was open) gains it. */
  private lift(pos: number, seq: number): void {
    const shift = this.shift;
    for (let i = this.n - 1; i >= pos; ) {
      const base = (i >> shift) << shift;
      const { vs, tieSeqs } = this.pages[i >> shift]!;
      for (let j = i - base, end = Math.max(pos, base) - base; j >= end; j--) {
        vs[j] = vs[j]! + 1;
        // The dropped point j stands in for began before seq: it does not get this one.
        const t = tieSeqs[j]!;
        if (t >= 0 && t < seq) tieSeqs[j] = -1;
      }
      i = base - 1;
    }
  }

  /** Points before the oldest unresolved call are final. */
  private settle(): void {
    const shift = this.shift;
    const n = this.n;
    let h = this.h;
    while (h < n) {
      const base = (h >> shift) << shift;
      const p = this.pages[h >> shift]!;
      const opens = p.opens;
      const stop = Math.min(n, base + this.size) - base;
      let j = h - base;
      for (; j < stop && opens[j] === 0; j++) {
        const v = p.vs[j]!;
        if (v > this.value) {
          this.value = v;
          const tied = p.tieSeqs[j]! >= 0;
          this.at = tied ? p.tieAts[j]! : p.ats[j]!;
          this.line = tied ? p.tieLines[j]! : p.lines[j]!;
        }
      }
      h = base + j;
      if (j < stop) break;
    }
    this.h = h;
    if (h === n) {
      // Nothing held: every page is free again, in place.
      this.h = 0;
      this.n = 0;
      this.wp = this.pages[0];
      this.wBase = 0;
    } else if (n - h > this.pruneAt) {
      this.prune();
    } else if (h >= this.size) {
      this.letGo();
    }
  }

  /** Drop resolved points that a later point dominates (see the file comment), compacting toward the end. */
  private prune(): void {
    const pages = this.pages;
    const shift = this.shift;
    const mask = this.mask;
    const h = this.h;
    let w = this.n;
    let max = -1;
    // Where the leftmost point of the highest value so far now is (page and slot).
    let mp: Page | undefined;
    let mj = 0;
    // An open call lies between this point and the max: its INTERVAL close would lift the max
    // and not this point, so an equal value here is no longer a tie that the max can carry.
    let openBetween = false;
    // Read page by page, from the end; the write position w trails behind (at or after the read).
    for (let i = this.n - 1; i >= h; ) {
      const base = (i >> shift) << shift;
      const { seqs, ats, lines, vs, opens, tieSeqs, tieAts, tieLines } = pages[i >> shift]!;
      const end = Math.max(h, base) - base;
      for (let j = i - base; j >= end; j--) {
        const v = vs[j]!;
        if (opens[j] === 0 && mp !== undefined && (v < max || (v === max && !openBetween))) {
          const tied = tieSeqs[j]! >= 0;
          const first = tied ? tieSeqs[j]! : seqs[j]!;
          if (v === max && (mp.tieSeqs[mj]! < 0 || first < mp.tieSeqs[mj]!)) {
            mp.tieSeqs[mj] = first;
            mp.tieAts[mj] = tied ? tieAts[j]! : ats[j]!;
            mp.tieLines[mj] = tied ? tieLines[j]! : lines[j]!;
          }
          continue;
        }
        w--;
        const q = pages[w >> shift]!;
        const k = w & mask;
        if (w !== base + j) {
          q.seqs[k] = seqs[j]!;
          q.ats[k] = ats[j]!;
          q.lines[k] = lines[j]!;
          q.vs[k] = v;
          q.opens[k] = opens[j]!;
          q.tieSeqs[k] = tieSeqs[j]!;
          q.tieAts[k] = tieAts[j]!;
          q.tieLines[k] = tieLines[j]!;
        }
        // The leftmost of equal values takes the ties, so the earliest time survives.
        if (v >= max) {
          max = v;
          mp = q;
          mj = k;
          openBetween = false;
        } else if (opens[j] === 1) {
          openBetween = true;
        }
      }
      i = base - 1;
    }
    this.h = w;
    this.pruneAt = Math.max(64, 2 * (this.n - w));
    this.letGo();
  }

  /** Points held now: open calls and resolved points that may still become the mark (for tests of the memory bound). */
  get held(): number {
    return this.n - this.h;
  }

  /** Bytes of the pages this sweep has made, in use or free (for tests of the memory bound). */
  get bytes(): number {
    return (this.pages.length + this.free.length) * this.size * POINT_BYTES;
  }
}
