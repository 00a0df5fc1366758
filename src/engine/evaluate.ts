import { Engine, type RuleProperties, type TopLevelCondition } from 'json-rules-engine';
import type { Facts, FactValue } from '../facts/facts.js';
import type { FactReader } from '../facts/derive.js';
import type { Condition, Leaf, Operator } from '../rules/schema.js';

/**
 * Three-valued evaluation on top of json-rules-engine. Unknown facts are handed to the engine as
 * null; every operator answers false on null, so the engine's own boolean is only a lower bound.
 * The real answer comes from the engine's annotated result tree (each leaf's factResult and
 * valueResult) folded with Kleene logic: a leaf over an unknown fact is unknown, `all` is false
 * if any part is false, `any` is true if any part is true, otherwise unknown.
 * (allowUndefinedFacts is deliberately not the mechanism: an unknown is a value here.)
 */

export type Truth = 'true' | 'false' | 'unknown';

export interface Outcome {
  truth: Truth;
  /** When true: every fact value that made it so. When unknown/false: the known values read. */
  facts: Record<string, FactValue>;
  /** When unknown: the facts whose values would decide it. */
  unknownFacts: string[];
}

export interface CompiledCondition {
  id: string;
  when: Condition;
}

const same = (a: unknown, b: unknown) => a === b;
const cmp = (f: (a: number, b: number) => boolean) => (a: unknown, b: unknown) => typeof a === 'number' && typeof b === 'number' && f(a, b);
const BASE: Record<Operator, (a: unknown, b: unknown) => boolean> = {
  equal: same,
  notEqual: (a, b) => a !== b,
  lessThan: cmp((a, b) => a < b),
  lessThanInclusive: cmp((a, b) => a <= b),
  greaterThan: cmp((a, b) => a > b),
  greaterThanInclusive: cmp((a, b) => a >= b),
  in: (a, b) => Array.isArray(b) && b.includes(a),
  notIn: (a, b) => Array.isArray(b) && !b.includes(a),
  contains: (a, b) => Array.isArray(a) && a.includes(b),
  doesNotContain: (a, b) => Array.isArray(a) && !a.includes(b),
};

function toEngine(c: Condition): TopLevelCondition | Record<string, unknown> {
  if ('all' in c) return { all: c.all.map(toEngine) };
  if ('any' in c) return { any: c.any.map(toEngine) };
  if ('not' in c) return { not: toEngine(c.not) };
  return { fact: c.fact, operator: c.operator, value: c.value };
}

function topLevel(c: Condition): TopLevelCondition {
  const e = toEngine(c);
  return ('all' in c || 'any' in c || 'not' in c ? e : { all: [e] }) as TopLevelCondition;
}

export function factsOf(c: Condition, out = new Set<string>()): Set<string> {
  if ('all' in c) c.all.forEach((x) => factsOf(x, out));
  else if ('any' in c) c.any.forEach((x) => factsOf(x, out));
  else if ('not' in c) factsOf(c.not, out);
  else {
    out.add(c.fact);
    if (c.value && typeof c.value === 'object' && !Array.isArray(c.value)) out.add(c.value.fact);
  }
  return out;
}

/** How many cases the memo answered without running the engine, and how many ran it. */
export interface RunnerStats {
  memoHits: number;
  engineRuns: number;
}

/** Bound on remembered outcomes per condition: bulk audits repeat combinations, but not forever. */
const MEMO_LIMIT = 4096;

/** One leaf of a condition, as the memo reads it: the fact compared, and a constant or a second fact. */
interface LeafRef {
  fact: string;
  op: (a: unknown, b: unknown) => boolean;
  /** The second fact, for a comparison of two facts. */
  other?: string;
  value?: unknown;
}

/** A condition's leaves in a fixed order (the order of the memo key's digits). */
function leavesOf(c: Condition, out: LeafRef[] = []): LeafRef[] {
  if ('all' in c) c.all.forEach((x) => leavesOf(x, out));
  else if ('any' in c) c.any.forEach((x) => leavesOf(x, out));
  else if ('not' in c) leavesOf(c.not, out);
  else if (c.value !== null && typeof c.value === 'object' && !Array.isArray(c.value)) out.push({ fact: c.fact, op: BASE[c.operator], other: c.value.fact });
  else out.push({ fact: c.fact, op: BASE[c.operator], value: c.value });
  return out;
}

/**
 * What the engine's annotation of one leaf says, as a digit: 1 true, 2 false, and for an unknown
 * side 3 + which sides are unknown (1 the fact, 2 the second fact, 3 both). The engine's fold
 * (below) reads nothing else of a leaf but the known values themselves, so two cases whose leaves
 * give the same digits get the same outcome, up to those values.
 */
function leafDigit(l: LeafRef, value: (name: string) => FactValue | undefined): number {
  const a = value(l.fact);
  if (l.other === undefined) return a === undefined ? 4 : l.op(a, l.value) ? 1 : 2;
  const b = value(l.other);
  const unknown = (a === undefined ? 1 : 0) | (b === undefined ? 2 : 0);
  return unknown ? 3 + unknown : l.op(a, b) ? 1 : 2;
}

/** A remembered outcome and the names of the fact values it carries (filled in from each case). */
interface Entry {
  outcome: Outcome;
  names: string[];
}

interface Remembered {
  id: string;
  leaves: LeafRef[];
  /** Outcomes by the digits of the leaves (a number while they fit in one, else a string). */
  memo: Map<number | string, Entry>;
}

/**
 * A json-rules-engine instance holding a fixed set of conditions, reused for every case.
 * A condition's outcome is a function of what each of its leaves answers (true, false, or
 * unknown and for which fact) and of the known values it names, so outcomes are remembered per
 * condition, keyed by those answers; the values are filled in from the case at hand. The engine
 * runs only for a case that brings a combination of answers not seen before (then for all
 * conditions at once, refreshing the memo): cases that differ only in their numbers, as a batch
 * of investigations does, share the engine's runs.
 */
export class ConditionRunner {
  private readonly engine: Engine;
  private readonly referenced: string[];
  private readonly conditions: Remembered[] = [];
  readonly stats: RunnerStats = { memoHits: 0, engineRuns: 0 };

  constructor(conditions: CompiledCondition[], private readonly options: { memo?: boolean } = {}) {
    this.engine = new Engine([], { allowUndefinedFacts: false, replaceFactsInEventParams: false });
    for (const [name, base] of Object.entries(BASE)) {
      this.engine.addOperator(name, (a: unknown, b: unknown) => a !== null && b !== null && base(a, b));
    }
    const referenced = new Set<string>();
    for (const c of conditions) {
      for (const n of [...factsOf(c.when)].sort()) referenced.add(n);
      this.conditions.push({ id: c.id, leaves: leavesOf(c.when), memo: new Map() });
      const rule: RuleProperties = { name: c.id, conditions: topLevel(c.when), event: { type: c.id } };
      this.engine.addRule(rule);
    }
    this.referenced = [...referenced];
  }

  /** Evaluate every condition against the facts (plus extra known facts); one outcome per id. */
  async run(facts: Facts, extra: Record<string, FactValue> = {}): Promise<Map<string, Outcome>> {
    // Without extra facts (every verdict run), a look-up in the empty object per leaf is only cost.
    const known = facts.values;
    const value = Object.keys(extra).length ? (name: string) => extra[name] ?? known.get(name) : (name: string) => known.get(name);
    const keyOf = (c: Remembered): number | string => {
      if (c.leaves.length <= 17) {
        let key = 0;
        for (const l of c.leaves) key = key * 8 + leafDigit(l, value);
        return key;
      }
      return c.leaves.map((l) => leafDigit(l, value)).join('');
    };
    // A remembered outcome names the facts that made it so; their values are this case's.
    const own = ({ outcome, names }: Entry): Outcome => {
      if (names.length === 0) return outcome;
      const facts: Record<string, FactValue> = {};
      for (const name of names) facts[name] = value(name)!;
      return { truth: outcome.truth, facts, unknownFacts: outcome.unknownFacts };
    };
    const keys = this.conditions.map(keyOf);
    const out = new Map<string, Outcome>();
    if (this.options.memo !== false) {
      this.conditions.forEach((c, i) => {
        const o = c.memo.get(keys[i]!);
        if (o) out.set(c.id, own(o));
      });
      if (out.size === this.conditions.length) {
        this.stats.memoHits++;
        return out;
      }
    }
    this.stats.engineRuns++;
    const input: Record<string, unknown> = {};
    for (const name of this.referenced) input[name] = value(name) ?? null;
    const { results, failureResults } = await this.engine.run(input);
    const byId = new Map(this.conditions.map((c, i) => [c.id, i]));
    for (const r of [...results, ...failureResults]) {
      const id = r.name as string;
      const outcome = fold(r.conditions as unknown as Annotated);
      out.set(id, outcome);
      const i = byId.get(id)!;
      const c = this.conditions[i]!;
      if (c.memo.size >= MEMO_LIMIT) c.memo.clear();
      c.memo.set(keys[i]!, { outcome, names: Object.keys(outcome.facts) });
    }
    return out;
  }
}

interface Annotated {
  all?: Annotated[];
  any?: Annotated[];
  not?: Annotated;
  fact?: string;
  operator?: string;
  value?: unknown;
  factResult?: unknown;
  valueResult?: unknown;
  result?: boolean;
}

/** Kleene fold of an annotated condition tree, with the facts that justify the answer. */
export function fold(c: Annotated): Outcome {
  if (c.all || c.any) return junction((c.all ?? c.any)!.map(fold), Boolean(c.all));
  if (c.not) {
    const inner = fold(c.not);
    const truth: Truth = inner.truth === 'unknown' ? 'unknown' : inner.truth === 'true' ? 'false' : 'true';
    return { ...inner, truth };
  }
  const leaf = c as Leaf & Annotated;
  const ref = leaf.value && typeof leaf.value === 'object' && !Array.isArray(leaf.value) ? (leaf.value as { fact: string }).fact : undefined;
  const unknownFacts: string[] = [];
  const facts: Record<string, FactValue> = {};
  if (leaf.factResult === null || leaf.factResult === undefined) unknownFacts.push(leaf.fact);
  else facts[leaf.fact] = leaf.factResult as FactValue;
  if (ref !== undefined) {
    if (leaf.valueResult === null || leaf.valueResult === undefined) unknownFacts.push(ref);
    else facts[ref] = leaf.valueResult as FactValue;
  }
  if (unknownFacts.length) return { truth: 'unknown', facts, unknownFacts };
  return { truth: leaf.result ? 'true' : 'false', facts, unknownFacts: [] };
}

/** Kleene `all` (or `any`) of its parts' outcomes, with the facts that justify the answer. */
function junction(parts: Outcome[], isAll: boolean): Outcome {
  const decisive: Truth = isAll ? 'false' : 'true';
  const hits = parts.filter((p) => p.truth === decisive);
  if (hits.length) return { truth: decisive, facts: merge(hits), unknownFacts: [] };
  const unknown = parts.filter((p) => p.truth === 'unknown');
  if (unknown.length) return { truth: 'unknown', facts: merge(parts.filter((p) => p.truth !== 'unknown')), unknownFacts: [...new Set(unknown.flatMap((p) => p.unknownFacts))] };
  return { truth: isAll ? 'true' : 'false', facts: merge(parts), unknownFacts: [] };
}

function merge(parts: Outcome[]): Record<string, FactValue> {
  return Object.assign({}, ...parts.map((p) => p.facts));
}

/**
 * The same three-valued answer as the engine's annotated fold, computed directly over a map of
 * known facts (no engine run, synchronous): for the verdict's search over completions, which asks
 * it for many partial completions of one case. A test checks it agrees with ConditionRunner.run
 * on every shipped case.
 */
export function truthOf(c: Condition, values: ReadonlyMap<string, FactValue>): Outcome {
  if ('all' in c) return junction(c.all.map((x) => truthOf(x, values)), true);
  if ('any' in c) return junction(c.any.map((x) => truthOf(x, values)), false);
  if ('not' in c) {
    const inner = truthOf(c.not, values);
    return { ...inner, truth: inner.truth === 'unknown' ? 'unknown' : inner.truth === 'true' ? 'false' : 'true' };
  }
  const ref = c.value && typeof c.value === 'object' && !Array.isArray(c.value) ? c.value.fact : undefined;
  const a = values.get(c.fact);
  const b = ref !== undefined ? values.get(ref) : (c.value as unknown);
  const facts: Record<string, FactValue> = {};
  const unknownFacts: string[] = [];
  if (a === undefined) unknownFacts.push(c.fact);
  else facts[c.fact] = a;
  if (ref !== undefined) {
    if (b === undefined) unknownFacts.push(ref);
    else facts[ref] = b as FactValue;
  }
  if (unknownFacts.length) return { truth: 'unknown', facts, unknownFacts };
  return { truth: BASE[c.operator](a, b) ? 'true' : 'false', facts, unknownFacts: [] };
}

/** truthOf's answer alone (no justification kept): the search's inner loop. */
export function truth3(c: Condition, values: FactReader): Truth {
  if ('all' in c || 'any' in c) {
    const isAll = 'all' in c;
    const parts = isAll ? (c as { all: Condition[] }).all : (c as { any: Condition[] }).any;
    let unknown = false;
    for (const p of parts) {
      const t = truth3(p, values);
      if (t === (isAll ? 'false' : 'true')) return t;
      if (t === 'unknown') unknown = true;
    }
    return unknown ? 'unknown' : isAll ? 'true' : 'false';
  }
  if ('not' in c) {
    const t = truth3(c.not, values);
    return t === 'unknown' ? t : t === 'true' ? 'false' : 'true';
  }
  const a = values.get(c.fact);
  if (a === undefined) return 'unknown';
  const v = c.value;
  const b = v !== null && typeof v === 'object' && !Array.isArray(v) ? values.get(v.fact) : v;
  if (b === undefined) return 'unknown';
  return BASE[c.operator](a, b) ? 'true' : 'false';
}

/**
 * The unknown facts truthOf names for a condition truth3 finds unknown, in the same order
 * (first seen, each once), without building its justification: the facts of the leaves left
 * unknown, through the parts that are themselves unknown (a decided part names none).
 */
export function unknownFactsOf(c: Condition, values: FactReader, out: string[] = []): string[] {
  if ('all' in c || 'any' in c) {
    for (const p of 'all' in c ? c.all : c.any) if (truth3(p, values) === 'unknown') unknownFactsOf(p, values, out);
    return out;
  }
  if ('not' in c) return unknownFactsOf(c.not, values, out);
  if (!values.has(c.fact) && !out.includes(c.fact)) out.push(c.fact);
  const v = c.value;
  if (v !== null && typeof v === 'object' && !Array.isArray(v) && !values.has(v.fact) && !out.includes(v.fact)) out.push(v.fact);
  return out;
}

/**
 * A condition whose facts are read by their place in a slot array (src/facts/derive.ts FactSlots):
 * what the verdict's search judges each partial completion with, since a name look-up per leaf
 * and per judgement was a tenth of a write-up's search. One shape for every node (kind: 0 all,
 * 1 any, 2 not, 3 leaf); a fact with no place (`at` -1) is always unknown.
 */
export interface SlotCondition {
  kind: 0 | 1 | 2 | 3;
  parts: SlotCondition[];
  fact: string;
  at: number;
  op: (a: unknown, b: unknown) => boolean;
  /** The second fact of a comparison of two facts (undefined for a constant), and its place. */
  ref: string | undefined;
  refAt: number;
  value: unknown;
}

const NO_OP = () => false;

/** `c` with each fact's place, from `slotOf` (undefined: a fact with no place). */
export function slotCondition(c: Condition, slotOf: (name: string) => number | undefined): SlotCondition {
  const node = (kind: SlotCondition['kind'], parts: SlotCondition[]): SlotCondition => ({ kind, parts, fact: '', at: -1, op: NO_OP, ref: undefined, refAt: -1, value: undefined });
  if ('all' in c) return node(0, c.all.map((x) => slotCondition(x, slotOf)));
  if ('any' in c) return node(1, c.any.map((x) => slotCondition(x, slotOf)));
  if ('not' in c) return node(2, [slotCondition(c.not, slotOf)]);
  const v = c.value;
  const ref = v !== null && typeof v === 'object' && !Array.isArray(v) ? v.fact : undefined;
  return { kind: 3, parts: [], fact: c.fact, at: slotOf(c.fact) ?? -1, op: BASE[c.operator], ref, refAt: ref === undefined ? -1 : (slotOf(ref) ?? -1), value: ref === undefined ? v : undefined };
}

/** truth3 over slots. */
export function truthAt(c: SlotCondition, slots: ReadonlyArray<FactValue | undefined>): Truth {
  const kind = c.kind;
  if (kind === 3) {
    const a = c.at < 0 ? undefined : slots[c.at];
    if (a === undefined) return 'unknown';
    const b = c.ref === undefined ? c.value : c.refAt < 0 ? undefined : slots[c.refAt];
    if (b === undefined) return 'unknown';
    return c.op(a, b) ? 'true' : 'false';
  }
  if (kind === 2) {
    const t = truthAt(c.parts[0]!, slots);
    return t === 'unknown' ? t : t === 'true' ? 'false' : 'true';
  }
  const decisive: Truth = kind === 0 ? 'false' : 'true';
  let unknown = false;
  const parts = c.parts;
  for (let i = 0; i < parts.length; i++) {
    const t = truthAt(parts[i]!, slots);
    if (t === decisive) return t;
    if (t === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : kind === 0 ? 'true' : 'false';
}

/**
 * unknownFactsOf over slots, by place: the places of the facts it names, in its order. For a
 * condition whose every fact has a place (slotCondition with no -1), as the search compiles them.
 */
export function unknownSlotsAt(c: SlotCondition, slots: ReadonlyArray<FactValue | undefined>): number[] {
  const out = new Int32Array(2 * slotLeaves(c));
  return Array.from(out.subarray(0, unknownSlotsInto(c, slots, out, 0)));
}

/** How many leaves a slot condition has. */
function slotLeaves(c: SlotCondition): number {
  if (c.kind === 3) return 1;
  let n = 0;
  for (const p of c.parts) n += slotLeaves(p);
  return n;
}

/**
 * unknownSlotsAt written into `out` after its first `n` places (those already named, which it
 * names no second time): the count after. The search's form, which keeps no list per call; `out`
 * has room for two places per leaf of `c` more than `n`.
 */
export function unknownSlotsInto(c: SlotCondition, slots: ReadonlyArray<FactValue | undefined>, out: Int32Array, n: number): number {
  const kind = c.kind;
  if (kind === 0 || kind === 1) {
    const parts = c.parts;
    for (let i = 0; i < parts.length; i++) if (truthAt(parts[i]!, slots) === 'unknown') n = unknownSlotsInto(parts[i]!, slots, out, n);
    return n;
  }
  if (kind === 2) return unknownSlotsInto(c.parts[0]!, slots, out, n);
  if (slots[c.at] === undefined && !named(out, n, c.at)) out[n++] = c.at;
  if (c.ref !== undefined && slots[c.refAt] === undefined && !named(out, n, c.refAt)) out[n++] = c.refAt;
  return n;
}

/** Whether `at` is among the first `n` places of `out`. */
function named(out: Int32Array, n: number, at: number): boolean {
  for (let i = 0; i < n; i++) if (out[i] === at) return true;
  return false;
}
