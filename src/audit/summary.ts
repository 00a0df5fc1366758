import type { VerdictId } from '../case/schema.js';
import { VERDICT_RANK, type CaseVerdict } from '../verdict/verdict.js';

/** What one verdict contributes to the exit code (AuditSummary folds these; text output reads them). */
export interface CaseStanding {
  /** Claims judged unsupported or overreach and not accepted. */
  flaggedClaims: number;
  /** Most severe rank (index in VERDICT_RANK) of a verdict that counts toward --fail-on. */
  worstCounted: number;
  /** insufficient-evidence that no waiver accepted. */
  inconclusive: boolean;
  /** The case's expected: block is not met (undefined: it has none). */
  unmet?: boolean;
}

export function standingOf(v: CaseVerdict): CaseStanding {
  const flaggedClaims = v.claims.filter((c) => c.judgement !== 'supported' && c.accepted === undefined).length;
  // Accepted findings do not count; a verdict without findings of its own (insufficient
  // evidence from unknown facts) counts as itself.
  const counted = v.findings.filter((f) => f.verdict !== null && f.accepted === undefined).map((f) => VERDICT_RANK.indexOf(f.verdict!));
  if (!v.findings.some((f) => f.verdict === v.verdict)) counted.push(VERDICT_RANK.indexOf(v.verdict));
  const inconclusive = v.verdict === 'insufficient-evidence' && !v.findings.some((f) => f.verdict === v.verdict && f.accepted !== undefined);
  return { flaggedClaims, worstCounted: Math.min(VERDICT_RANK.length, ...counted), inconclusive, ...(v.expected ? { unmet: !v.expected.ok } : {}) };
}

export interface ExitOptions {
  failOn?: VerdictId | undefined;
  expect?: boolean | undefined;
  softFail?: boolean | undefined;
}

/** 1 flagged, 3 inconclusive, 0 nothing: what a case (or a batch's fold of them) makes the exit code, before skips and --soft-fail. */
function codeOf(s: CaseStanding & { unmetCount: number }, options: ExitOptions): number {
  const failOn = options.failOn === undefined ? -1 : VERDICT_RANK.indexOf(options.failOn);
  const overFailOn = s.worstCounted <= failOn;
  if (options.expect) return s.unmetCount || overFailOn ? 1 : 0;
  if (s.flaggedClaims > 0 || overFailOn) return 1;
  return s.inconclusive ? 3 : 0;
}

/**
 * Whether this case is one the exit code answers for (what a batch prints by default, as ESLint
 * prints only the files with problems): it alone would make the audit exit non-zero.
 */
export function needsAttention(v: CaseVerdict, options: ExitOptions): boolean {
  const s = standingOf(v);
  return codeOf({ ...s, unmetCount: s.unmet ? 1 : 0 }, options) !== 0;
}

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
    const s = standingOf(v);
    for (const c of v.claims) {
      if (c.judgement === 'supported') continue;
      if (c.accepted !== undefined) this.accepted++;
      else if (this.flaggedExamples.length < 5) this.flaggedExamples.push(`${v.id}: ${c.kind} ${c.judgement}`);
    }
    this.flaggedClaims += s.flaggedClaims;
    this.accepted += v.findings.filter((f) => f.accepted !== undefined).length;
    this.worstCounted = Math.min(this.worstCounted, s.worstCounted);
    if (s.inconclusive) this.inconclusive = true;
    if (s.unmet !== undefined) {
      this.withExpected++;
      if (s.unmet) this.unmet.push(v.id);
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
  exitCode(options: ExitOptions = {}): number {
    if (this.skipped > 0) return 2;
    if (options.softFail) return 0;
    return codeOf({ flaggedClaims: this.flaggedClaims, worstCounted: this.worstCounted, inconclusive: this.inconclusive, unmetCount: this.unmet.length }, options);
  }
}
