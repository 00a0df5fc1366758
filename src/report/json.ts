import type { CaseVerdict } from '../verdict/verdict.js';
import type { Hint } from './hints.js';
import type { Versions } from '../version.js';
import { sourceLink } from './sources.js';

/**
 * The verdict JSON of case-format.md (one object per case), plus fields it allows us to add:
 * `source_link` (the docs/ anchor of a finding's source), `accepted` (a waiver's reason) on
 * findings and claims, and the tool and rules versions the
 * verdict was computed with, when given; `collect`, how each missing fact is collected for the
 * probe's interface.
 */
export function toVerdictJson(v: CaseVerdict, extra: { hints?: readonly Hint[]; versions?: Versions } = {}): Record<string, unknown> {
  const { hints = [], versions } = extra;
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
      ...(f.conflict ? { conflict: f.conflict } : {}),
    })),
    accounting: v.accounting,
    claims: v.claims.map((c) => ({ kind: c.kind, ...(c.subject !== undefined ? { subject: c.subject } : {}), judgement: c.judgement, rule: c.rule, because: c.because, ...(c.accepted !== undefined ? { accepted: c.accepted } : {}) })),
    missing: v.missing,
    possible: v.possible,
    decides: v.decides,
    ...(v.contradictions.length ? { contradictions: v.contradictions } : {}),
    ...(v.exact ? {} : { exact: false }),
    ...(v.decidesExact ? {} : { decides_exact: false }),
    ...(v.not_applied.length ? { not_applied: v.not_applied } : {}),
    ...(hints.length ? { collect: hints.map((h) => ({ fact: h.fact, lines: h.lines })) } : {}),
    next: v.next,
    ...(v.expected ? { expected: v.expected } : {}),
    ...(versions ?? {}),
  };
}

export function formatCaseJson(v: CaseVerdict, extra: { hints?: readonly Hint[]; versions?: Versions } = {}): string {
  return `${JSON.stringify(toVerdictJson(v, extra))}\n`;
}

/**
 * The one casing of JSON output: snake_case keys, as in the case format. Applied at the edge
 * to reports built from camelCase TypeScript objects (ledger, capacity). Only identifier-like
 * camelCase keys change; keys such as dotted fact paths are left as they are.
 */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = /^[a-z][a-zA-Z0-9]*$/.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k;
    out[key] = snakeKeys(v);
  }
  return out;
}
