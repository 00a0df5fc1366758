/**
 * Duration distribution in bounded memory: a log-bucketed histogram. Each power of two is cut
 * into SUB buckets, so a bucket spans a factor of 2^(1/SUB); reporting its geometric middle is
 * off by at most 2^(1/(2·SUB)) − 1 of the true value (0.55 % with SUB = 64). Memory is fixed
 * (64 × SUB counters) whatever the number of samples.
 */
const SUB = 64;
const BUCKETS = 64 * SUB;

/** Largest relative error of a reported quantile (min and max are exact). */
export const HISTOGRAM_RELATIVE_ERROR = Math.pow(2, 1 / (2 * SUB)) - 1;

export interface DurationSummary {
  count: number;
  minNs: number;
  p50Ns: number;
  p90Ns: number;
  p99Ns: number;
  maxNs: number;
  /** Bound on the relative error of p50/p90/p99. */
  relativeError: number;
}

export class LogHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private zero = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;

  add(ns: number): void {
    this.count++;
    if (ns < this.min) this.min = ns;
    if (ns > this.max) this.max = ns;
    if (ns < 1) {
      this.zero++;
      return;
    }
    let idx = Math.floor(Math.log2(ns) * SUB);
    if (idx >= BUCKETS) idx = BUCKETS - 1;
    this.counts[idx]! += 1;
  }

  /** The q-quantile (0 < q ≤ 1) by nearest rank, clamped to the exact min and max. */
  quantile(q: number): number {
    if (this.count === 0) return NaN;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = this.zero;
    if (seen >= rank) return Math.max(0, this.min);
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) {
        const mid = Math.pow(2, (i + 0.5) / SUB);
        return Math.round(Math.min(this.max, Math.max(this.min, mid)));
      }
    }
    return this.max;
  }

  /**
   * The distribution in coarser bins for a picture: `perOctave` bins per power of two (a divisor
   * of SUB), from the lowest to the highest non-empty bin, each [loNs, hiNs). Durations under 1 ns
   * are a bin of their own ([0, 1)).
   */
  bins(perOctave: number): Array<{ loNs: number; hiNs: number; count: number }> {
    const step = SUB / perOctave;
    if (!Number.isInteger(step) || step < 1) throw new Error(`bins: ${perOctave} must divide ${SUB}`);
    const out: Array<{ loNs: number; hiNs: number; count: number }> = [];
    if (this.zero > 0) out.push({ loNs: 0, hiNs: 1, count: this.zero });
    let first = -1;
    let last = -1;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.counts[i]! > 0) {
        if (first < 0) first = i;
        last = i;
      }
    }
    if (first < 0) return out;
    for (let b = Math.floor(first / step); b <= Math.floor(last / step); b++) {
      let n = 0;
      for (let i = b * step; i < (b + 1) * step; i++) n += this.counts[i]!;
      out.push({ loNs: Math.pow(2, (b * step) / SUB), hiNs: Math.pow(2, ((b + 1) * step) / SUB), count: n });
    }
    return out;
  }

  summary(): DurationSummary | undefined {
    if (this.count === 0) return undefined;
    return {
      count: this.count,
      minNs: this.min,
      p50Ns: this.quantile(0.5),
      p90Ns: this.quantile(0.9),
      p99Ns: this.quantile(0.99),
      maxNs: this.max,
      relativeError: HISTOGRAM_RELATIVE_ERROR,
    };
  }
}
