import type { VerdictId } from '../case/schema.js';
import { VERDICT_RANK, type CaseVerdict } from '../verdict/verdict.js';

/**
 * What an audit keeps of the cases it has printed: counters and a few examples, never the
 * verdicts themselves, so memory stays flat however many cases a batch holds.
 */
export class AuditSummary {
  cases = 0;
  skipped = 0;
  readonly byVerdict = new Map<VerdictId, number>();
  flaggedClaims = 0;
  readonly flaggedExamples: string[] = [];
  accepted = 0;
  withExpected = 0;
  readonly unmet: string[] = [];
  /** Most severe rank (index in VERDICT_RANK) of a verdict that counts toward --fail-on. */
  private worstCounted = VERDICT_RANK.length;
  private inconclusive = false;

  add(v: CaseVerdict): void {
    this.cases++;
    this.byVerdict.set(v.verdict, (this.byVerdict.get(v.verdict) ?? 0) + 1);
    for (const c of v.claims) {
      if (c.judgement === 'supported') continue;
      if (c.accepted !== undefined) {
        this.accepted++;
        continue;
      }
      this.flaggedClaims++;
      if (this.flaggedExamples.length < 5) this.flaggedExamples.push(`${v.id}: ${c.kind} ${c.judgement}`);
    }
    this.accepted += v.findings.filter((f) => f.accepted !== undefined).length;
    // Accepted findings do not count; a verdict without findings of its own (insufficient
    // evidence from unknown facts) counts as itself.
    const counted = v.findings.filter((f) => f.verdict !== null && f.accepted === undefined).map((f) => VERDICT_RANK.indexOf(f.verdict!));
    if (!v.findings.some((f) => f.verdict === v.verdict)) counted.push(VERDICT_RANK.indexOf(v.verdict));
    for (const r of counted) this.worstCounted = Math.min(this.worstCounted, r);
    if (v.verdict === 'insufficient-evidence' && !v.findings.some((f) => f.verdict === v.verdict && f.accepted !== undefined)) this.inconclusive = true;
    if (v.expected) {
      this.withExpected++;
      if (!v.expected.ok) this.unmet.push(v.id);
    }
  }

  /** A file that could not be audited (reported on stderr as it was met). */
  skip(): void {
    this.skipped++;
  }

  /**
   * 0 nothing flagged; 1 a claim flagged or a verdict at/above `failOn` (with `expect`: also
   * an expectation not met); 3 inconclusive only; 2 when a file was skipped, whatever else.
   * `softFail` turns 1 and 3 into 0 (bad input stays 2).
   */
  exitCode(options: { failOn?: VerdictId | undefined; expect?: boolean | undefined; softFail?: boolean | undefined } = {}): number {
    if (this.skipped > 0) return 2;
    if (options.softFail) return 0;
    const failOn = options.failOn === undefined ? -1 : VERDICT_RANK.indexOf(options.failOn);
    const overFailOn = this.worstCounted <= failOn;
    if (options.expect) return this.unmet.length || overFailOn ? 1 : 0;
    if (this.flaggedClaims > 0 || overFailOn) return 1;
    return this.inconclusive ? 3 : 0;
  }
}
