import type { VerdictId } from '../case/schema.js';
import type { RuleSet } from '../rules/load.js';
import type { CaseVerdict, ClaimResult, Finding } from '../verdict/verdict.js';
import type { Versions } from '../version.js';
import { sourceLink } from './sources.js';

/** A position in an audited file (1-based). */
export interface Position {
  line: number;
  col: number;
}

/** Where things are in one audited file: a fact path's line, a claim's line. */
export interface Locator {
  /** The file as it should appear in the report (relative to the working directory, `/`-separated); undefined for stdin. */
  uri: string | undefined;
  fact(path: string): Position | undefined;
  claim(index: number): (Position & { uri?: string }) | undefined;
}

/**
 * SARIF level of a finding by the weight of its verdict: an observer explanation or a stall
 * changes the conclusion (error); the capture window and deliberate filtering qualify it
 * (warning); missing evidence is a note; a fully observed run passes.
 */
const LEVEL: Record<VerdictId, 'error' | 'warning' | 'note' | 'none'> = {
  'setup-failure': 'error',
  'capacity-missed': 'error',
  'observer-gap': 'error',
  'evidence-of-stall': 'error',
  'still-in-flight': 'warning',
  'filtered-by-design': 'warning',
  'insufficient-evidence': 'note',
  'fully-observed': 'none',
};

const verdictRuleId = (v: VerdictId) => `verdict/${v}`;

/** The opening of a SARIF 2.1.0 log with one run, up to where results are streamed. */
export function sarifHead(rules: RuleSet, versions: Versions, verdictIds: readonly VerdictId[]): string {
  const descriptors: Array<Record<string, unknown>> = [];
  const help = (source: string, next: string) => {
    const link = sourceLink(source);
    return { text: `${next} (Source: ${source}${link ? `, ${link}` : ''})`, markdown: `${next}\n\nSource: ${link ? `[${source}](${link})` : source}` };
  };
  for (const r of rules.rules) {
    descriptors.push({
      id: r.spec.id,
      name: r.spec.id.replace(/[/-](.)/g, (_, c: string) => c.toUpperCase()),
      shortDescription: { text: r.spec.title },
      fullDescription: { text: r.spec.explains.replace(/\s+/g, ' ').trim() },
      help: help(r.spec.source, r.spec.next.replace(/\s+/g, ' ').trim()),
      defaultConfiguration: { level: r.spec.verdict === 'warning' ? 'warning' : LEVEL[r.spec.verdict] },
      properties: { verdict: r.spec.verdict, weight: r.spec.weight, source: r.spec.source, ...(sourceLink(r.spec.source) ? { source_link: sourceLink(r.spec.source) } : {}) },
    });
  }
  for (const c of rules.claims) {
    descriptors.push({
      id: c.spec.id,
      shortDescription: { text: `Claim ${c.spec.title}` },
      help: help(c.spec.source, `Judges write-up claims of kind ${c.spec.claim}.`),
      defaultConfiguration: { level: 'error' },
      properties: { claim: c.spec.claim, source: c.spec.source, ...(sourceLink(c.spec.source) ? { source_link: sourceLink(c.spec.source) } : {}) },
    });
  }
  for (const v of verdictIds) {
    descriptors.push({
      id: verdictRuleId(v),
      shortDescription: { text: `The case's verdict is ${v}` },
      help: { text: 'The primary verdict of a case, with the next step; see docs/case-format.md#verdicts.' },
      defaultConfiguration: { level: LEVEL[v] },
    });
  }
  const run = {
    tool: {
      driver: {
        name: 'kretprobe-triage',
        version: versions.tool_version,
        semanticVersion: versions.tool_version,
        informationUri: 'https://www.npmjs.com/package/kretprobe-triage',
        rules: descriptors,
        properties: versions,
      },
    },
    properties: versions,
  };
  const open = JSON.stringify({ $schema: 'https://json.schemastore.org/sarif-2.1.0.json', version: '2.1.0', runs: [run] });
  // Everything up to the end of the run object, then the results array left open.
  return `${open.slice(0, -3)},"results":[\n`;
}

/** The close of the log: the results array, the invocation (with the exit code), the run. */
export function sarifTail(exitCode: number, skipped: readonly string[]): string {
  const invocation = {
    executionSuccessful: skipped.length === 0,
    exitCode,
    ...(skipped.length ? { toolExecutionNotifications: skipped.map((text) => ({ level: 'error', message: { text } })) } : {}),
  };
  return `\n],"invocations":[${JSON.stringify(invocation)}]}]}\n`;
}

/** The results of one case: one per finding, one per claim, one for the verdict. Pure. */
export function sarifResults(v: CaseVerdict, rules: RuleSet, at: Locator, verdictIds: readonly VerdictId[]): Array<Record<string, unknown>> {
  const index = new Map<string, number>();
  [...rules.rules.map((r) => r.spec.id), ...rules.claims.map((c) => c.spec.id), ...verdictIds.map(verdictRuleId)].forEach((id, i) => index.set(id, i));
  const location = (pos: (Position & { uri?: string }) | undefined) => {
    const uri = pos?.uri ?? at.uri;
    if (uri === undefined) return [];
    return [{ physicalLocation: { artifactLocation: { uri }, region: { startLine: pos?.line ?? 1, startColumn: pos?.col ?? 1 } } }];
  };
  const suppressed = (reason: string | undefined) => (reason === undefined ? {} : { suppressions: [{ kind: 'inSource', status: 'accepted', justification: reason }] });
  const out: Array<Record<string, unknown>> = [];
  const firstFact = (f: Finding) => {
    for (const name of [...Object.keys(f.facts), ...Object.keys(f.provenance ?? {})]) {
      const p = at.fact(name);
      if (p) return p;
    }
    return undefined;
  };
  for (const f of v.findings) {
    out.push({
      ruleId: f.rule,
      ...(index.has(f.rule) ? { ruleIndex: index.get(f.rule) } : {}),
      level: f.verdict === null ? 'warning' : LEVEL[f.verdict],
      message: { text: `${v.id}: ${f.explanation}` },
      locations: location(firstFact(f)),
      ...suppressed(f.accepted),
      properties: { case: v.id, verdict: f.verdict ?? 'warning', facts: f.facts, source: f.source, ...(sourceLink(f.source) ? { source_link: sourceLink(f.source) } : {}) },
    });
  }
  v.claims.forEach((c: ClaimResult, i) => {
    const ok = c.judgement === 'supported';
    out.push({
      ruleId: c.rule,
      ...(index.has(c.rule) ? { ruleIndex: index.get(c.rule) } : {}),
      kind: ok ? 'pass' : 'fail',
      level: ok ? 'none' : 'error',
      message: { text: `${v.id}: claim ${c.kind}${c.text ? ` ("${c.text}")` : ''} is ${c.judgement}: ${c.because}` },
      locations: location(at.claim(i)),
      ...suppressed(c.accepted),
      properties: { case: v.id, claim: c.kind, judgement: c.judgement },
    });
  });
  const primary = verdictRuleId(v.verdict);
  out.push({
    ruleId: primary,
    ruleIndex: index.get(primary),
    ...(LEVEL[v.verdict] === 'none' ? { kind: 'pass' } : {}),
    level: LEVEL[v.verdict],
    message: { text: `${v.id}: verdict ${v.verdict}${v.missing.length ? `; missing: ${v.missing.join(', ')}` : ''}. Next: ${v.next}` },
    locations: location(undefined),
    properties: { case: v.id, verdict: v.verdict, accounting: v.accounting, missing: v.missing, ...(v.expected ? { expected: v.expected } : {}) },
  });
  return out;
}
