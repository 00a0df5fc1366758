import type { VerdictId } from '../case/schema.js';
import { domainOf } from '../engine/domains.js';
import { truthOf, type Outcome } from '../engine/evaluate.js';
import { needsOfAll } from '../facts/derive.js';
import { factsOfValues, type Facts, type FactValue } from '../facts/facts.js';
import type { RuleSet } from '../rules/load.js';
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
const BUDGET = 6000;

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

/** A fresh rule order for the search: warnings never change the verdict. */
function judge(set: RuleSet, base: ReadonlyMap<string, FactValue>, untrusted: ReadonlySet<string> | undefined): Sketch {
  const facts = factsOfValues(new Map(base), untrusted);
  const constraintNeeds: string[] = [];
  for (const c of set.constraints) {
    const o = truthOf(c.spec.broken_when, facts.values);
    if (o.truth === 'true') return { dead: true, choice: { verdict: set.verdicts.fallback.id, possible: [], decides: [] }, constraintNeeds };
    if (o.truth === 'unknown') for (const n of needsOfAll(facts.needs, o.unknownFacts)) if (!constraintNeeds.includes(n)) constraintNeeds.push(n);
  }
  const rules = new Map(set.rules.map((r) => [r.spec.id, r.spec.when]));
  const { fired, undecided } = sketch(set, facts, (id) => truthOf(rules.get(id)!, facts.values));
  return { dead: false, choice: choose(set.verdicts, fired, undecided), constraintNeeds };
}

/** What the completions of one partial case give, as found so far. */
interface Found {
  /** Each world's verdict (the fallback included). */
  verdicts: Set<VerdictId>;
  /** The union of each world's possible verdicts. */
  possible: Set<VerdictId>;
  evals: number;
  exhausted: boolean;
}

// Nothing the fold waits for is a case field: every completion of this one gives the same answer.
const settledChoice = (s: Sketch) => s.choice.decides.length === 0;

/** Search the completions of `base` over `domains`: every world's verdict and possible verdicts. */
function search(set: RuleSet, base: Map<string, FactValue>, domains: ReadonlyMap<string, FactValue[]>, budget: number, untrusted: ReadonlySet<string> | undefined): Found {
  const found: Found = { verdicts: new Set(), possible: new Set(), evals: 0, exhausted: false };
  const fallback = set.verdicts.fallback.id;
  let ceiling: Set<VerdictId> | undefined;
  // Done when the verdict is already not definite and every verdict the fold allows was seen.
  const complete = () => ceiling !== undefined && found.verdicts.size >= 2 && [...ceiling].every((v) => found.possible.has(v));
  const visit = (assign: Map<string, FactValue>): boolean => {
    if (found.evals >= budget) {
      found.exhausted = true;
      return false;
    }
    found.evals++;
    const s = judge(set, assign, untrusted);
    if (s.dead) return false;
    ceiling ??= new Set(s.choice.possible);
    const nothingNew = found.verdicts.size >= 2 && s.choice.possible.every((v) => found.possible.has(v));
    if (nothingNew) return true;
    if (settledChoice(s) && s.constraintNeeds.length === 0) {
      found.verdicts.add(s.choice.verdict);
      for (const v of s.choice.possible) found.possible.add(v);
      if (s.choice.verdict !== fallback) found.possible.add(s.choice.verdict);
      return true;
    }
    const field = settledChoice(s) ? s.constraintNeeds[0]! : (s.choice.decides.find((f) => domains.has(f)) ?? s.constraintNeeds.find((f) => domains.has(f)));
    if (field === undefined || !domains.has(field)) {
      // Nothing left to fill that the fold reads: this partial completion stands for its worlds.
      found.verdicts.add(s.choice.verdict);
      for (const v of s.choice.possible) found.possible.add(v);
      return true;
    }
    let any = false;
    for (const v of domains.get(field)!) {
      const next = new Map(assign);
      next.set(field, v);
      if (visit(next)) any = true;
      if (complete() || found.exhausted) break;
    }
    return any;
  };
  visit(base);
  return found;
}

function summary(set: RuleSet, f: Found): { verdict: VerdictId; possible: VerdictId[] } {
  const rank = new Map(set.verdicts.order.map((e, i) => [e.id, i]));
  const possible = [...f.possible].sort((a, b) => (rank.get(a) ?? -1) - (rank.get(b) ?? -1));
  if (f.verdicts.size === 1) {
    const [v] = f.verdicts;
    if (v !== set.verdicts.fallback.id) return { verdict: v!, possible: [v!] };
  }
  return { verdict: set.verdicts.fallback.id, possible };
}

const key = (s: { verdict: VerdictId; possible: VerdictId[] }) => `${s.verdict}:${s.possible.join(',')}`;

/**
 * Refine a fast-path answer that is not definite. `base` holds the case's known fields (its
 * derived facts are worked out again for each partial completion), `known` the facts of the case.
 */
export function settle(set: RuleSet, base: ReadonlyMap<string, FactValue>, known: Facts, fast: Choice, fastConstraintNeeds: readonly string[], untrusted?: ReadonlySet<string>): Settled {
  const candidates = [...new Set([...fast.decides, ...fastConstraintNeeds])].filter((f) => !known.values.has(f));
  const domains = new Map<string, FactValue[]>();
  for (const f of candidates) {
    const d = domainOf(f, known.values);
    if (d.length) domains.set(f, d);
  }
  let left = BUDGET;
  const top = search(set, new Map(base), domains, left, untrusted);
  left -= top.evals;
  if (top.exhausted) return { ...fast, exact: false };
  const whole = summary(set, top);
  // Each field that can change the answer, with how much one of its values narrows it.
  const scored: Array<{ field: string; narrows: number; splits: number; at: number }> = [];
  for (const [at, field] of candidates.entries()) {
    if (!domains.has(field)) continue;
    let narrows = 0;
    const outcomes = new Set<string>();
    for (const v of domains.get(field)!) {
      const b = new Map(base);
      b.set(field, v);
      const r = search(set, b, domains, left, untrusted);
      left -= r.evals;
      if (r.exhausted) return { ...whole, decides: fast.decides, exact: false };
      if (r.verdicts.size === 0) continue; // no consistent world has this value
      const s = summary(set, r);
      outcomes.add(key(s));
      if (key(s) !== key(whole)) narrows = Math.max(narrows, Math.max(1, whole.possible.length - s.possible.length));
    }
    if (outcomes.size > 1 || (outcomes.size === 1 && !outcomes.has(key(whole)))) scored.push({ field, narrows, splits: outcomes.size, at });
  }
  scored.sort((a, b) => b.narrows - a.narrows || b.splits - a.splits || a.at - b.at);
  return { ...whole, decides: whole.possible.length === 1 && whole.verdict !== set.verdicts.fallback.id ? [] : scored.map((s) => s.field), exact: true };
}
