import type { VerdictId } from '../case/schema.js';
import { domainOf } from '../engine/domains.js';
import { truth3, truthOf, type Outcome } from '../engine/evaluate.js';

const TRUE: Outcome = { truth: 'true', facts: {}, unknownFacts: [] };
const FALSE: Outcome = { truth: 'false', facts: {}, unknownFacts: [] };
import { needsOfAll } from '../facts/derive.js';
import { factsOfValues, type Facts, type FactValue } from '../facts/facts.js';
import type { RuleSet } from '../rules/load.js';
import { rankIn } from './order.js';
import type { Condition } from '../rules/schema.js';
import { choose, type Choice, type Open } from './choose.js';

/**
 * The verdict of a partial case is the set of verdicts over its consistent completions
 * (DESIGN.md). The three-valued fold gives a superset of it at once (the fast path, exact when
 * its verdict is definite); when it is not, this searches the completions: it fills one unknown
 * field at a time from its domain (src/engine/domains.ts), judges each partial completion with
 * the same fold, drops those a constraint rules out, and stops a branch as soon as the fold
 * says it can add no verdict not already seen. `decides` are the fields one of whose values
 * changes that set, ranked by how much.
 */

/** What one partial completion gives: the chooser's answer, or nothing when a constraint rules it out. */
interface Sketch {
  dead: boolean;
  /** A check concluding insufficient-evidence fired: the verdicts it holds back cannot be reached. */
  blocked: boolean;
  /** The first verdict in the order whose check fired (and is not held back), if any. */
  floor?: VerdictId;
  choice: Choice;
  /** Case fields behind the constraints still undecided, in declaration order. */
  constraintNeeds: string[];
}

/** The exact answer, or the fast path's where the search ran out of budget. */
export interface Settled {
  verdict: VerdictId;
  possible: VerdictId[];
  decides: string[];
  /** False when the search stopped at its budget and the fast path's superset was kept. */
  exact: boolean;
}

/** Evaluations one case may spend (partial completions judged) before the superset is kept. */
const BUDGET = 200;
/** Evaluations the search for one value of one field may spend while ranking `decides`. */
const PER_VALUE = 40;
/** Evaluations ranking `decides` may spend in all; past it each value is judged by the fold alone. */
const RANKING_BUDGET = 200;

/** The fast path over known facts: which checks fire, which wait and for what, the chooser's answer. */
export function sketch(set: RuleSet, facts: Facts, outcome: (id: string) => Outcome): { fired: Array<{ verdict: VerdictId | null }>; undecided: Open[] } {
  const fired: Array<{ verdict: VerdictId | null }> = [];
  const undecided: Open[] = [];
  for (const rule of set.rules) {
    const verdict = rule.spec.verdict === 'warning' ? null : rule.spec.verdict;
    if (verdict === null) continue;
    if (rule.spec.requires?.some((f) => !facts.values.has(f))) continue;
    const o = outcome(rule.spec.id);
    if (o.truth === 'true') fired.push({ verdict });
    else if (o.truth === 'unknown') undecided.push({ verdict, weight: rule.spec.weight, needs: needsOfAll(facts.needs, o.unknownFacts) });
  }
  return { fired, undecided };
}

const CONDITIONS = new WeakMap<RuleSet, Map<string, Condition>>();
function conditionsOf(set: RuleSet): Map<string, Condition> {
  let m = CONDITIONS.get(set);
  if (!m) CONDITIONS.set(set, (m = new Map(set.rules.map((r) => [r.spec.id, r.spec.when]))));
  return m;
}

/** One partial completion judged by the fold, with the constraints it breaks or leaves open. */
function judge(set: RuleSet, base: ReadonlyMap<string, FactValue>, untrusted: ReadonlySet<string> | undefined): Sketch {
  const facts = factsOfValues(new Map(base), untrusted);
  const constraintNeeds: string[] = [];
  for (const c of set.constraints) {
    const t = truth3(c.spec.broken_when, facts.values);
    if (t === 'false') continue;
    const o = truthOf(c.spec.broken_when, facts.values);
    if (o.truth === 'true') return { dead: true, blocked: false, choice: { verdict: set.verdicts.fallback.id, possible: [], decides: [] }, constraintNeeds };
    if (o.truth === 'unknown') for (const n of needsOfAll(facts.needs, o.unknownFacts)) if (!constraintNeeds.includes(n)) constraintNeeds.push(n);
  }
  const rules = conditionsOf(set);
  const { fired, undecided } = sketch(set, facts, (id) => {
    const c = rules.get(id)!;
    const t = truth3(c, facts.values);
    return t === 'unknown' ? truthOf(c, facts.values) : t === 'true' ? TRUE : FALSE;
  });
  const blocked = fired.some((f) => f.verdict === set.verdicts.fallback.id);
  // The lowest verdict that holds whatever the rest: with one, the fallback is out of reach.
  const floor = set.verdicts.order.find((e) => fired.some((f) => f.verdict === e.id) && !(blocked && set.verdicts.holds_back.includes(e.id)))?.id;
  return { dead: false, blocked, floor, choice: choose(set.verdicts, fired, undecided), constraintNeeds };
}

/**
 * The verdicts the worlds of a partial completion may get: one the fold still allows (never one a
 * fired insufficient-evidence check holds back), or the fallback while no verdict below is
 * established whatever the rest.
 */
function couldOf(set: RuleSet, s: Sketch): VerdictId[] {
  const out = s.choice.possible.filter((v) => !(s.blocked && set.verdicts.holds_back.includes(v)));
  if (s.floor === undefined) out.push(set.verdicts.fallback.id);
  return out;
}

/** What the completions of one partial case give, as found so far. */
interface Found {
  /** Each world's verdict (the fallback included). */
  verdicts: Set<VerdictId>;
  evals: number;
  exhausted: boolean;
}

// Nothing the fold waits for is a case field: every completion of this one gives the same answer.
const settledChoice = (s: Sketch) => s.choice.decides.length === 0;

/** Search the completions of `base` over `domains`: every world's verdict and possible verdicts. */
/** Each field's domain, worked out when the search first fills it (the case's own values decide it). */
class Domains {
  private readonly m = new Map<string, FactValue[]>();
  constructor(private readonly known: ReadonlyMap<string, FactValue>) {}
  get(field: string): FactValue[] {
    let d = this.m.get(field);
    if (!d) this.m.set(field, (d = this.known.has(field) ? [] : domainOf(field, this.known)));
    return d;
  }
  has(field: string): boolean {
    return this.get(field).length > 0;
  }
}

function search(set: RuleSet, base: Map<string, FactValue>, domains: Domains, budget: number, untrusted: ReadonlySet<string> | undefined, within?: ReadonlySet<VerdictId>): Found {
  const found: Found = { verdicts: new Set(), evals: 0, exhausted: false };
  let ceiling: VerdictId[] | undefined;
  // Done when the verdict is already not definite and every verdict the fold allows was seen.
  const complete = () => ceiling !== undefined && found.verdicts.size >= 2 && ceiling.every((v) => found.verdicts.has(v));
  // `allowed`: what the parent's fold allowed. A completion of it can give no more, even where the
  // fold, knowing one more field, says less (a counter pair half known is less known than none).
  const visit = (assign: Map<string, FactValue>, allowed: ReadonlySet<VerdictId> | undefined): boolean => {
    if (found.evals >= budget) {
      found.exhausted = true;
      return false;
    }
    found.evals++;
    const s = judge(set, assign, untrusted);
    if (s.dead) return false;
    const could = couldOf(set, s).filter((v) => !allowed || allowed.has(v));
    ceiling ??= could;
    if (!could.length) return false;
    const nothingNew = found.verdicts.size >= 2 && could.every((v) => found.verdicts.has(v));
    if (nothingNew) return true;
    const settled = settledChoice(s);
    const field = settled ? s.constraintNeeds.find((f) => domains.has(f)) : (s.choice.decides.find((f) => domains.has(f)) ?? s.constraintNeeds.find((f) => domains.has(f)));
    if (field === undefined) {
      // Nothing left to fill that the fold reads: this partial completion stands for its worlds,
      // and a check left open only by a fact no case field decides may go either way in them.
      for (const v of could) found.verdicts.add(v);
      return true;
    }
    const narrowed = new Set(could);
    // A settled answer only needs one consistent completion; otherwise every value may matter.
    let any = false;
    for (const v of domains.get(field)) {
      const next = new Map(assign);
      next.set(field, v);
      if (visit(next, narrowed)) any = true;
      if (complete() || found.exhausted || (any && settled)) break;
    }
    return any;
  };
  visit(base, within);
  return found;
}

function summary(set: RuleSet, f: Found): { verdict: VerdictId; possible: VerdictId[] } {
  const possible = [...f.verdicts].sort((a, b) => rankIn(set.verdicts, a) - rankIn(set.verdicts, b));
  return { verdict: possible.length === 1 ? possible[0]! : set.verdicts.fallback.id, possible };
}

const key = (s: { verdict: VerdictId; possible: VerdictId[] }) => `${s.verdict}:${s.possible.join(',')}`;

/**
 * Refine a fast-path answer that is not definite. `base` holds the case's known fields (its
 * derived facts are worked out again for each partial completion), `known` the facts of the case.
 */
export function settle(set: RuleSet, base: ReadonlyMap<string, FactValue>, known: Facts, fast: Choice, constraintNeeds: ReadonlyArray<readonly string[]>, untrusted?: ReadonlySet<string>): Settled {
  // A field only a constraint reads, alone among its unknowns, can only rule out all the worlds
  // or none: it is filled (for a consistent completion) but never decides.
  const linked = new Set(constraintNeeds.filter((n) => n.length > 1).flat());
  const candidates = [...new Set([...fast.decides, ...linked])].filter((f) => !known.values.has(f));
  const domains = new Domains(known.values);
  const top = search(set, new Map(base), domains, BUDGET, untrusted);
  if (top.exhausted) return { ...fast, exact: false };
  const whole = summary(set, top);
  if (whole.possible.length <= 1 && whole.verdict !== set.verdicts.fallback.id) return { ...whole, decides: [], exact: true };
  const within = new Set(whole.possible);
  let exact = true;
  let left = RANKING_BUDGET;
  // Each field that can change the answer, with how much one of its values narrows it. A value
  // whose search runs out of budget is judged by the fold alone: when even that narrows the
  // answer the field decides; otherwise it is counted as not deciding and `exact` says so.
  const scored: Array<{ field: string; narrows: number; splits: number; at: number }> = [];
  for (const [at, field] of candidates.entries()) {
    if (!domains.has(field)) continue;
    let narrows = 0;
    const outcomes = new Set<string>();
    for (const v of domains.get(field)) {
      const b = new Map(base);
      b.set(field, v);
      const r = search(set, b, domains, Math.min(PER_VALUE, left), untrusted, within);
      left -= r.evals;
      let s: { verdict: VerdictId; possible: VerdictId[] };
      if (r.exhausted || r.evals === 0) {
        const j = judge(set, b, untrusted);
        if (j.dead) continue;
        const p = couldOf(set, j).filter((x) => within.has(x)).sort((a, b) => rankIn(set.verdicts, a) - rankIn(set.verdicts, b));
        s = { verdict: p.length === 1 ? p[0]! : set.verdicts.fallback.id, possible: p };
        if (key(s) === key(whole)) exact = false;
      } else {
        if (r.verdicts.size === 0) continue; // no consistent world has this value
        s = summary(set, r);
      }
      outcomes.add(key(s));
      if (key(s) !== key(whole)) narrows = Math.max(narrows, Math.max(1, whole.possible.length - s.possible.length));
    }
    if (outcomes.size > 1 || (outcomes.size === 1 && !outcomes.has(key(whole)))) scored.push({ field, narrows, splits: outcomes.size, at });
  }
  scored.sort((a, b) => b.narrows - a.narrows || b.splits - a.splits || a.at - b.at);
  const decides = scored.map((x) => x.field);
  // Where a value's search ran out, the fold's own list follows the proven ones (never less than before).
  if (!exact) for (const f of fast.decides) if (!decides.includes(f)) decides.push(f);
  return { ...whole, decides, exact };
}
