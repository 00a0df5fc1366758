import type { Case, ClaimKind, ClaimSubject, Judgement, VerdictId } from '../case/schema.js';
import { BASE_BY_NAME, caseFacts, factsOfValues, type Facts, type FactValue } from '../facts/facts.js';
import { needsOfAll } from '../facts/derive.js';
import { ConditionRunner, truth3, truthOf, type Outcome } from '../engine/evaluate.js';
import type { ParsedConstraint } from '../rules/parse.js';
import type { RuleSet } from '../rules/load.js';
import { claimRuleFor } from '../rules/claims.js';
import { choose } from './choose.js';
import { SHIPPED_OBSERVER_ORDER, SHIPPED_VERDICT_RANK, rankIn } from './order.js';
import { settle } from './worlds.js';
import { byCollectable, indexQuestions, type QuestionSet } from '../triage/question-set.js';

/**
 * Findings → verdict. The precedence is data (rules/verdicts.yaml, read by ./choose.ts): the
 * observer explanations first (a failed setup, capacity, other observer gaps, the capture
 * window, deliberate filtering); only when every one of them is excluded can the missing return
 * say something about the function. The two lists below are derived from that file
 * (./order.ts), for callers that rank verdicts without rules at hand (--fail-on).
 */
export const OBSERVER_ORDER: readonly VerdictId[] = SHIPPED_OBSERVER_ORDER;

/** Severity order used by --fail-on ("at or above"): the order, with the fallback before the verdicts it holds back. */
export const VERDICT_RANK: readonly VerdictId[] = SHIPPED_VERDICT_RANK;

export interface Finding {
  rule: string;
  title: string;
  /** The verdict this finding supports; null for a warning. */
  verdict: VerdictId | null;
  severity: 'verdict' | 'warning';
  weight: number;
  source: string;
  facts: Record<string, FactValue>;
  explanation: string;
  next: string;
  /** Where the facts came from, when the case records it (case from-bundle). */
  provenance?: Record<string, string>;
  /** Set at the output edge by a waiver (src/case/waivers.ts): why the finding is accepted. */
  accepted?: string;
  /** For a broken constraint: the facts in conflict (none of them, nor what rests on them, is trusted). */
  conflict?: string[];
  /** Facts the explanation or next names outside `[[ ... ]]` that were unknown, printed as "unknown"; absent when none. */
  unknown?: string[];
}

export interface Undecided {
  rule: string;
  verdict: VerdictId | null;
  weight: number;
  needs: string[];
}

/** A check that does not apply until some facts are known (its `requires:`), shown as such. */
export interface NotApplied {
  rule: string;
  verdict: VerdictId | null;
  until: string[];
}

export interface ClaimResult {
  kind: ClaimKind;
  text?: string;
  /** The case claim's subject (other-run: about another run than the case's), when it has one. */
  subject?: ClaimSubject;
  judgement: Judgement;
  rule: string;
  because: string;
  /** Set at the output edge by a waiver (src/case/waivers.ts): why the judgement is accepted. */
  accepted?: string;
  /** Facts `because` names outside `[[ ... ]]` that were unknown, printed as "unknown"; absent when none. */
  unknown?: string[];
}

export interface Accounting {
  eligible: number | null;
  returned: number | null;
  filtered: number | null;
  in_flight_at_stop: number | null;
  capacity_missed: number | null;
  not_covered: number | null;
  unexplained: number | null;
  balanced: boolean | null;
}

export interface ExpectedCheck {
  ok: boolean;
  problems: string[];
}

export interface CaseVerdict {
  id: string;
  title?: string;
  file?: string;
  verdict: VerdictId;
  findings: Finding[];
  accounting: Accounting;
  claims: ClaimResult[];
  missing: string[];
  next: string;
  undecided: Undecided[];
  /** Verdicts still possible, most severe first (one element when the verdict is definite). */
  possible: VerdictId[];
  /** The unknown facts that decide between the possible verdicts (empty when definite). */
  decides: string[];
  /** Checks that do not apply until the listed facts are known. */
  not_applied: NotApplied[];
  /** Constraints (rules/constraints/) the known facts break: the evidence contradicts itself. */
  contradictions: string[];
  /** False only when the search over completions ran out of budget and the fold's superset was kept. */
  exact: boolean;
  /** False when `decides` may hold fields that split nothing (ranking ran out of budget); it never lacks one that does. */
  decidesExact: boolean;
  expected?: ExpectedCheck;
}

/** Rules compiled into json-rules-engine once; reuse for every case. */
export interface CompiledRules {
  set: RuleSet;
  runner: ConditionRunner;
  claimRunner: ConditionRunner;
  /** The rule set's questions, indexed (undefined without them). */
  questions: QuestionSet | undefined;
}

export function compileRules(set: RuleSet, options: { memo?: boolean } = {}): CompiledRules {
  return {
    set,
    runner: new ConditionRunner(set.rules.map((r) => ({ id: r.spec.id, when: r.spec.when })), options),
    claimRunner: new ConditionRunner(set.claims.flatMap((c) => c.spec.judge.map((j, i) => ({ id: `${c.spec.id}#${i}`, when: j.when }))), options),
    questions: set.questions ? indexQuestions(set.questions) : undefined,
  };
}

/** A template cut at its placeholders once: text, name, text, name, ..., text. */
const TEMPLATES = new Map<string, string[]>();
function partsOf(template: string): string[] {
  let parts = TEMPLATES.get(template);
  if (!parts) {
    parts = template.split(/\{([a-z_.]+)\}/);
    // Templates come from the rules (a fixed set); anything else is not kept past a bound.
    if (TEMPLATES.size < 4096) TEMPLATES.set(template, parts);
  }
  return parts;
}

const OPTIONAL = new Map<string, string[]>();
/** A template cut at its `[[ ... ]]` parts: even indices are always shown, odd ones only when every fact they name is known. */
function optionalPartsOf(template: string): string[] {
  let parts = OPTIONAL.get(template);
  if (!parts) {
    parts = template.split(/\[\[|\]\]/);
    if (OPTIONAL.size < 4096) OPTIONAL.set(template, parts);
  }
  return parts;
}

const NONE: readonly string[] = Object.freeze([]);

/** A filled-in template, and what it could not fill. */
export interface Rendered {
  text: string;
  /**
   * The facts named outside `[[ ... ]]` that were unknown, so printed as the word "unknown",
   * template order, each once (a template's optional parts are dropped instead).
   */
  unknown: readonly string[];
}

/**
 * Fill `{fact.name}` placeholders with the facts' values (unknown ones say so); whitespace runs
 * become one space. A part of the template inside `[[ ... ]]` is left out when a fact it names is
 * unknown: a rule that concludes from either of two kinds of evidence says only what it had.
 * Also says which placeholders outside those parts were unknown: a sentence should never read
 * "the probe on unknown", and the test over every shipped case checks that none does.
 */
export function renderReport(template: string, facts: Facts, extra: Record<string, FactValue> = {}): Rendered {
  let out = '';
  // Allocated only for a template that has an unknown placeholder: most have none.
  let unknown: string[] | undefined;
  const optional = template.includes('[[') ? optionalPartsOf(template) : [template];
  optional.forEach((piece, k) => {
    const parts = partsOf(piece);
    let text = parts[0]!;
    for (let i = 1; i < parts.length; i += 2) {
      const name = parts[i]!;
      const v = extra[name] ?? facts.values.get(name);
      if (v === undefined && k % 2 === 1) return;
      if (v === undefined && !unknown?.includes(name)) (unknown ??= []).push(name);
      text += v === undefined ? 'unknown' : Array.isArray(v) ? (v.length ? v.join(', ') : 'none') : String(v);
      text += parts[i + 1]!;
    }
    out += text;
  });
  // Most results have single plain spaces only: then there is nothing to fold.
  return { text: /\s\s|[^\S ]|^\s|\s$/.test(out) ? out.replace(/\s+/g, ' ').trim() : out, unknown: unknown ?? NONE };
}

/** {@link renderReport}'s text alone. */
export function render(template: string, facts: Facts, extra: Record<string, FactValue> = {}): string {
  return renderReport(template, facts, extra).text;
}

/** A finding's explanation and next step, with the facts they could not fill (when any). */
function explained(explains: string, next: string, facts: Facts): { explanation: string; next: string; unknown?: string[] } {
  const e = renderReport(explains, facts);
  const n = renderReport(next, facts);
  const unknown = e.unknown.length || n.unknown.length ? [...new Set([...e.unknown, ...n.unknown])] : undefined;
  return { explanation: e.text, next: n.text, ...(unknown ? { unknown } : {}) };
}

/** The case fields behind a condition's unknown facts, first-seen order, each once. */
function needsOf(outcome: Outcome, facts: Facts): string[] {
  const unknown = outcome.unknownFacts;
  if (unknown.length === 1) return [...(facts.needs.get(unknown[0]!) ?? unknown)];
  return [...needsOfAll(facts.needs, unknown)];
}

/** Evaluate one case: facts, rules, findings, the primary verdict, claims, what is missing. */
export async function judgeCase(c: Case, compiled: CompiledRules, where?: { file?: string }): Promise<CaseVerdict> {
  const given = caseFacts(c);
  // A constraint the known facts break is a contradiction: its facts, and what rests on them,
  // are no longer trusted, and the verdict is what the rest of the evidence gives.
  const { broken, untrusted, facts } = contradictions(compiled.set, given);
  // Warnings still read the facts as given: they say what is odd about them.
  const asGiven = broken.length ? await compiled.runner.run(given) : undefined;
  let r = await readCase(c, compiled, given, facts, untrusted, asGiven);
  // Facts in conflict: any one of them may be the wrong one. The verdict is definite only when
  // every reading that sets aside one of them (and trusts the rest) gets the same one.
  const conflicting = [...new Set(broken.flatMap((x) => Object.keys(x.outcome.facts)))].filter((n) => BASE_BY_NAME.has(n) && given.values.has(n));
  if (conflicting.length >= 2) {
    const readings: Reading[] = [];
    for (const n of conflicting) {
      const one = contradictions(compiled.set, factsOfValues(new Map([...given.values].filter(([k]) => BASE_BY_NAME.has(k) && k !== n))));
      readings.push(await readCase(c, compiled, given, one.facts, one.untrusted, asGiven));
    }
    const policy = compiled.set.verdicts;
    const union = [...new Set(readings.flatMap((x) => x.possible))].sort((p, q) => rankIn(policy, p) - rankIn(policy, q));
    const agreed = union.length === 1 && union[0] !== policy.fallback.id ? readings.find((x) => x.verdict === union[0]) : undefined;
    if (agreed) r = agreed;
    else {
      const decides = [...new Set([r, ...readings].flatMap((x) => x.decides))];
      // Each reading's decides is its own: their union is exact only in the sense that it misses none.
      r = { ...r, verdict: policy.fallback.id, possible: union.length ? union : r.possible, decides, exact: r.exact && readings.every((x) => x.exact), decidesExact: false };
    }
  }
  const { findings, undecided, notApplied, verdict, possible, decides, exact, decidesExact } = r;
  for (const { constraint, outcome } of broken) {
    findings.push({
      rule: constraint.spec.id,
      title: constraint.spec.title,
      verdict: null,
      severity: 'warning',
      weight: 100,
      source: constraint.spec.source,
      facts: outcome.facts,
      ...explained(constraint.spec.explains, constraint.spec.next, given),
      conflict: Object.keys(outcome.facts),
    });
  }

  const policy = compiled.set.verdicts;
  // What `next` names: only the deciding facts this probe's interface can give (a tracefs event
  // cannot show its kprobe's own miss count apart, whatever it would decide); `missing` lists
  // them first, then the others.
  const { can, cannot } = byCollectable(decides, compiled.questions, c);
  const missing = [...can, ...cannot];
  const primary = verdict === policy.fallback.id ? undefined : findings.find((f) => f.verdict === verdict);
  const step = (v: VerdictId | undefined) => [...policy.order, policy.fallback].find((e) => e.id === v)?.next ?? policy.fallback.next;
  const next = primary
    ? primary.next
    : can.length
      ? `Collect ${can.slice(0, 3).join(', ')}${missing.length > Math.min(3, can.length) ? ` (then ${missing.length - Math.min(3, can.length)} more, listed in decides${cannot.length ? `; ${cannot.length} of them this probe's interface cannot give` : ''})` : ''}: they decide between ${possible.join(', ')}. ${step(possible[0])}`
      : missing.length
        ? `None of the facts that decide between ${possible.join(', ')} can be read on this probe's interface (decides lists them). ${step(possible[0])}`
      : findings.find((f) => f.verdict === policy.fallback.id)?.next ?? step(policy.fallback.id);

  const claims = await judgeClaims(c, compiled, facts, verdict, findings);
  const num = (k: string) => (facts.values.get(k) as number | undefined) ?? null;
  const result: CaseVerdict = {
    id: c.id,
    ...(c.title ? { title: c.title } : {}),
    ...(where?.file ? { file: where.file } : {}),
    verdict,
    findings,
    accounting: {
      eligible: num('accounting.eligible'),
      returned: num('accounting.returned'),
      filtered: num('accounting.filtered'),
      in_flight_at_stop: num('accounting.in_flight_at_stop'),
      capacity_missed: num('accounting.capacity_missed'),
      not_covered: num('accounting.not_covered'),
      unexplained: num('accounting.unexplained'),
      balanced: (facts.values.get('accounting.balanced') as boolean | undefined) ?? null,
    },
    claims,
    missing,
    next,
    undecided,
    possible,
    decides,
    not_applied: notApplied,
    contradictions: broken.map((b) => b.constraint.spec.id),
    exact,
    decidesExact,
  };
  if (c.expected) result.expected = checkExpected(c, result);
  return result;
}

/** One reading of a case: its findings (warnings read the facts as given) and its verdict. */
interface Reading {
  findings: Finding[];
  undecided: Undecided[];
  notApplied: NotApplied[];
  verdict: VerdictId;
  possible: VerdictId[];
  decides: string[];
  exact: boolean;
  decidesExact: boolean;
}

async function readCase(c: Case, compiled: CompiledRules, given: Facts, facts: Facts, untrusted: ReadonlySet<string> | undefined, asGivenOutcomes: Map<string, Outcome> | undefined): Promise<Reading> {
  const outcomes = await compiled.runner.run(facts);
  const asGiven = asGivenOutcomes ?? outcomes;
  const findings: Finding[] = [];
  const undecided: Undecided[] = [];
  const notApplied: NotApplied[] = [];
  for (const rule of compiled.set.rules) {
    const verdict = rule.spec.verdict === 'warning' ? null : rule.spec.verdict;
    const requires = rule.spec.requires;
    if (requires && requires.some((f) => !facts.values.has(f))) {
      notApplied.push({ rule: rule.spec.id, verdict, until: requires.filter((f) => !facts.values.has(f)) });
      continue;
    }
    const o = (verdict === null ? asGiven : outcomes).get(rule.spec.id)!;
    if (o.truth === 'true') {
      const provenance = c.provenance ? pick(c.provenance, Object.keys(o.facts), facts) : undefined;
      findings.push({
        rule: rule.spec.id,
        title: rule.spec.title,
        verdict,
        severity: verdict ? 'verdict' : 'warning',
        weight: rule.spec.weight,
        source: rule.spec.source,
        facts: o.facts,
        ...explained(rule.spec.explains, rule.spec.next, verdict === null ? given : facts),
        ...(provenance && Object.keys(provenance).length ? { provenance } : {}),
      });
    } else if (o.truth === 'unknown') {
      // What it needs, as plain data. Worked out when read, through an own getter per object,
      // it cost more than working it out: V8 builds an object literal with a getter closure
      // through a slow path (~0.4 us each, ~40 per case), while the per-case Needs memo makes
      // the lists cheap and the verdict chooser reads most of them anyway.
      undecided.push({ rule: rule.spec.id, verdict, weight: rule.spec.weight, needs: needsOf(o, facts) });
    }
  }
  const rank = (v: VerdictId | null) => (v === null ? Number.MAX_SAFE_INTEGER : rankIn(compiled.set.verdicts, v));
  findings.sort((a, b) => rank(a.verdict) - rank(b.verdict) || b.weight - a.weight || a.rule.localeCompare(b.rule));

  const policy = compiled.set.verdicts;
  const fast = choose(policy, findings, undecided);
  let { verdict, possible, decides } = fast;
  let exact = true;
  let decidesExact = true;
  // The fold's definite answer is exact (the oracle in test/oracle/ checks it); otherwise the
  // completions are searched for the verdicts they really give and the facts that split them.
  if (verdict === policy.fallback.id) {
    const base = new Map([...facts.values].filter(([k]) => BASE_BY_NAME.has(k)));
    const settled = settle(compiled.set, base, facts, fast, untrusted);
    ({ verdict, possible, decides, exact, decidesExact } = settled);
  }
  return { findings, undecided, notApplied, verdict, possible, decides, exact, decidesExact };
}

async function judgeClaims(c: Case, compiled: CompiledRules, facts: Facts, verdict: VerdictId, findings: Finding[]): Promise<ClaimResult[]> {
  if (!c.claims?.length) return [];
  const extra: Record<string, FactValue> = { 'verdict.primary': verdict, 'findings.fired': findings.map((f) => f.rule) };
  const outcomes = await compiled.claimRunner.run(facts, extra);
  return c.claims.map((claim) => {
    const rule = claimRuleFor(compiled.set, claim);
    const subject = claim.subject !== undefined ? { subject: claim.subject } : {};
    if (!rule) {
      // A claim about another run is never judged on this run's evidence.
      if (claim.subject === 'other-run') return { kind: claim.kind, ...(claim.text ? { text: claim.text } : {}), ...subject, judgement: 'unsupported' as const, rule: 'claims/(other-run)', because: `The claim is about another run than the one this case's evidence describes, and no rule judges "${claim.kind}" claims about another run: check it against that run's own evidence.` };
      return { kind: claim.kind, ...(claim.text ? { text: claim.text } : {}), judgement: 'unsupported' as const, rule: 'claims/(none)', because: `No rule judges "${claim.kind}" claims, so nothing in the evidence supports it.` };
    }
    // Judgements are tried in order; one counts only when every judgement before it is false, so
    // an undecided earlier judgement (say, overreach) is never skipped in favour of a later one.
    let chosen: { judgement: Judgement; because: string } = rule.spec.otherwise;
    for (const [i, j] of rule.spec.judge.entries()) {
      const truth = outcomes.get(`${rule.spec.id}#${i}`)?.truth;
      if (truth === 'true') chosen = j;
      if (truth !== 'false') break;
    }
    const because = renderReport(chosen.because, facts, extra);
    return {
      kind: claim.kind,
      ...(claim.text ? { text: claim.text } : {}),
      ...subject,
      judgement: chosen.judgement,
      rule: rule.spec.id,
      because: because.text,
      ...(because.unknown.length ? { unknown: [...because.unknown] } : {}),
    };
  });
}

/**
 * The constraints the known facts break, and the facts left once those in conflict (and every
 * derived fact resting on them) are set aside; repeated until nothing left is broken.
 */
function contradictions(set: RuleSet, given: Facts): { broken: Array<{ constraint: ParsedConstraint; outcome: Outcome }>; untrusted?: Set<string>; facts: Facts } {
  let facts = given;
  let untrusted: Set<string> | undefined;
  const broken: Array<{ constraint: ParsedConstraint; outcome: Outcome }> = [];
  for (;;) {
    // truth3 first: almost every case breaks nothing, and truthOf's justification is only kept for a broken one.
    const now = set.constraints.filter((k) => !broken.some((b) => b.constraint === k) && truth3(k.spec.broken_when, facts.values) === 'true').map((constraint) => ({ constraint, outcome: truthOf(constraint.spec.broken_when, facts.values) }));
    if (!now.length) return { broken, ...(untrusted ? { untrusted } : {}), facts };
    broken.push(...now);
    // Case fields in conflict become unknown; derived facts in conflict are not worked out.
    const named = new Set(broken.flatMap((b) => Object.keys(b.outcome.facts)));
    untrusted = new Set([...named].filter((n) => !BASE_BY_NAME.has(n)));
    facts = factsOfValues(new Map([...given.values].filter(([k]) => BASE_BY_NAME.has(k) && !named.has(k))), untrusted);
  }
}

function checkExpected(c: Case, v: CaseVerdict): ExpectedCheck {
  const problems: string[] = [];
  const e = c.expected!;
  if (e.verdict && e.verdict !== v.verdict) problems.push(`expected verdict ${e.verdict}, got ${v.verdict}`);
  for (const r of e.rules ?? []) if (!v.findings.some((f) => f.rule === r)) problems.push(`expected rule ${r} to fire`);
  for (const r of e.not_rules ?? []) if (v.findings.some((f) => f.rule === r)) problems.push(`expected rule ${r} not to fire`);
  if (e.claims) {
    const got = v.claims.map((x) => x.judgement);
    if (e.claims.length !== got.length || e.claims.some((j, i) => j !== got[i])) problems.push(`expected claims [${e.claims.join(', ')}], got [${got.join(', ')}]`);
  }
  return { ok: problems.length === 0, problems };
}

function pick(provenance: Record<string, string>, names: string[], facts: Facts): Record<string, string> {
  // A derived fact's provenance is that of the case fields it was computed from.
  const out: Record<string, string> = {};
  for (const n of names) {
    for (const k of facts.inputs.get(n) ?? [n]) if (provenance[k]) out[k] = provenance[k]!;
  }
  return out;
}
