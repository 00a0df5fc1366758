import { UNKNOWN, type Case } from '../case/schema.js';
import { BASE_FACTS, caseFacts, type Facts } from '../facts/facts.js';
import type { Rules } from '../index.js';
import { VERDICT_RANK, type CaseVerdict } from '../verdict/verdict.js';
import type { Question, QuestionSet } from './questions.js';
import { getPath } from '../dotted.js';
import { claimRuleFor } from '../rules/claims.js';

/**
 * Which question comes next. Pure over (case, its verdict, rules, questions): the facts worth
 * asking are the ones the verdict says would change it (`missing`, and the facts a check that
 * applies only once they are known needs, when its verdict would win), then the ones an undecided
 * claim judgement waits for; with `all`, also those only warnings wait for. A fact the case
 * already holds — a value or an explicit `unknown` — is never asked.
 */

export interface PlanOptions {
  /** Also ask what can only change warnings or optional checks. */
  all?: boolean;
}

/** Why a fact is worth asking: the verdict, a claim judgement, or (with --all) a warning. */
export type Reason = 'always' | 'verdict' | 'claim' | 'warning';

export interface PlannedFact {
  fact: string;
  question: Question | undefined;
  reason: Reason;
  /** Position in VERDICT_RANK of the best rule waiting for it (claims and warnings come after). */
  rank: number;
  /** The rule (or claim rule) that waits for it, for "why now". */
  rule: string | undefined;
  /** The case already holds this fact (a value or explicit unknown). */
  held: boolean;
  /** What the case holds; undefined when absent. */
  value: unknown;
}

export interface Plan {
  /** The question to ask now; undefined when nothing left can change anything. */
  next: Question | undefined;
  /** Every fact worth knowing, in asking order, held or not. */
  facts: PlannedFact[];
  /** Questions not held by the case that cannot change anything now. */
  skipped: Question[];
}

const BASE = new Set(BASE_FACTS.map((f) => f.name));


/** The case holds the fact: a value, an explicit unknown, or null written out. */
export function holds(c: Case, fact: string): boolean {
  return getPath(c, fact) !== undefined;
}

/** A fact's value is unknown (absent, null or `unknown`). */
export function isUnknownValue(v: unknown): boolean {
  return v === undefined || v === null || v === UNKNOWN;
}

/** Case fields behind a fact name that may be derived. */
function toCaseFields(name: string, facts: Facts): string[] {
  if (BASE.has(name)) return [name];
  const viaNeeds = (facts.needs.get(name) ?? []).filter((n) => BASE.has(n));
  if (viaNeeds.length) return viaNeeds;
  return (facts.inputs.get(name) ?? []).filter((n) => BASE.has(n));
}

/** Plan the rest of a triage session for this case. */
export async function planQuestions(c: Case, verdict: CaseVerdict, rules: Rules, questions: QuestionSet, options: PlanOptions = {}): Promise<Plan> {
  const facts = caseFacts(c);
  const best = new Map<string, { reason: Reason; rank: number; rule: string | undefined }>();
  const offer = (fact: string, reason: Reason, rank: number, rule: string | undefined) => {
    const prior = best.get(fact);
    if (!prior || rank < prior.rank) best.set(fact, { reason, rank, rule });
  };
  const rankOf = (v: string | null) => (v === null ? VERDICT_RANK.length + 1 : VERDICT_RANK.indexOf(v as (typeof VERDICT_RANK)[number]));

  for (const q of questions.list) if (q.always) offer(q.fact, 'always', -1, undefined);

  // The verdict: `missing` is the engine's own list of what would change it.
  const missing = new Set(verdict.missing.flatMap((m) => toCaseFields(m, facts)));
  for (const u of verdict.undecided) {
    if (u.verdict === null) continue;
    for (const need of u.needs.flatMap((n) => toCaseFields(n, facts))) if (missing.has(need)) offer(need, 'verdict', rankOf(u.verdict), u.rule);
  }
  for (const m of missing) offer(m, 'verdict', VERDICT_RANK.length - 1, undefined);
  // An experiment the case does not report is in no `missing` list (it bounds nothing), yet its
  // answer can decide: asked while a verdict it bears on is still possible.
  if (verdict.verdict === 'insufficient-evidence') {
    for (const q of questions.list) if (q.whilePossible.some((v) => verdict.possible.includes(v as CaseVerdict['verdict']))) offer(q.fact, 'verdict', VERDICT_RANK.length - 1, undefined);
  }

  // A check that applies only once its fact is known never waits for it, so `missing` leaves it
  // out; when its verdict would still win over the current one, the fact is worth asking anyway.
  const current = rankOf(verdict.verdict);
  for (const r of rules.set.rules) {
    if (r.spec.verdict === 'warning' || !r.spec.requires) continue;
    const rank = rankOf(r.spec.verdict);
    if (rank >= current && verdict.verdict !== 'insufficient-evidence') continue;
    // A required fact already answered "unknown" means the check can never apply: ask no more for it.
    if (r.spec.requires.some((f) => BASE.has(f) && !facts.values.has(f) && getPath(c, f) !== undefined)) continue;
    for (const f of r.spec.requires) if (BASE.has(f) && !facts.values.has(f)) offer(f, 'verdict', rank, r.spec.id);
  }

  // Claim judgements: the judgements tried before the one that held, still undecided.
  if (c.claims?.length) {
    const extra = { 'verdict.primary': verdict.verdict, 'findings.fired': verdict.findings.map((f) => f.rule) };
    const outcomes = await rules.claimRunner.run(facts, extra);
    for (const claim of c.claims) {
      const rule = claimRuleFor(rules.set, claim);
      if (!rule) continue;
      for (let i = 0; i < rule.spec.judge.length; i++) {
        const o = outcomes.get(`${rule.spec.id}#${i}`);
        if (!o || o.truth === 'true') break;
        if (o.truth === 'unknown') for (const f of o.unknownFacts.flatMap((n) => toCaseFields(n, facts))) offer(f, 'claim', VERDICT_RANK.length, rule.spec.id);
      }
    }
  }

  if (options.all) {
    for (const u of verdict.undecided) for (const f of u.needs.flatMap((n) => toCaseFields(n, facts))) offer(f, 'warning', VERDICT_RANK.length + 1, u.rule);
    // Checks that apply only once their fact is known never wait for it; --all asks anyway.
    for (const r of rules.set.rules) for (const f of r.spec.requires ?? []) if (BASE.has(f) && !facts.values.has(f)) offer(f, 'warning', VERDICT_RANK.length + 1, r.spec.id);
  }

  // The interface picks the command each later question shows (collect_by): whether or not it
  // splits the verdicts by itself, it comes right after the target while any such question is left.
  const INTERFACE = 'probe.interface';
  if (!best.has(INTERFACE) && !holds(c, INTERFACE) && questions.byFact.has(INTERFACE)) {
    const commandsVary = [...best.keys()].some((f) => !holds(c, f) && Object.keys(questions.byFact.get(f)?.collectBy ?? {}).length > 0);
    if (commandsVary) offer(INTERFACE, 'always', -1, undefined);
  }

  const planned: PlannedFact[] = [...best.entries()].map(([fact, why]) => {
    const value = getPath(c, fact);
    return { fact, question: questions.byFact.get(fact), ...why, held: value !== undefined, value };
  });
  const order = (p: PlannedFact) => p.question?.order ?? Number.MAX_SAFE_INTEGER;
  planned.sort((a, b) => a.rank - b.rank || order(a) - order(b) || (a.fact < b.fact ? -1 : 1));

  const next = planned.find((p) => !p.held && p.question)?.question;
  const wanted = new Set(planned.map((p) => p.fact));
  const skipped = questions.list.filter((q) => !wanted.has(q.fact) && !holds(c, q.fact));
  return { next, facts: planned, skipped };
}

/** The planned facts still unknown once nothing more can be asked, each with its question. */
export function remainingUnknowns(plan: Plan): PlannedFact[] {
  return plan.facts.filter((p) => p.reason !== 'always' && isUnknownValue(p.value));
}
