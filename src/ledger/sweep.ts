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
 * maximum: it is dropped (a tie hands its time on to the point that dropped it). What stays has
 * strictly falling values, so at most mark + 1 resolved points are kept.
 */
export const INTERVAL = 0;
export const POINT = 1;
export const NONE = 2;

export interface SweepPoint {
  seq: number;
  at: number;
  line: number;
  v: number;
  open: boolean;
  /** Seq of an earlier dropped point with the same value so far (-1: none), and its time and line. */
  tieSeq: number;
  tieAt: number;
  tieLine: number;
}

export class RetroSweep {
  private pts: SweepPoint[] = [];
  private h = 0;
  private seq = 0;
  private pruneAt = 64;
  value = 0;
  at: number | undefined;
  line: number | undefined;

  /** A call began at `at` (trace ns) on `line`. */
  open(at: number, line: number): SweepPoint {
    const p: SweepPoint = { seq: this.seq++, at, line, v: 0, open: true, tieSeq: -1, tieAt: 0, tieLine: 0 };
    this.pts.push(p);
    return p;
  }

  /** The call of point `p` resolved now; `how` says over what it counts. */
  close(p: SweepPoint, how: number): void {
    if (!p.open) return;
    p.open = false;
    const pts = this.pts;
    if (how === INTERVAL) {
      const s = p.seq;
      for (let i = pts.length - 1; i >= this.h; i--) {
        const q = pts[i]!;
        if (q.seq < s) break;
        q.v++;
        // The dropped point q stands in for began before s: it does not get this one.
        if (q.tieSeq >= 0 && q.tieSeq < s) q.tieSeq = -1;
      }
    } else if (how === POINT) {
      p.v++;
      p.tieSeq = -1;
    }
    this.settle();
  }

  /** Points before the oldest unresolved call are final. */
  private settle(): void {
    const pts = this.pts;
    while (this.h < pts.length && !pts[this.h]!.open) {
      const p = pts[this.h++]!;
      if (p.v > this.value) {
        this.value = p.v;
        this.at = p.tieSeq >= 0 ? p.tieAt : p.at;
        this.line = p.tieSeq >= 0 ? p.tieLine : p.line;
      }
    }
    if (this.h === pts.length) {
      pts.length = 0;
      this.h = 0;
    } else if (pts.length - this.h > this.pruneAt) {
      this.prune();
    } else if (this.h >= 1024 && 2 * this.h >= pts.length) {
      // Final points are done with: let them go even while a call is always open.
      this.pts = pts.slice(this.h);
      this.h = 0;
    }
  }

  /** Drop resolved points that a later point dominates (see the file comment). */
  private prune(): void {
    const pts = this.pts;
    const keep: SweepPoint[] = [];
    let max = -1;
    let maxAt: SweepPoint | undefined;
    for (let i = pts.length - 1; i >= this.h; i--) {
      const p = pts[i]!;
      if (!p.open && maxAt !== undefined && p.v <= max) {
        const first = p.tieSeq >= 0 ? p.tieSeq : p.seq;
        if (p.v === max && (maxAt.tieSeq < 0 || first < maxAt.tieSeq)) {
          maxAt.tieSeq = first;
          maxAt.tieAt = p.tieSeq >= 0 ? p.tieAt : p.at;
          maxAt.tieLine = p.tieSeq >= 0 ? p.tieLine : p.line;
        }
        continue;
      }
      keep.push(p);
      // The leftmost of equal values takes the ties, so the earliest time survives.
      if (p.v >= max) {
        max = p.v;
        maxAt = p;
      }
    }
    keep.reverse();
    this.pts = keep;
    this.h = 0;
    this.pruneAt = Math.max(64, 2 * keep.length);
  }

  /** Points referenced now, final ones not yet let go included (for tests of the memory bound). */
  get held(): number {
    return this.pts.length;
  }
}
