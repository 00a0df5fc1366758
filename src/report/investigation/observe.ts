import { LogHistogram } from '../../ledger/histogram.js';
import type { LedgerObserver } from '../../ledger/ledger.js';
import type { CounterRecord } from '../../ledger/records.js';

/**
 * What the investigation report keeps of a ledger run beyond its summary, in bounded memory
 * whatever the length of the trace: the in-flight count over time (downsampled per bucket to its
 * minimum and maximum, so no peak is lost), the duration distribution, and the counter snapshots
 * per registration epoch.
 */

/** One time bucket of the in-flight series: [startNs, startNs + widthNs). */
export interface SeriesBucket {
  startNs: number;
  min: number;
  max: number;
  /** The value after the bucket's last record. */
  last: number;
  /** Records that fell in the bucket (0: the value stayed at the previous bucket's last). */
  n: number;
}

export interface InFlightSeriesData {
  originNs: number;
  widthNs: number;
  buckets: SeriesBucket[];
  /** The exact maximum and the time of the record that first reached it. */
  peak: number;
  peakAtNs: number | undefined;
  samples: number;
}

/**
 * Calls outstanding over time in at most `size` buckets. Buckets start 1 ns wide; when a record
 * falls past the last one, neighbours are merged pairwise and the width doubles, so the whole
 * capture always fits and each bucket still knows its exact min and max.
 */
export class InFlightSeries {
  private readonly min: Float64Array;
  private readonly max: Float64Array;
  private readonly last: Float64Array;
  private readonly n: Float64Array;
  private origin: number | undefined;
  private width = 1;
  private peak = 0;
  private peakAt: number | undefined;
  private samples = 0;

  constructor(private readonly size = 800) {
    if (!Number.isInteger(size) || size < 2 || size % 2 !== 0) throw new Error(`InFlightSeries: an even size >= 2, got ${size}`);
    this.min = new Float64Array(size);
    this.max = new Float64Array(size);
    this.last = new Float64Array(size);
    this.n = new Float64Array(size);
  }

  add(open: number, tsNs: number): void {
    if (this.origin === undefined) this.origin = tsNs;
    const rel = tsNs - this.origin;
    if (rel < 0) return;
    while (rel >= this.size * this.width) this.halve();
    const i = Math.floor(rel / this.width);
    if (this.n[i] === 0) {
      this.min[i] = open;
      this.max[i] = open;
    } else {
      if (open < this.min[i]!) this.min[i] = open;
      if (open > this.max[i]!) this.max[i] = open;
    }
    this.last[i] = open;
    this.n[i]! += 1;
    this.samples++;
    if (open > this.peak) {
      this.peak = open;
      this.peakAt = tsNs;
    }
  }

  /** Merge neighbours pairwise: twice the width, half the buckets in use. */
  private halve(): void {
    const h = this.size / 2;
    for (let k = 0; k < h; k++) {
      const a = 2 * k;
      const b = a + 1;
      const na = this.n[a]!;
      const nb = this.n[b]!;
      if (na > 0 && nb > 0) {
        this.min[k] = Math.min(this.min[a]!, this.min[b]!);
        this.max[k] = Math.max(this.max[a]!, this.max[b]!);
        this.last[k] = this.last[b]!;
      } else if (nb > 0) {
        this.min[k] = this.min[b]!;
        this.max[k] = this.max[b]!;
        this.last[k] = this.last[b]!;
      } else {
        this.min[k] = this.min[a]!;
        this.max[k] = this.max[a]!;
        this.last[k] = this.last[a]!;
      }
      this.n[k] = na + nb;
    }
    this.n.fill(0, h);
    this.width *= 2;
  }

  data(): InFlightSeriesData {
    const buckets: SeriesBucket[] = [];
    let used = 0;
    for (let i = 0; i < this.size; i++) if (this.n[i]! > 0) used = i + 1;
    let prev = 0;
    for (let i = 0; i < used; i++) {
      const n = this.n[i]!;
      // A bucket without records holds the value the previous one ended with.
      const b: SeriesBucket = n > 0
        ? { startNs: this.origin! + i * this.width, min: this.min[i]!, max: this.max[i]!, last: this.last[i]!, n }
        : { startNs: this.origin! + i * this.width, min: prev, max: prev, last: prev, n: 0 };
      prev = b.last;
      buckets.push(b);
    }
    return { originNs: this.origin ?? 0, widthNs: this.width, buckets, peak: this.peak, peakAtNs: this.peakAt, samples: this.samples };
  }
}

/** Counter snapshots of one name within one registration epoch. */
export interface EpochCounter {
  epoch: string;
  name: string;
  first: { value: number; tsNs: number | undefined };
  last: { value: number; tsNs: number | undefined };
  snapshots: number;
  /** last − first, or null when the counter went down (a reset inside what is labelled one epoch). */
  delta: number | null;
  /** Times at which the counter was seen higher than at the snapshot before it, with the rise. */
  rises: Array<{ tsNs: number; by: number }>;
}

const MAX_RISES = 200;

/** The LedgerObserver the report hands to the ledger. */
export class ReportObserver implements LedgerObserver {
  readonly series: InFlightSeries;
  readonly histogram = new LogHistogram();
  private readonly counters = new Map<string, EpochCounter>();

  constructor(buckets = 800) {
    this.series = new InFlightSeries(buckets);
  }

  inFlight(open: number, tsNs: number): void {
    this.series.add(open, tsNs);
  }

  duration(ns: number): void {
    this.histogram.add(ns);
  }

  counter(c: CounterRecord): void {
    const epoch = c.epoch ?? 'unknown';
    const key = `${epoch}\u0000${c.name}`;
    const e = this.counters.get(key);
    if (e === undefined) {
      this.counters.set(key, { epoch, name: c.name, first: { value: c.value, tsNs: c.tsNs }, last: { value: c.value, tsNs: c.tsNs }, snapshots: 1, delta: 0, rises: [] });
      return;
    }
    if (c.value > e.last.value && c.tsNs !== undefined && e.rises.length < MAX_RISES) e.rises.push({ tsNs: c.tsNs, by: c.value - e.last.value });
    e.snapshots++;
    // Once it went down inside one label, no difference of the two ends is a delta.
    e.delta = e.delta !== null && c.value >= e.last.value ? c.value - e.first.value : null;
    e.last = { value: c.value, tsNs: c.tsNs };
  }

  /** Per epoch and counter name, in the order first seen. */
  epochCounters(): EpochCounter[] {
    return [...this.counters.values()];
  }
}
