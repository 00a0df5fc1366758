/**
 * The ledger's time line. A kernel stamp is a u64 of nanoseconds since boot: past 2^53 ns (about
 * 104 days of uptime) a double no longer holds every nanosecond, and production hosts run for
 * years. So a stamp is read as whole seconds and nanoseconds apart (both exact as doubles) and the
 * ledger works in nanoseconds from an origin: a whole second taken from the first time it reads,
 * less a margin so that operations submitted somewhat before the first record stay at or after it.
 * Every time of a run (records, operations, capture bounds) is on this one line; a time further
 * from the origin than a double counts exactly (a capture longer than about 92 days) is refused,
 * never rounded. Results are turned back into absolute nanoseconds (exact text, or a number where
 * a double holds it) only on the way out.
 */

/** Seconds the origin is put before the first time read (about 11.6 days). */
export const ORIGIN_MARGIN_SEC = 1_000_000;

const NS = 1_000_000_000;
const NS_BIG = 1_000_000_000n;

/** What a refused time is told as (the reader's one-line error). */
export const CLOCK_RANGE_EXPECTED = `times within ${Math.floor((Number.MAX_SAFE_INTEGER / NS - ORIGIN_MARGIN_SEC) / 86_400)} days after the first one of the run (and at most ${ORIGIN_MARGIN_SEC / 86_400 | 0} days before it)`;

export class Clock {
  /** The origin in whole seconds; -1 until the first time is read. */
  originSec: number;

  constructor(originSec = -1) {
    this.originSec = originSec;
  }

  get set(): boolean {
    return this.originSec >= 0;
  }

  private fix(sec: number): void {
    this.originSec = sec > ORIGIN_MARGIN_SEC ? sec - ORIGIN_MARGIN_SEC : 0;
  }

  /** `sec` seconds and `ns` nanoseconds (0 ≤ ns < 1e9) as ns from the origin; NaN when out of range. */
  rel(sec: number, ns: number): number {
    if (this.originSec < 0) this.fix(sec);
    const v = (sec - this.originSec) * NS + ns;
    return v >= 0 && Number.isSafeInteger(v) ? v : NaN;
  }

  /** A safe integer count of nanoseconds since boot, as ns from the origin. */
  relNs(abs: number): number {
    if (this.originSec === 0) return abs;
    let sec = Math.floor(abs / NS);
    let ns = abs - sec * NS;
    if (ns < 0) {
      sec--;
      ns += NS;
    } else if (ns >= NS) {
      sec++;
      ns -= NS;
    }
    return this.rel(sec, ns);
  }

  /** Any non-negative integer of ns since boot (a number or a bigint), as ns from the origin. */
  relAny(abs: number | bigint): number {
    if (typeof abs === 'number') return this.relNs(abs);
    return this.rel(Number(abs / NS_BIG), Number(abs % NS_BIG));
  }

  /** Decimal digits of an integer literal (no sign), as ns from the origin; NaN when not 1–20 digits. */
  relDigits(b: Uint8Array, from: number, to: number): number {
    const n = to - from;
    if (n < 1 || n > 20) return NaN;
    const cut = n > 9 ? to - 9 : from;
    let sec = 0;
    for (let i = from; i < cut; i++) sec = sec * 10 + (b[i]! - 48);
    let ns = 0;
    for (let i = cut; i < to; i++) ns = ns * 10 + (b[i]! - 48);
    return this.rel(sec, ns);
  }

  /** ns from the origin back to ns since boot, exactly. */
  absBig(rel: number): bigint {
    return BigInt(Math.max(this.originSec, 0)) * NS_BIG + BigInt(rel);
  }

  /** ns since boot as a number: exact where a double holds it, else the nearest double. */
  absNum(rel: number): number {
    if (this.originSec <= 0) return rel;
    const v = this.originSec * NS + rel;
    return Number.isSafeInteger(v) ? v : Number(this.absBig(rel));
  }

  /** Is ns since boot beyond what a double holds exactly? */
  beyondDouble(rel: number): boolean {
    return this.originSec > 0 && !Number.isSafeInteger(this.originSec * NS + rel);
  }
}

/** A non-negative integer of ns given as text (a command-line value): a number when safe, else a bigint; undefined when not such a literal. */
export function nsLiteral(text: string): number | bigint | undefined {
  const t = text.trim();
  if (!/^\d{1,20}$/.test(t)) return undefined;
  const big = BigInt(t);
  if (big >= 1n << 64n) return undefined;
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
