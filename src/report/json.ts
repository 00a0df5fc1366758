import type { CaseVerdict } from '../verdict/verdict.js';
import type { Hint } from './hints.js';

/** The verdict JSON of case-format.md (one object per case), plus fields it allows us to add. */
export function toVerdictJson(v: CaseVerdict, hints: readonly Hint[] = []): Record<string, unknown> {
  return {
    id: v.id,
    ...(v.file ? { file: v.file } : {}),
    verdict: v.verdict,
    findings: v.findings.map((f) => ({
      rule: f.rule,
      verdict: f.verdict,
      severity: f.severity,
      source: f.source,
      facts: f.facts,
      explanation: f.explanation,
      ...(f.provenance ? { provenance: f.provenance } : {}),
    })),
    accounting: v.accounting,
    claims: v.claims.map((c) => ({ kind: c.kind, judgement: c.judgement, rule: c.rule, because: c.because })),
    missing: v.missing,
    possible: v.possible,
    decides: v.decides,
    ...(v.not_applied.length ? { not_applied: v.not_applied } : {}),
    ...(hints.length ? { collect: hints.map((h) => ({ fact: h.fact, lines: h.lines })) } : {}),
    next: v.next,
    ...(v.expected ? { expected: v.expected } : {}),
  };
}

export function formatCaseJson(v: CaseVerdict, hints: readonly Hint[] = []): string {
  return `${JSON.stringify(toVerdictJson(v, hints))}\n`;
}
