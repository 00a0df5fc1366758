import { describe, expect, it } from 'vitest';
import { AuditSummary } from '../../src/audit/summary.js';
import type { CaseVerdict, Finding } from '../../src/verdict/verdict.js';
import type { VerdictId } from '../../src/case/schema.js';

const finding = (rule: string, verdict: VerdictId | null, accepted?: string): Finding => ({
  rule, title: rule, verdict, severity: verdict ? 'verdict' : 'warning', weight: 50, source: 's', facts: {}, explanation: '', next: '', ...(accepted ? { accepted } : {}),
});
const verdict = (v: VerdictId, findings: Finding[], extra: Partial<CaseVerdict> = {}): CaseVerdict => ({
  id: 'c', verdict: v, findings, claims: [], missing: [], next: '', undecided: [],
  accounting: { eligible: null, returned: null, filtered: null, in_flight_at_stop: null, capacity_missed: null, not_covered: null, unexplained: null, balanced: null },
  ...extra,
});
const exit = (vs: CaseVerdict[], opts: Parameters<AuditSummary['exitCode']>[0] = {}, skipped = 0) => {
  const s = new AuditSummary();
  for (const v of vs) s.add(v);
  for (let i = 0; i < skipped; i++) s.skip();
  return s.exitCode(opts);
};

const capacity = verdict('capacity-missed', [finding('counters/nmissed-rose', 'capacity-missed')]);
const waived = verdict('capacity-missed', [finding('counters/nmissed-rose', 'capacity-missed', 'known')]);
const unknown = verdict('insufficient-evidence', []);
const flaggedClaim = verdict('fully-observed', [], { claims: [{ kind: 'no-misses', judgement: 'unsupported', rule: 'claims/no-misses', because: '' }] });
const waivedClaim = verdict('fully-observed', [], { claims: [{ kind: 'no-misses', judgement: 'unsupported', rule: 'claims/no-misses', because: '', accepted: 'withdrawn' }] });
const unmet = verdict('fully-observed', [], { expected: { ok: false, problems: ['x'] } });
const met = verdict('capacity-missed', [finding('counters/nmissed-rose', 'capacity-missed')], { expected: { ok: true, problems: [] } });

describe('audit exit code', () => {
  it.each([
    ['nothing flagged', [capacity], {}, 0, 0],
    ['a verdict at --fail-on', [capacity], { failOn: 'capacity-missed' }, 0, 1],
    ['a verdict below --fail-on', [capacity], { failOn: 'setup-failure' }, 0, 0],
    ['the finding at --fail-on is accepted', [waived], { failOn: 'capacity-missed' }, 0, 0],
    ['an unsupported claim', [flaggedClaim], {}, 0, 1],
    ['an accepted unsupported claim', [waivedClaim], {}, 0, 0],
    ['inconclusive only', [unknown], {}, 0, 3],
    ['inconclusive and a flagged claim', [unknown, flaggedClaim], {}, 0, 1],
    ['--soft-fail', [flaggedClaim, unknown], { softFail: true }, 0, 0],
    ['a skipped file wins over everything', [capacity], { softFail: true }, 1, 2],
    ['--expect, all met', [met], { expect: true }, 0, 0],
    ['--expect, one not met', [met, unmet], { expect: true }, 0, 1],
    ['--expect with --fail-on', [met], { expect: true, failOn: 'capacity-missed' }, 0, 1],
  ] as const)('%s', (_, vs, opts, skipped, code) => {
    expect(exit([...vs], opts, skipped)).toBe(code);
  });
});
