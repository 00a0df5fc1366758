import { createHash } from 'node:crypto';
import type { VerdictId } from '../case/schema.js';
import type { RuleSet } from '../rules/load.js';
import type { CaseVerdict, ClaimResult, Finding } from '../verdict/verdict.js';
import type { Versions } from '../version.js';
import { sourceLink } from './sources.js';
import { subjectNote } from './claims.js';

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

/** How the log is written: where help links point, and whether passing results are included. */
export interface SarifOptions {
  /** Absolute base URL the shipped docs/ paths are resolved against (ends with `/`). */
  helpBase: string;
  /** Include `kind: pass` results (supported claims, fully observed verdicts); off by default. */
  passes?: boolean;
  /** Rules found outside the rule files (the write-up lexicon's disagreement finding). */
  extraRules?: ReadonlyArray<{ id: string; title: string; source: string; explains: string; next: string }>;
}

/**
 * The base of help links: package.json `homepage`, else its GitHub `repository` (the docs at
 * HEAD), else the published package's files on unpkg at this version.
 */
export function defaultHelpBase(pkg: { version: string; homepage?: string; repository?: string | { url?: string } }): string {
  const slash = (u: string) => (u.endsWith('/') ? u : `${u}/`);
  if (pkg.homepage && /^https?:\/\//.test(pkg.homepage)) return slash(pkg.homepage);
  const repo = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const gh = repo ? /github\.com[/:]([^/]+\/[^/.]+)/.exec(repo) : null;
  if (gh) return `https://github.com/${gh[1]}/blob/HEAD/`;
  return `https://unpkg.com/kretprobe-triage@${pkg.version}/`;
}

/** A rule text with its `{fact.path}` placeholders shown by name: descriptions are not filled in per case. */
const unfilled = (text: string, markdown = false) => text.replace(/\{([a-z_]+(?:\.[a-z_]+)*)\}/g, (_, name: string) => (markdown ? `\`${name}\`` : `<${name}>`));

/** All rule ids of the log, in descriptor order: ruleIndex is a position in this list. */
function ruleIds(rules: RuleSet, verdictIds: readonly VerdictId[], extra: SarifOptions['extraRules'] = []): string[] {
  return [...rules.rules.map((r) => r.spec.id), ...rules.constraints.map((k) => k.spec.id), ...rules.claims.map((c) => c.spec.id), ...verdictIds.map(verdictRuleId), CLAIMS_NONE, ...extra.map((e) => e.id)];
}
/** The claim judgement given when no rule judges a claim's kind (verdict.ts). */
const CLAIMS_NONE = 'claims/(none)';

/** A fingerprint that survives runs and line shifts: the file, the case, the rule and what the result is about, never a line. */
function fingerprint(...parts: string[]): Record<string, string> {
  return { 'kretprobeTriage/v1': createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32) };
}

/** The opening of a SARIF 2.1.0 log with one run, up to where results are streamed. */
export function sarifHead(rules: RuleSet, versions: Versions, verdictIds: readonly VerdictId[], options: SarifOptions): string {
  const descriptors: Array<Record<string, unknown>> = [];
  const absolute = (link: string) => new URL(link, options.helpBase).href;
  const help = (source: string, next: string) => {
    const link = sourceLink(source);
    const url = link ? absolute(link) : undefined;
    return {
      ...(url ? { helpUri: url } : {}),
      help: { text: `${unfilled(next)} (Source: ${source}${url ? `, ${url}` : ''})`, markdown: `${unfilled(next, true)}\n\nSource: ${url ? `[${source}](${url})` : source}` },
    };
  };
  // A check, or a broken constraint (a warning: the evidence contradicts itself, rules/constraints/).
  const described = (spec: { id: string; title: string; explains: string; next: string; source: string }, level: string, properties: Record<string, unknown>) => ({
    id: spec.id,
    name: spec.id.replace(/[/-](.)/g, (_, c: string) => c.toUpperCase()),
    shortDescription: { text: unfilled(spec.title) },
    fullDescription: { text: unfilled(spec.explains.replace(/\s+/g, ' ').trim()) },
    ...help(spec.source, spec.next.replace(/\s+/g, ' ').trim()),
    defaultConfiguration: { level },
    properties: { ...properties, source: spec.source, ...(sourceLink(spec.source) ? { source_link: sourceLink(spec.source) } : {}) },
  });
  for (const r of rules.rules) {
    descriptors.push(described(r.spec, r.spec.verdict === 'warning' ? 'warning' : LEVEL[r.spec.verdict] === 'none' ? 'note' : LEVEL[r.spec.verdict], { verdict: r.spec.verdict, weight: r.spec.weight }));
  }
  for (const k of rules.constraints) descriptors.push(described(k.spec, 'warning', { constraint: true }));
  for (const c of rules.claims) {
    descriptors.push({
      id: c.spec.id,
      shortDescription: { text: unfilled(`Claim ${c.spec.title}`) },
      ...help(c.spec.source, `Judges write-up claims of kind ${c.spec.claim}.`),
      defaultConfiguration: { level: 'error' },
      properties: { claim: c.spec.claim, source: c.spec.source, ...(sourceLink(c.spec.source) ? { source_link: sourceLink(c.spec.source) } : {}) },
    });
  }
  for (const v of verdictIds) {
    descriptors.push({
      id: verdictRuleId(v),
      shortDescription: { text: `The case's verdict is ${v}` },
      helpUri: absolute('docs/case-format.md#verdicts'),
      help: { text: `The primary verdict of a case, with the next step; see ${absolute('docs/case-format.md#verdicts')}.` },
      defaultConfiguration: { level: LEVEL[v] === 'none' ? 'note' : LEVEL[v] },
    });
  }
  descriptors.push({
    id: CLAIMS_NONE,
    shortDescription: { text: 'A claim of a kind no rule judges' },
    helpUri: absolute('docs/case-format.md#claims'),
    help: { text: 'No rule of this rule set judges claims of this kind, so nothing in the evidence supports it.' },
    defaultConfiguration: { level: 'error' },
  });
  for (const e of options.extraRules ?? []) {
    descriptors.push({
      id: e.id,
      shortDescription: { text: unfilled(e.title) },
      fullDescription: { text: unfilled(e.explains.replace(/\s+/g, ' ').trim()) },
      ...help(e.source, e.next.replace(/\s+/g, ' ').trim()),
      defaultConfiguration: { level: 'warning' },
    });
  }
  const run = {
    tool: {
      driver: {
        name: 'kretprobe-triage',
        version: versions.tool_version,
        semanticVersion: versions.tool_version,
        informationUri: options.helpBase,
        rules: descriptors,
        properties: versions,
      },
    },
    // One category per tool: GitHub keeps this run's alerts apart from other tools' uploads.
    automationDetails: { id: 'kretprobe-triage/audit/' },
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

/**
 * The results of one case: one per finding, one per flagged claim, one for the verdict (passing
 * results only with `passes`). A verdict that rests only on accepted findings is suppressed with
 * them. Pure.
 */
export function sarifResults(v: CaseVerdict, rules: RuleSet, at: Locator, verdictIds: readonly VerdictId[], options: Pick<SarifOptions, 'passes' | 'extraRules'> = {}): Array<Record<string, unknown>> {
  const index = new Map<string, number>();
  ruleIds(rules, verdictIds, options.extraRules).forEach((id, i) => index.set(id, i));
  const location = (pos: (Position & { uri?: string }) | undefined) => {
    const uri = pos?.uri ?? at.uri;
    if (uri === undefined) return [];
    return [{ physicalLocation: { artifactLocation: { uri }, region: { startLine: pos?.line ?? 1, startColumn: pos?.col ?? 1 } } }];
  };
  const suppressed = (reason: string | undefined) => (reason === undefined ? {} : { suppressions: [{ kind: 'inSource', status: 'accepted', justification: reason }] });
  const fileKey = at.uri ?? '<stdin>';
  const out: Array<Record<string, unknown>> = [];
  const firstFact = (f: Finding) => {
    for (const name of [...Object.keys(f.facts), ...Object.keys(f.provenance ?? {})]) {
      const p = at.fact(name);
      if (p) return p;
    }
    return undefined;
  };
  for (const f of v.findings) {
    const level = f.verdict === null ? 'warning' : LEVEL[f.verdict];
    out.push({
      ruleId: f.rule,
      ruleIndex: index.get(f.rule),
      ...(level === 'none' ? { kind: 'informational' } : {}),
      level,
      message: { text: `${v.id}: ${f.explanation}` },
      locations: location(firstFact(f)),
      partialFingerprints: fingerprint(fileKey, v.id, f.rule),
      ...suppressed(f.accepted),
      properties: { case: v.id, verdict: f.verdict ?? 'warning', facts: f.facts, source: f.source, ...(sourceLink(f.source) ? { source_link: sourceLink(f.source) } : {}) },
    });
  }
  const seenClaims = new Map<string, number>();
  v.claims.forEach((c: ClaimResult, i) => {
    const ok = c.judgement === 'supported';
    // The same claim written twice gets two fingerprints, in order of appearance.
    const key = `${c.rule}\0${c.kind}\0${c.text ?? ''}`;
    const nth = (seenClaims.get(key) ?? 0) + 1;
    seenClaims.set(key, nth);
    if (ok && !options.passes) return;
    out.push({
      ruleId: c.rule,
      ruleIndex: index.get(c.rule),
      kind: ok ? 'pass' : 'fail',
      level: ok ? 'none' : 'error',
      message: { text: `${v.id}: claim ${c.kind}${subjectNote(c.subject)}${c.text ? ` ("${c.text}")` : ''} is ${c.judgement}: ${c.because}` },
      locations: location(at.claim(i)),
      partialFingerprints: fingerprint(fileKey, v.id, key, String(nth)),
      ...suppressed(c.accepted),
      properties: { case: v.id, claim: c.kind, ...(c.subject !== undefined ? { subject: c.subject } : {}), judgement: c.judgement },
    });
  });
  const primary = verdictRuleId(v.verdict);
  const passing = LEVEL[v.verdict] === 'none';
  if (passing && !options.passes) return out;
  // The verdict stands on its findings of the same verdict; when every one is accepted, so is it.
  const own = v.findings.filter((f) => f.verdict === v.verdict);
  const waived = own.length > 0 && own.every((f) => f.accepted !== undefined) ? own.map((f) => `${f.rule}: ${f.accepted}`).join('; ') : undefined;
  out.push({
    ruleId: primary,
    ruleIndex: index.get(primary),
    ...(passing ? { kind: 'pass' } : {}),
    level: LEVEL[v.verdict],
    message: { text: `${v.id}: verdict ${v.verdict}${v.missing.length ? `; missing: ${v.missing.join(', ')}` : ''}. Next: ${v.next}` },
    locations: location(undefined),
    partialFingerprints: fingerprint(fileKey, v.id, primary),
    ...suppressed(waived),
    properties: { case: v.id, verdict: v.verdict, accounting: v.accounting, missing: v.missing, ...(v.expected ? { expected: v.expected } : {}) },
  });
  return out;
}
