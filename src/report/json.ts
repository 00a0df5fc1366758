import type { CaseVerdict } from '../verdict/verdict.js';
import type { Versions } from '../version.js';
import { sourceLink } from './sources.js';

/**
 * The verdict JSON of case-format.md (one object per case), plus fields it allows us to add:
 * `source_link` (the docs/ anchor of a finding's source), `accepted` (a waiver's reason) on
 * findings and claims, and the tool and rules versions the
 * verdict was computed with, when given.
 */
export function toVerdictJson(v: CaseVerdict, versions?: Versions): Record<string, unknown> {
  return {
    id: v.id,
    ...(v.file ? { file: v.file } : {}),
    verdict: v.verdict,
    findings: v.findings.map((f) => ({
      rule: f.rule,
      verdict: f.verdict,
      severity: f.severity,
      source: f.source,
      ...(sourceLink(f.source) ? { source_link: sourceLink(f.source) } : {}),
      facts: f.facts,
      explanation: f.explanation,
      ...(f.provenance ? { provenance: f.provenance } : {}),
      ...(f.accepted !== undefined ? { accepted: f.accepted } : {}),
    })),
    accounting: v.accounting,
    claims: v.claims.map((c) => ({ kind: c.kind, judgement: c.judgement, rule: c.rule, because: c.because, ...(c.accepted !== undefined ? { accepted: c.accepted } : {}) })),
    missing: v.missing,
    next: v.next,
    ...(v.expected ? { expected: v.expected } : {}),
    ...(versions ?? {}),
  };
}

export function formatCaseJson(v: CaseVerdict, versions?: Versions): string {
  return `${JSON.stringify(toVerdictJson(v, versions))}\n`;
}
