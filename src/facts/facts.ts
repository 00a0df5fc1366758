import type { z } from 'zod';
import type { Case } from '../case/schema.js';
import { UNKNOWN } from '../case/ids.js';
// The case schema's definitions: as plain data in the build (without loading zod), see case/defs.ts.
import { caseDefs } from '../case/defs.js';
import { ACCOUNTING } from './accounting.js';
import { BOUNDS } from './bounds.js';
import { CAPACITY } from './capacity.js';
import { COUNTERS } from './counters.js';
import { COVERAGE } from './coverage.js';
import { FactSlots, movedBy, Needs, needsAtSlotsInto, plan, rerunChanged, run, SlotNeeds, type Derivation, type FactValue } from './derive.js';
import { KERNEL } from './kernel.js';
import { TRUST } from './trust.js';

/**
 * Stage two of the flow: a case becomes a flat set of facts. Every leaf of the case is a fact
 * named by its dotted path; derived facts (counter deltas, the accounting identity, the
 * effective pool size) are declared by topic in this folder (kernel, capacity, counters,
 * accounting, trust, coverage) and run here, once. A fact is a value or unknown; an unknown fact
 * knows which case fields would decide it (`needs`), computed from the declarations.
 */

export type { FactValue } from './derive.js';

export interface Facts {
  /** Known values. A fact absent from this map is unknown. */
  values: Map<string, FactValue>;
  /** For each unknown fact, the case fields (dotted paths) that would decide it. */
  needs: Map<string, string[]>;
  /** For each derived fact, the case fields it rests on (for provenance; from the declarations). */
  inputs: ReadonlyMap<string, readonly string[]>;
}

export interface DerivedFact {
  name: string;
  description: string;
  /** A seed section heading or a kernel fact the derivation rests on. */
  basis: string;
  type: 'number' | 'boolean' | 'string' | 'list';
  /** The facts it reads (case fields or other derived facts). */
  inputs: readonly string[];
}

/** Case paths that are not facts: identity, provenance and the audit's expectations. */
const NOT_FACTS = new Set(['format', 'id', 'title', 'source', 'claims', 'provenance', 'expected', 'accepted']);

type Def = { type: string; [k: string]: unknown };
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  for (;;) {
    const def = defOf(cur);
    if (def.type === 'optional' || def.type === 'nullable') cur = def.innerType as z.ZodType;
    else return cur;
  }
}

export interface BaseFact {
  name: string;
  description: string;
  type: 'number' | 'boolean' | 'string' | 'list';
  /** Allowed values for enumerated facts. */
  values?: string[];
}

function leafInfo(s: z.ZodType): Pick<BaseFact, 'type' | 'values'> {
  const def = defOf(unwrap(s));
  if (def.type === 'union') {
    const options = (def.options as z.ZodType[]).map((o) => defOf(unwrap(o)));
    const real = options.filter((o) => !(o.type === 'literal' && (o.values as unknown[])[0] === UNKNOWN));
    const first = real[0];
    if (!first) return { type: 'string' };
    if (first.type === 'enum') return { type: 'string', values: Object.values(first.entries as Record<string, string>) };
    if (first.type === 'number') return { type: real.some((o) => o.type === 'string') ? 'string' : 'number' };
    if (first.type === 'boolean') return { type: 'boolean' };
    if (first.type === 'array') return { type: 'list' };
    return { type: 'string' };
  }
  if (def.type === 'enum') return { type: 'string', values: Object.values(def.entries as Record<string, string>) };
  if (def.type === 'number') return { type: 'number' };
  if (def.type === 'boolean') return { type: 'boolean' };
  if (def.type === 'array') return { type: 'list' };
  return { type: 'string' };
}

function walk(s: z.ZodType, prefix: string, out: BaseFact[]): void {
  const inner = unwrap(s);
  const def = defOf(inner);
  if (def.type === 'object') {
    for (const [key, child] of Object.entries(def.shape as Record<string, z.ZodType>)) {
      const name = prefix ? `${prefix}.${key}` : key;
      if (!prefix && NOT_FACTS.has(key)) continue;
      walk(child, name, out);
    }
    return;
  }
  out.push({ name: prefix, description: (s as { description?: string }).description ?? '', ...leafInfo(s) });
}

/** Every case leaf that is a fact, with its type (from the case schema, so they cannot drift). */
export const BASE_FACTS: readonly BaseFact[] = (() => {
  const out: BaseFact[] = [];
  walk(caseDefs, '', out);
  return out;
})();

/** Every derived fact, declared by topic; the runner hands each one only its inputs. */
export const DERIVATIONS: readonly Derivation[] = [...KERNEL, ...CAPACITY, ...COUNTERS, ...ACCOUNTING, ...TRUST, ...COVERAGE, ...BOUNDS];

const PLAN = plan(DERIVATIONS, new Set(BASE_FACTS.map((f) => f.name)));

export const DERIVED_FACTS: readonly DerivedFact[] = DERIVATIONS.map((d) => ({ name: d.name, description: d.description, basis: d.basis, type: d.type, inputs: d.inputs }));

/** The case format as a tree of keys: a field's place in BASE_FACTS, or the keys of a section. */
interface Section { [key: string]: number | Section }
const FORMAT: Section = Object.create(null) as Section;
BASE_FACTS.forEach((f, i) => {
  const keys = f.name.split('.');
  let node = FORMAT;
  for (const k of keys.slice(0, -1)) node = (node[k] ??= Object.create(null) as Section) as Section;
  node[keys[keys.length - 1]!] = i;
});

/** Names, types and descriptions of every fact a rule may use. */
export interface CatalogueEntry { type: string; description: string; values?: string[]; derived: boolean; basis?: string }
export const FACT_CATALOGUE: ReadonlyMap<string, CatalogueEntry> = new Map<string, CatalogueEntry>([
  ...BASE_FACTS.map((f): [string, CatalogueEntry] => [f.name, { type: f.type, description: f.description, ...(f.values ? { values: f.values } : {}), derived: false }]),
  ...DERIVED_FACTS.map((f): [string, CatalogueEntry] => [f.name, { type: f.type, description: f.description, derived: true, basis: f.basis }]),
]);

/** Turn a validated case into facts. Pure and cheap: runs once per case, per triage answer. */
export function caseFacts(c: Case): Facts {
  // The fields the case has, found by walking its own keys (a case sets a few of the ~200
  // fields), then known in the order of the format whatever order the file gave them in.
  const found: Array<[number, FactValue]> = [];
  const collect = (node: Record<string, unknown>, format: Section) => {
    for (const key of Object.keys(node)) {
      const v = node[key];
      const at = format[key];
      if (typeof at === 'number') {
        if (v !== undefined && v !== null && v !== UNKNOWN) found.push([at, v as FactValue]);
      } else if (at !== undefined && v !== null && typeof v === 'object') {
        collect(v as Record<string, unknown>, at);
      }
    }
  };
  collect(c as unknown as Record<string, unknown>, FORMAT);
  found.sort((a, b) => a[0] - b[0]);
  const values = new Map<string, FactValue>();
  for (const [at, v] of found) values.set(BASE_FACTS[at]!.name, v);
  return factsOfValues(values);
}

/**
 * Facts from known case fields (dotted names, format order; the map is taken over and the
 * derived facts added to it). What caseFacts does after reading the case; the verdict's search
 * over completions (src/verdict/worlds.ts) calls it for each partial completion.
 */
export function factsOfValues(values: Map<string, FactValue>, untrusted?: ReadonlySet<string>): Facts {
  run(PLAN, values, untrusted);
  return { values, needs: new Needs(PLAN, values), inputs: PLAN.baseInputs as Map<string, string[]> };
}

/** Facts of a partial completion in the verdict's search: values in slots, copied at each step. */
export class SearchFacts {
  constructor(readonly values: FactSlots) {}

  /** For each unknown fact, the case fields that would decide it (as Facts.needs), worked out when asked. */
  get needs(): SlotNeeds {
    return new SlotNeeds(PLAN, this.values);
  }

  /**
   * The places of the case fields behind the unknown facts among the first `count` of `places`,
   * first-seen order, each once (needsOfAll by place), written into `out` (room for SLOT_COUNT):
   * their count.
   */
  needsInto(places: ArrayLike<number>, count: number, out: Int32Array): number {
    return needsAtSlotsInto(PLAN, this.values.slots, places, count, out);
  }

  /** A copy of these facts (for setAt, before anything reads it), in `into` when given (facts no one reads any more, overwritten). */
  copy(into?: SearchFacts): SearchFacts {
    return into ? (this.values.copyInto(into.values), into) : new SearchFacts(this.values.copy());
  }

  /** Put `value` at a place (slotOf; undefined: unknown): replaying on a copy what factsWith changed. */
  setAt(at: number, value: FactValue | undefined): void {
    this.values.slots[at] = value;
  }
}

/** The search's form of facts worked out by factsOfValues (the values are copied). */
export function searchFacts(facts: Facts): SearchFacts {
  return new SearchFacts(FactSlots.of(PLAN, facts.values));
}

/**
 * The facts of `from` with one more case field known (a partial completion one field further),
 * and the places (slotOf) of the facts whose value that changed (the field, and the derived
 * facts that became known, unknown or another value): only derivations an input of which
 * changed are worked out again (src/facts/derive.ts rerunChanged). With `into`, facts no one
 * reads any more, the answer is written there (the search reuses them).
 */
export function factsWith(from: SearchFacts, field: string, value: FactValue, untrusted?: ReadonlySet<string>, into?: SearchFacts): { facts: SearchFacts; changed: number[] } {
  const facts = from.copy(into);
  facts.values.set(field, value);
  const changed = rerunChanged(PLAN, facts.values, field, untrusted);
  return { facts, changed };
}

/** By place (slotOf): 1 for a case field and every derived fact resting on it (directly or not), what setting it can change. */
export const restingOn = (field: string): Uint8Array => movedBy(PLAN, field);

/** A fact's place in the search's slot arrays (SearchFacts.values), or undefined for a name that is no fact. */
export const slotOf = (name: string): number | undefined => PLAN.slot.get(name);
/** The fact at a place (slotOf's inverse). */
export const slotName = (at: number): string => PLAN.slotNames[at]!;
/** How many places the slot arrays have. */
export const SLOT_COUNT = PLAN.slotNames.length;

export const BASE_BY_NAME: ReadonlyMap<string, BaseFact> = new Map(BASE_FACTS.map((f) => [f.name, f]));
