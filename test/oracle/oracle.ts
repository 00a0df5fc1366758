import type { Case, VerdictId } from '../../src/case/schema.js';
import { getPath } from '../../src/dotted.js';
import { domainOf } from '../../src/engine/domains.js';
import { BASE_FACTS, DERIVATIONS, type FactValue } from '../../src/facts/facts.js';
import type { RuleSet } from '../../src/rules/load.js';
import type { Condition } from '../../src/rules/schema.js';

/**
 * A brute-force judge of a partial case, apart from the engine's machinery: it reads the same
 * declared predicates (the rules' conditions, rules/verdicts.yaml, rules/constraints/) and the
 * same world space (src/engine/domains.ts), and nothing else. No three-valued fold, no
 * derivation memo, no chooser: it fills every unknown field the predicates read, in every way,
 * works the derived facts out to a fixed point, drops worlds a constraint rules out, and gives
 * each world its verdict two-valued. A check whose leaves read a fact that stays undefined in a
 * complete world (a release the kernel model cannot place) is tried both ways.
 */

type Values = Map<string, FactValue>;
const UNDEF = Symbol('undefined');
type Truth = boolean | typeof UNDEF;

const BASE_NAMES = new Set(BASE_FACTS.map((f) => f.name));

/** Derived facts by repeated passes until nothing changes (no order, no memo). */
export function derive(base: Values): Values {
  const v = new Map(base);
  for (let pass = 0; pass < DERIVATIONS.length + 1; pass++) {
    let changed = false;
    for (const d of DERIVATIONS) {
      const inputs: Record<string, FactValue | undefined> = {};
      for (const k of d.inputs) inputs[k] = v.get(k);
      const out = d.derive(inputs);
      const prev = v.get(d.name);
      if (JSON.stringify(out) !== JSON.stringify(prev)) {
        if (out === undefined) v.delete(d.name);
        else v.set(d.name, out);
        changed = true;
      }
    }
    if (!changed) return v;
  }
  throw new Error('derivations do not settle');
}

function op(o: string, a: FactValue, b: unknown): boolean {
  const n = typeof a === 'number' && typeof b === 'number';
  switch (o) {
    case 'equal': return a === b;
    case 'notEqual': return a !== b;
    case 'lessThan': return n && (a as number) < (b as number);
    case 'lessThanInclusive': return n && (a as number) <= (b as number);
    case 'greaterThan': return n && (a as number) > (b as number);
    case 'greaterThanInclusive': return n && (a as number) >= (b as number);
    case 'in': return Array.isArray(b) && b.includes(a);
    case 'notIn': return Array.isArray(b) && !b.includes(a);
    case 'contains': return Array.isArray(a) && a.includes(b as string);
    case 'doesNotContain': return Array.isArray(a) && !a.includes(b as string);
  }
  throw new Error(`operator ${o}`);
}

/** The leaves of a condition that read a fact undefined in this world. */
function undefinedLeaves(c: Condition, v: Values, out: object[] = []): object[] {
  if ('all' in c) c.all.forEach((x) => undefinedLeaves(x, v, out));
  else if ('any' in c) c.any.forEach((x) => undefinedLeaves(x, v, out));
  else if ('not' in c) undefinedLeaves(c.not, v, out);
  else {
    const ref = c.value && typeof c.value === 'object' && !Array.isArray(c.value) ? c.value.fact : undefined;
    if (!v.has(c.fact) || (ref !== undefined && !v.has(ref))) out.push(c);
  }
  return out;
}

/** Two-valued, with the given truth for each leaf that reads an undefined fact. */
function holds(c: Condition, v: Values, forced: Map<object, boolean>): boolean {
  if ('all' in c) return c.all.every((x) => holds(x, v, forced));
  if ('any' in c) return c.any.some((x) => holds(x, v, forced));
  if ('not' in c) return !holds(c.not, v, forced);
  if (forced.has(c)) return forced.get(c)!;
  const ref = c.value && typeof c.value === 'object' && !Array.isArray(c.value) ? c.value.fact : undefined;
  return op(c.operator, v.get(c.fact)!, ref !== undefined ? v.get(ref) : c.value);
}

/** Each truth the condition can have in this world (both when an undefined leaf decides it). */
function truths(c: Condition, v: Values): Set<boolean> {
  const leaves = undefinedLeaves(c, v);
  const out = new Set<boolean>();
  for (let m = 0; m < 1 << leaves.length && out.size < 2; m++) {
    out.add(holds(c, v, new Map(leaves.map((l, i) => [l, Boolean(m & (1 << i))]))));
  }
  return out;
}

/** A constraint is broken whatever the facts still undefined here turn out to be (a partial world no completion can save). */
export function surelyBroken(set: RuleSet, v: Values): boolean {
  return set.constraints.some((k) => {
    const t = truths(k.spec.broken_when, v);
    return t.has(true) && !t.has(false);
  });
}

/** The verdicts one complete world can get: the precedence of rules/verdicts.yaml, two-valued. */
export function worldVerdicts(set: RuleSet, v: Values): Set<VerdictId> | undefined {
  for (const k of set.constraints) if (truths(k.spec.broken_when, v).has(true) && !truths(k.spec.broken_when, v).has(false)) return undefined;
  const policy = set.verdicts;
  const checks: Array<{ verdict: VerdictId; can: Set<boolean> }> = [];
  for (const r of set.rules) {
    if (r.spec.verdict === 'warning') continue;
    if (r.spec.requires?.some((f) => !v.has(f))) continue;
    checks.push({ verdict: r.spec.verdict, can: truths(r.spec.when, v) });
  }
  const open = checks.filter((c) => c.can.size === 2);
  const out = new Set<VerdictId>();
  for (let m = 0; m < 1 << open.length; m++) {
    const fires = (c: (typeof checks)[number]) => (c.can.size === 2 ? Boolean(m & (1 << open.indexOf(c))) : c.can.has(true));
    const fired = new Set(checks.filter(fires).map((c) => c.verdict));
    const blocked = fired.has(policy.fallback.id);
    const first = policy.order.find((e) => fired.has(e.id) && !(blocked && policy.holds_back.includes(e.id)));
    out.add(first ? first.id : policy.fallback.id);
  }
  return out;
}

/** The case fields the predicates read, directly or through a derivation. */
export function relevantFields(set: RuleSet): Set<string> {
  const facts = new Set<string>();
  const leaves = (c: Condition): void => {
    if ('all' in c) c.all.forEach(leaves);
    else if ('any' in c) c.any.forEach(leaves);
    else if ('not' in c) leaves(c.not);
    else {
      facts.add(c.fact);
      if (c.value && typeof c.value === 'object' && !Array.isArray(c.value)) facts.add(c.value.fact);
    }
  };
  for (const r of set.rules) if (r.spec.verdict !== 'warning') { leaves(r.spec.when); for (const f of r.spec.requires ?? []) facts.add(f); }
  for (const k of set.constraints) leaves(k.spec.broken_when);
  const byName = new Map(DERIVATIONS.map((d) => [d.name, d]));
  const out = new Set<string>();
  const visit = (n: string, seen: Set<string>) => {
    if (seen.has(n)) return;
    seen.add(n);
    if (BASE_NAMES.has(n)) out.add(n);
    for (const i of byName.get(n)?.inputs ?? []) visit(i, seen);
  };
  const seen = new Set<string>();
  for (const f of facts) visit(f, seen);
  return out;
}

export function knownFields(c: Case): Values {
  const v: Values = new Map();
  for (const f of BASE_FACTS) {
    const x = getPath(c, f.name);
    if (x !== undefined && x !== null && x !== 'unknown') v.set(f.name, x as FactValue);
  }
  return v;
}

export interface OracleAnswer {
  possible: Set<VerdictId>;
  /** Field -> how it splits the answer: most verdicts one of its values rules out, and how many different answers its values give. */
  splits: Map<string, { narrows: number; answers: number }>;
  worlds: number;
}

/** Brute force over every completion of the relevant unknown fields; undefined when there are more than `limit`. */
export function oracle(set: RuleSet, c: Case, limit: number): OracleAnswer | undefined {
  const known = knownFields(c);
  const knownAll = derive(known);
  const fields = [...relevantFields(set)].filter((f) => !known.has(f));
  const domains = fields.map((f) => domainOf(f, knownAll));
  let size = 1;
  for (const d of domains) if ((size *= Math.max(1, d.length)) > limit) return undefined;
  const perValue = fields.map(() => new Map<string, Set<VerdictId>>());
  const possible = new Set<VerdictId>();
  let worlds = 0;
  const assign = new Map(known);
  const walk = (i: number): void => {
    if (i === fields.length) {
      const vs = worldVerdicts(set, derive(assign));
      if (!vs) return;
      worlds++;
      for (const x of vs) possible.add(x);
      fields.forEach((f, j) => {
        const k = JSON.stringify(assign.get(f));
        let s = perValue[j]!.get(k);
        if (!s) perValue[j]!.set(k, (s = new Set()));
        for (const x of vs) s.add(x);
      });
      return;
    }
    const d = domains[i]!;
    if (!d.length) return walk(i + 1);
    for (const x of d) {
      assign.set(fields[i]!, x);
      walk(i + 1);
    }
    assign.delete(fields[i]!);
  };
  walk(0);
  const splits = new Map<string, { narrows: number; answers: number }>();
  const same = (a: Set<VerdictId>, b: Set<VerdictId>) => a.size === b.size && [...a].every((x) => b.has(x));
  fields.forEach((f, j) => {
    const answers = [...perValue[j]!.values()];
    if (answers.every((s) => same(s, possible))) return;
    const narrows = Math.max(...answers.map((s) => (same(s, possible) ? 0 : Math.max(1, possible.size - s.size))));
    const distinct = new Set(answers.map((s) => [...s].sort().join(',')));
    splits.set(f, { narrows, answers: distinct.size });
  });
  return { possible, splits, worlds };
}
