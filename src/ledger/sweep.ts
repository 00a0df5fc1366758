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
 * A call knows its point by its sequence number (found again by binary search), so closing a
 * call twice, or after its point was let go, does nothing.
 */
export const INTERVAL = 0;
export const POINT = 1;
export const NONE = 2;

export class RetroSweep {
  // Points held, in entry (seq) order, at positions [h, n).
  private cap = 0;
  private seqs: Float64Array = new Float64Array(0);
  private ats: Float64Array = new Float64Array(0);
  private lines: Float64Array = new Float64Array(0);
  private vs: Int32Array = new Int32Array(0);
  private opens: Uint8Array = new Uint8Array(0);
  /** Seq of an earlier dropped point with the same value so far (-1: none), and its time and line. */
  private tieSeqs: Float64Array = new Float64Array(0);
  private tieAts: Float64Array = new Float64Array(0);
  private tieLines: Float64Array = new Float64Array(0);
  private h = 0;
  private n = 0;
  private seq = 0;
  private pruneAt = 64;
  value = 0;
  at: number | undefined;
  line: number | undefined;

  /** A call began at `at` (trace ns) on `line`; the number names its point for `close`. */
  open(at: number, line: number): number {
    if (this.n === this.cap) this.makeRoom();
    const i = this.n++;
    const seq = this.seq++;
    this.seqs[i] = seq;
    this.ats[i] = at;
    this.lines[i] = line;
    this.vs[i] = 0;
    this.opens[i] = 1;
    this.tieSeqs[i] = -1;
    return seq;
  }

  /** Move the held points to the front, or grow when they fill the arrays. */
  private makeRoom(): void {
    const h = this.h;
    const held = this.n - h;
    if (h > 0 && held <= this.cap / 2) {
      this.move(0, h, held);
      this.h = 0;
      this.n = held;
      return;
    }
    const cap = Math.max(256, this.cap * 2);
    const f64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a.subarray(h, this.n));
      return b;
    };
    this.seqs = f64(this.seqs);
    this.ats = f64(this.ats);
    this.lines = f64(this.lines);
    this.tieSeqs = f64(this.tieSeqs);
    this.tieAts = f64(this.tieAts);
    this.tieLines = f64(this.tieLines);
    const vs = new Int32Array(cap);
    vs.set(this.vs.subarray(h, this.n));
    this.vs = vs;
    const opens = new Uint8Array(cap);
    opens.set(this.opens.subarray(h, this.n));
    this.opens = opens;
    this.cap = cap;
    this.h = 0;
    this.n = held;
  }

  /** Copy `count` points from position `from` to position `to`. */
  private move(to: number, from: number, count: number): void {
    const end = from + count;
    this.seqs.copyWithin(to, from, end);
    this.ats.copyWithin(to, from, end);
    this.lines.copyWithin(to, from, end);
    this.vs.copyWithin(to, from, end);
    this.opens.copyWithin(to, from, end);
    this.tieSeqs.copyWithin(to, from, end);
    this.tieAts.copyWithin(to, from, end);
    this.tieLines.copyWithin(to, from, end);
  }

  /** Position of the open point `seq`, or -1 (resolved, or let go). */
  private find(seq: number): number {
    const seqs = this.seqs;
    let lo = this.h;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const s = seqs[mid]!;
      if (s === seq) return this.opens[mid] === 1 ? mid : -1;
      if (s < seq) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The call of point `seq` resolved now; `how` says over what it counts. */
  close(seq: number, how: number): void {
    const pos = this.find(seq);
    if (pos < 0) return;
    this.opens[pos] = 0;
    if (how === INTERVAL) {
      // Every point from its entry on (they all began while it was open) gains it.
      const vs = this.vs;
      const ties = this.tieSeqs;
      for (let i = this.n - 1; i >= pos; i--) {
        vs[i] = vs[i]! + 1;
        // The dropped point i stands in for began before seq: it does not get this one.
        const t = ties[i]!;
        if (t >= 0 && t < seq) ties[i] = -1;
      }
    } else if (how === POINT) {
      this.vs[pos] = this.vs[pos]! + 1;
      this.tieSeqs[pos] = -1;
    }
    this.settle();
  }

  /** Points before the oldest unresolved call are final. */
  private settle(): void {
    const opens = this.opens;
    const vs = this.vs;
    while (this.h < this.n && opens[this.h] === 0) {
      const i = this.h++;
      const v = vs[i]!;
      if (v > this.value) {
        this.value = v;
        const tied = this.tieSeqs[i]! >= 0;
        this.at = tied ? this.tieAts[i]! : this.ats[i]!;
        this.line = tied ? this.tieLines[i]! : this.lines[i]!;
      }
    }
    if (this.h === this.n) {
      this.h = 0;
      this.n = 0;
    } else if (this.n - this.h > this.pruneAt) {
      this.prune();
    }
    // Final points before h are let go when room is made (open()).
  }

  /** Drop resolved points that a later point dominates (see the file comment), compacting toward the end. */
  private prune(): void {
    const { seqs, ats, lines, vs, opens, tieSeqs, tieAts, tieLines } = this;
    let w = this.n;
    let max = -1;
    let maxAt = -1;
    // An open call lies between this point and maxAt: its INTERVAL close would lift maxAt and
    // not this point, so an equal value here is no longer a tie that maxAt can carry.
    let openBetween = false;
    for (let i = this.n - 1; i >= this.h; i--) {
      const v = vs[i]!;
      if (opens[i] === 0 && maxAt >= 0 && (v < max || (v === max && !openBetween))) {
        const tied = tieSeqs[i]! >= 0;
        const first = tied ? tieSeqs[i]! : seqs[i]!;
        if (v === max && (tieSeqs[maxAt]! < 0 || first < tieSeqs[maxAt]!)) {
          tieSeqs[maxAt] = first;
          tieAts[maxAt] = tied ? tieAts[i]! : ats[i]!;
          tieLines[maxAt] = tied ? tieLines[i]! : lines[i]!;
        }
        continue;
      }
      w--;
      if (w !== i) {
        seqs[w] = seqs[i]!;
        ats[w] = ats[i]!;
        lines[w] = lines[i]!;
        vs[w] = v;
        opens[w] = opens[i]!;
        tieSeqs[w] = tieSeqs[i]!;
        tieAts[w] = tieAts[i]!;
        tieLines[w] = tieLines[i]!;
      }
      // The leftmost of equal values takes the ties, so the earliest time survives.
      if (v >= max) {
        max = v;
        maxAt = w;
        openBetween = false;
      } else if (opens[w] === 1) {
        openBetween = true;
      }
    }
    this.h = w;
    this.pruneAt = Math.max(64, 2 * (this.n - w));
  }

  /** Points referenced now, final ones not yet let go included (for tests of the memory bound). */
  get held(): number {
    return this.n - this.h;
  }
}
