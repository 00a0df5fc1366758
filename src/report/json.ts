import type { CaseVerdict } from '../verdict/verdict.js';

/** The verdict JSON of case-format.md (one object per case), plus fields it allows us to add. */
export function toVerdictJson(v: CaseVerdict): Record<string, unknown> {
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
    next: v.next,
    ...(v.expected ? { expected: v.expected } : {}),
  };
}

export function formatCaseJson(v: CaseVerdict): string {
  return `${JSON.stringify(toVerdictJson(v))}\n`;
}
