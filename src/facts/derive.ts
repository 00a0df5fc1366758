/**
 * Derived facts as declarations. Each derived fact names the facts it reads (`inputs`) and a
 * pure `derive` that gets exactly those values and nothing else; the runner orders the
 * declarations by their inputs, so what an unknown derived fact needs, where a derived value
 * came from and what to collect are all computed from the declarations and cannot drift from
 * the code (STYLE.md habit 13).
 */

export type FactValue = string | number | boolean | string[];

/** The values of a derivation's declared inputs; an unknown input is undefined. */
export type Inputs = Readonly<Record<string, FactValue | undefined>>;

export interface Derivation {
  name: string;
  type: 'number' | 'boolean' | 'string' | 'list';
  description: string;
  /** A seed section heading or a kernel fact the derivation rests on. */
  basis: string;
  inputs: readonly string[];
  /** Pure: the value from the inputs, or undefined (unknown). Never reads anything else. */
  derive(i: Inputs): FactValue | undefined;
  /**
   * A floor (or another partial figure): a value known while some input is still unknown, which
   * filling that input may raise (the demand peak from the measures known so far). Read as a
   * floor it is sound; but what it rests on still decides what reads it, so the fields behind its
   * unknown inputs count among the needs of any unknown fact that reads it (issue 20: the oracle
   * found fixture.gated deciding a verdict while no fact was seen to wait for it).
   */
  floor?: true;
}

/**
 * Typed readers for derive bodies: a value of the wrong type reads as unknown. Each reads the
 * input once: a read by a name that varies from call to call is slow, and the search's
 * derivations make millions of them.
 */
export const num = (i: Inputs, k: string): number | undefined => {
  const v = i[k];
  return typeof v === 'number' ? v : undefined;
};
export const bool = (i: Inputs, k: string): boolean | undefined => {
  const v = i[k];
  return typeof v === 'boolean' ? v : undefined;
};
export const str = (i: Inputs, k: string): string | undefined => {
  const v = i[k];
  return typeof v === 'string' ? v : undefined;
};

/** Kleene conjunction: false if any part is false, true if all are true, else unknown. */
export function and(...parts: Array<boolean | undefined>): boolean | undefined {
  if (parts.some((p) => p === false)) return false;
  return parts.every((p) => p === true) ? true : undefined;
}

/** Kleene disjunction. */
export function or(...parts: Array<boolean | undefined>): boolean | undefined {
  if (parts.some((p) => p === true)) return true;
  return parts.every((p) => p === false) ? false : undefined;
}

export interface Plan {
  /** Declarations in an order where every input is computed before it is read. */
  ordered: readonly Derivation[];
  byName: ReadonlyMap<string, Derivation>;
  baseNames: ReadonlySet<string>;
  /** For each derived fact, the case fields it rests on (the closure of its inputs). */
  baseInputs: ReadonlyMap<string, readonly string[]>;
  /** The inputs object of each of `ordered`, refilled for every run. */
  scratch: ReadonlyArray<Record<string, FactValue | undefined>>;
  /**
   * What each inputs object holds, by the place of the input in the derivation's `inputs`: read
   * to write only the inputs that differ from its last call's (a store by a name that varies
   * from derivation to derivation is slow, and ~5 in 6 of rerunChanged's wrote the same value).
   */
  scratchHolds: ReadonlyArray<Array<FactValue | undefined>>;
  /**
   * For each of `ordered`, what derive gave on the inputs its inputs object holds, when that is
   * known and no list (1 in `scratchGaveKnown`): a derivation asked again on the same inputs
   * gives the same (it is pure).
   */
  scratchGave: Array<FactValue | undefined>;
  scratchGaveKnown: Uint8Array;
  /** Every fact's place in a FactSlots array: the case fields, then the derived facts in plan order. */
  slot: ReadonlyMap<string, number>;
  /** The names by place (slot's inverse). */
  slotNames: readonly string[];
  /** The places of the inputs of each of `ordered`. */
  inputSlots: ReadonlyArray<readonly number[]>;
  /** rerunChanged's marks by place: the number of the run that changed an input of the derived fact there. */
  changedMarks: { at: Uint32Array; run: number };
  /** By place: the places of the derived facts that read the fact there, each once. */
  readers: ReadonlyArray<Int32Array>;
  /** needsInSlots's marks by place: the number of the call that visited the fact. */
  needMarks: { at: Uint32Array; run: number };
  /** visitNeedsAt's stack: the derived facts being walked (by place) and the place in each one's inputs to go on from. */
  needStack: { facts: Int32Array; next: Int32Array };
  /** 1 at the place of each floor (Derivation.floor): the needs walks look through it, known or not. */
  floor: Uint8Array;
}

/** Reading known fact values: a Map, or the search's FactSlots. */
export interface FactReader {
  get(name: string): FactValue | undefined;
  has(name: string): boolean;
}

/** Known fact values that a derivation run may change. */
export interface FactStore extends FactReader {
  set(name: string, value: FactValue): unknown;
  delete(name: string): unknown;
}

/**
 * Order the declarations and close their inputs over case fields. Throws (a bug, not a user
 * error) on an input that is neither a case field nor declared, on a duplicate or on a cycle.
 */
export function plan(derivations: readonly Derivation[], baseNames: ReadonlySet<string>): Plan {
  const byName = new Map<string, Derivation>();
  for (const d of derivations) {
    if (byName.has(d.name) || baseNames.has(d.name)) throw new Error(`derived fact ${d.name} is declared twice`);
    byName.set(d.name, d);
  }
  const ordered: Derivation[] = [];
  const baseInputs = new Map<string, string[]>();
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (d: Derivation, path: string[]) => {
    if (state.get(d.name) === 'done') return;
    if (state.get(d.name) === 'visiting') throw new Error(`derived facts form a cycle: ${[...path, d.name].join(' -> ')}`);
    state.set(d.name, 'visiting');
    const closure: string[] = [];
    for (const input of d.inputs) {
      const dep = byName.get(input);
      if (dep) {
        visit(dep, [...path, d.name]);
        for (const b of baseInputs.get(dep.name)!) if (!closure.includes(b)) closure.push(b);
      } else if (baseNames.has(input)) {
        if (!closure.includes(input)) closure.push(input);
      } else {
        throw new Error(`derived fact ${d.name} reads ${input}, which is neither a case field nor a derived fact`);
      }
    }
    baseInputs.set(d.name, closure);
    state.set(d.name, 'done');
    ordered.push(d);
  };
  for (const d of derivations) visit(d, []);
  const slotNames = [...baseNames, ...ordered.map((d) => d.name)];
  const slot = new Map(slotNames.map((n, i) => [n, i]));
  const inputSlots = ordered.map((d) => d.inputs.map((k) => slot.get(k)!));
  const readerLists = slotNames.map((): number[] => []);
  inputSlots.forEach((at, j) => {
    for (const i of new Set(at)) readerLists[i]!.push(baseNames.size + j);
  });
  const readers = readerLists.map((r) => Int32Array.from(r));
  const floor = new Uint8Array(slotNames.length);
  for (const d of ordered) if (d.floor) floor[slot.get(d.name)!] = 1;
  // Every inputs object has each of its keys from the start (undefined: unknown), as a run leaves it.
  const scratch = ordered.map((d) => {
    const o: Record<string, FactValue | undefined> = {};
    for (const k of d.inputs) o[k] = undefined;
    return o;
  });
  const scratchHolds = ordered.map((d) => new Array<FactValue | undefined>(d.inputs.length).fill(undefined));
  return { ordered, byName, baseNames, baseInputs, scratch, scratchHolds, scratchGave: new Array<FactValue | undefined>(ordered.length).fill(undefined), scratchGaveKnown: new Uint8Array(ordered.length), slot, slotNames, inputSlots, changedMarks: { at: new Uint32Array(slotNames.length), run: 0 }, readers, needMarks: { at: new Uint32Array(slotNames.length), run: 0 }, needStack: { facts: new Int32Array(slotNames.length), next: new Int32Array(slotNames.length) }, floor };
}

/**
 * Known fact values held in an array, one place per fact of the plan (an unknown fact's place is
 * undefined). The verdict's search copies the facts of a partial completion for each field it
 * fills: copying a Map of ~80 facts cost ~4 us (and its garbage), copying the array ~0.1 us.
 */
export class FactSlots implements FactStore {
  constructor(
    private readonly p: Plan,
    /** By place (Plan.slot); rerunChanged writes it directly. */
    readonly slots: Array<FactValue | undefined>,
  ) {}

  /** The values of `known` (facts of this plan only). */
  static of(p: Plan, known: ReadonlyMap<string, FactValue>): FactSlots {
    const slots = new Array<FactValue | undefined>(p.slotNames.length).fill(undefined);
    for (const [name, v] of known) slots[FactSlots.at(p, name)] = v;
    return new FactSlots(p, slots);
  }

  private static at(p: Plan, name: string): number {
    const i = p.slot.get(name);
    if (i === undefined) throw new Error(`${name} is not a fact of this plan`);
    return i;
  }

  copy(): FactSlots {
    return new FactSlots(this.p, this.slots.slice());
  }

  /** `to` (of the same plan) made a copy of these values, its own overwritten: the search reuses the arrays it lets go. */
  copyInto(to: FactSlots): FactSlots {
    const from = this.slots;
    const into = to.slots;
    for (let i = 0; i < from.length; i++) into[i] = from[i];
    return to;
  }

  get(name: string): FactValue | undefined {
    const i = this.p.slot.get(name);
    return i === undefined ? undefined : this.slots[i];
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  set(name: string, value: FactValue): this {
    this.slots[FactSlots.at(this.p, name)] = value;
    return this;
  }

  delete(name: string): boolean {
    const i = this.p.slot.get(name);
    if (i === undefined || this.slots[i] === undefined) return false;
    this.slots[i] = undefined;
    return true;
  }

  /** The known facts, in plan order (case fields first). */
  *entries(): IterableIterator<[string, FactValue]> {
    for (let i = 0; i < this.slots.length; i++) {
      const v = this.slots[i];
      if (v !== undefined) yield [this.p.slotNames[i]!, v];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  [Symbol.iterator](): IterableIterator<[string, FactValue]> {
    return this.entries();
  }
}

/** Per derivation of the plan, what it gives when none of its inputs is known. */
const NONE_KNOWN_BY_PLAN = new WeakMap<Plan, Array<{ v: FactValue | undefined } | undefined>>();

/** Run the plan over known values (mutated in place): every derivation whose inputs decide it. */
export function run(p: Plan, values: Map<string, FactValue>, untrusted?: ReadonlySet<string>): void {
  if (untrusted) for (const n of untrusted) values.delete(n);
  let noneKnown = NONE_KNOWN_BY_PLAN.get(p);
  if (!noneKnown) NONE_KNOWN_BY_PLAN.set(p, (noneKnown = []));
  // The values by place for the run: an input read by place, not looked up by name in the map
  // (a case knows a few dozen facts, its derivations read some 340 inputs).
  const slots = RUN_SLOTS.get(p) ?? new Array<FactValue | undefined>(p.slotNames.length);
  RUN_SLOTS.set(p, slots);
  slots.fill(undefined);
  for (const [k, v] of values) {
    const at = p.slot.get(k);
    if (at !== undefined) slots[at] = v;
  }
  const first = p.baseNames.size;
  for (let j = 0; j < p.ordered.length; j++) {
    const d = p.ordered[j]!;
    if (untrusted?.has(d.name)) continue;
    // One inputs object per derivation, reused from case to case: a derive reads its inputs and
    // keeps nothing (it is pure).
    const inputs = p.scratch[j]!;
    const holds = p.scratchHolds[j]!;
    const at = p.inputSlots[j]!;
    let known = false;
    // Stored by name only where the value moved since the last run or rerun (as rerunChanged
    // does): a store by a name that varies is slow, and a batch's cases share most inputs.
    let moved = false;
    for (let m = 0; m < at.length; m++) {
      const x = slots[at[m]!];
      if (x !== undefined) known = true;
      // Object.is: 0 and -0 are other inputs (a derive may tell them apart), NaN is NaN.
      if (!Object.is(holds[m], x)) {
        holds[m] = x;
        inputs[d.inputs[m]!] = x;
        moved = true;
      }
    }
    // The same inputs as the last time this derivation was worked out give the same value (a
    // derive is pure); with every input unknown it always gives the same, asked once (a list,
    // which a reader could change, is asked for again either way).
    let v: FactValue | undefined;
    const none = known ? undefined : noneKnown[j];
    if (none) v = none.v;
    else if (!moved && p.scratchGaveKnown[j] === 1) v = p.scratchGave[j];
    else {
      v = d.derive(inputs);
      if (!known && !Array.isArray(v)) noneKnown[j] = { v };
    }
    p.scratchGaveKnown[j] = Array.isArray(v) ? 0 : 1;
    p.scratchGave[j] = v;
    if (v !== undefined) {
      slots[first + j] = v;
      values.set(d.name, v);
    }
  }
}

/** run's values by place, per plan (reused: run keeps nothing from one call to the next). */
const RUN_SLOTS = new WeakMap<Plan, Array<FactValue | undefined>>();

/** Per plan and case field, the places in `ordered` of the derivations that rest on it (directly or not). */
const DOWNSTREAM = new WeakMap<Plan, Map<string, number[]>>();
function downstream(p: Plan, field: string): number[] {
  let byField = DOWNSTREAM.get(p);
  if (!byField) DOWNSTREAM.set(p, (byField = new Map()));
  let out = byField.get(field);
  if (!out) {
    out = [];
    for (let j = 0; j < p.ordered.length; j++) if (p.baseInputs.get(p.ordered[j]!.name)!.includes(field)) out.push(j);
    byField.set(field, out);
  }
  return out;
}

/** The same derived value: equal primitives, or lists with the same members in the same order. */
function same(a: FactValue | undefined, b: FactValue | undefined): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * `values` came from `run` and one case field has since been set (or changed): work out again,
 * in plan order, the derivations resting on it, but only those one of whose inputs changed value
 * (the others read the same inputs, and a derive is pure). Returns the places (Plan.slot) of
 * `field` and of every derived fact whose value changed (became known, unknown, or another
 * value), in plan order. Gives what `run` gives on the whole map.
 */
export function rerunChanged(p: Plan, values: FactSlots, field: string, untrusted?: ReadonlySet<string>): number[] {
  const changed = [p.slot.get(field)!];
  // Marks instead of a set of changed names: a judgement of the search allocates nothing for them.
  const marks = p.changedMarks;
  // A number past what the array holds would match nothing: start again from 1 with it cleared.
  if (marks.run === 0xffffffff) {
    marks.run = 0;
    marks.at.fill(0);
  }
  const run = ++marks.run;
  // A derivation is worked out again when it is marked: the field's readers now, a changed
  // fact's readers as it changes (they come after it in plan order). A mark per reader, not a
  // look at every input of every derivation downstream.
  const stale = marks.at;
  const readers = p.readers;
  const fieldReaders = readers[changed[0]!]!;
  for (let r = 0; r < fieldReaders.length; r++) stale[fieldReaders[r]!] = run;
  const slots = values.slots;
  const first = p.baseNames.size;
  for (const j of downstream(p, field)) {
    const d = p.ordered[j]!;
    if (untrusted?.has(d.name)) continue;
    if (stale[first + j] !== run) continue;
    const at = p.inputSlots[j]!;
    // Refilled for every call, as in run, but only where it holds another value: a store by a
    // name is slower than a comparison by place.
    const inputs = p.scratch[j]!;
    const holds = p.scratchHolds[j]!;
    let moved = false;
    for (let m = 0; m < at.length; m++) {
      const x = slots[at[m]!];
      // Object.is: 0 and -0 are other inputs (a derive may tell them apart), NaN is NaN.
      if (!Object.is(holds[m], x)) {
        holds[m] = x;
        inputs[d.inputs[m]!] = x;
        moved = true;
      }
    }
    let v: FactValue | undefined;
    if (!moved && p.scratchGaveKnown[j] === 1) v = p.scratchGave[j];
    else {
      v = d.derive(inputs);
      // A list is asked for again (one a reader could change is not handed out twice).
      p.scratchGaveKnown[j] = Array.isArray(v) ? 0 : 1;
      p.scratchGave[j] = v;
    }
    if (same(slots[first + j], v)) continue;
    slots[first + j] = v;
    changed.push(first + j);
    const next = readers[first + j]!;
    for (let r = 0; r < next.length; r++) stale[next[r]!] = run;
  }
  return changed;
}

/**
 * Needs worked out so far, per plan and per set of known facts (all they depend on); bounded.
 * `unions` holds needsOfAll's answers, by the list of names asked about (lists that recur, such
 * as a remembered outcome's unknown facts).
 */
interface Worked {
  needs: Map<string, string[]>;
  unions: WeakMap<readonly string[], string[]>;
}
const WORKED = new WeakMap<Plan, Map<string, Worked>>();
const MAX_KNOWN_SETS = 1024;

/**
 * The case fields behind several facts, first-seen order, each once: each fact's needs, or the
 * fact itself when it has none listed. The returned list is shared when `needs` remembers it.
 */
export function needsOfAll(needs: Pick<ReadonlyMap<string, string[]>, 'get'>, names: readonly string[]): string[] {
  if (needs instanceof Needs) return needs.union(names);
  return union(needs, names);
}

/**
 * A derived fact's needs from its inputs': the first
 * unknown input's list is taken as it is (shared), only further ones are merged, into a copy.
 * The lists are short (a few case fields), so a linear look-up is cheaper than a Set.
 */
function mergeInputNeeds<K>(inputs: Iterable<K>, needsOfInput: (k: K) => string[] | undefined): string[] {
  let n: string[] | undefined;
  let merged = false;
  for (const k of inputs) {
    const more = needsOfInput(k);
    if (!more || more.length === 0) continue;
    if (!n) { n = more; continue; }
    if (!merged) { n = [...n]; merged = true; }
    for (const b of more) if (!n.includes(b)) n.push(b);
  }
  return n ?? [];
}

function union(needs: Pick<ReadonlyMap<string, string[]>, 'get'>, names: readonly string[]): string[] {
  // Short lists (a few case fields each): a linear look-up is cheaper than a Set.
  const out: string[] = [];
  for (const f of names) for (const b of needs.get(f) ?? [f]) if (!out.includes(b)) out.push(b);
  return out;
}

/**
 * For each unknown fact, the case fields that would decide it: an unknown case field needs
 * itself, an unknown derived fact the fields behind its unknown inputs (never a known one), in
 * first-seen order, each once. Worked out when first asked, and remembered for the set of known
 * facts it was worked out under, which recurs from case to case (the lists depend on which facts
 * are known, never on their values). The lists are shared: read them, do not change them.
 * A look-up only (get, has): the lists live in that shared memo, not in this map, so its size
 * and iteration are empty.
 */
export class Needs extends Map<string, string[]> {
  #memo: Worked | undefined;

  /** A case's facts remember the lists for their set of known facts across cases (the set recurs from case to case). */
  constructor(
    private readonly p: Plan,
    private readonly known: ReadonlyMap<string, FactValue>,
  ) {
    super();
  }

  /**
   * The memo of this set of known facts, named by the known facts in order (the same facts in
   * the same order are the same set): each by its place in the plan as one character, since
   * joining ~80 names made a ~2 KB key to build and hash for every case.
   */
  #worked(): Worked {
    let bySet = WORKED.get(this.p);
    if (!bySet) WORKED.set(this.p, (bySet = new Map()));
    let key = '';
    for (const name of this.known.keys()) {
      const i = this.p.slot.get(name);
      // A name outside the plan (none in a case's facts) keeps its own, between NULs no place gives.
      key += i === undefined ? `\u0000${name}\u0000` : String.fromCharCode(i + 1);
    }
    let memo = bySet.get(key);
    if (!memo) {
      if (bySet.size >= MAX_KNOWN_SETS) bySet.clear();
      bySet.set(key, (memo = { needs: new Map(), unions: new WeakMap() }));
    }
    return memo;
  }

  /** needsOfAll for this case, remembered by the list asked about. */
  union(names: readonly string[]): string[] {
    const { unions } = (this.#memo ??= this.#worked());
    let out = unions.get(names);
    if (!out) unions.set(names, (out = union(this, names)));
    return out;
  }

  override get(name: string): string[] | undefined {
    if (this.known.has(name)) return undefined;
    const memo = (this.#memo ??= this.#worked()).needs;
    const cached = memo.get(name);
    if (cached !== undefined) return cached;
    let n: string[] | undefined;
    const d = this.p.byName.get(name);
    if (!d) {
      if (!this.p.baseNames.has(name)) return undefined;
      n = [name];
    } else {
      n = mergeInputNeeds(d.inputs, (k) => this.#input(k));
    }
    memo.set(name, n);
    return n;
  }

  /** What an input adds to a derived fact's needs: its own when unknown; a known floor's fields behind it. */
  #input(name: string): string[] | undefined {
    if (!this.known.has(name)) return this.get(name);
    const d = this.p.byName.get(name);
    if (!d?.floor) return undefined;
    const memo = (this.#memo ??= this.#worked()).needs;
    const key = `\u0000floor:${name}`;
    let n = memo.get(key);
    if (n === undefined) memo.set(key, (n = mergeInputNeeds(d.inputs, (k) => this.#input(k))));
    return n;
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/** The number of a new needs walk; the marks start again from 1 when the count would wrap. */
function nextNeedRun(marks: { at: Uint32Array; run: number }): number {
  if (marks.run === 0xffffffff) {
    marks.run = 0;
    marks.at.fill(0);
  }
  return ++marks.run;
}

/**
 * needsOfAll over the facts of a partial completion of the verdict's search, held in slots: the
 * case fields behind `names`, first-seen order, each once, as Needs gives them (an unknown case
 * field needs itself, an unknown derived fact the fields behind its unknown inputs, a known fact
 * or one outside the plan is named itself). A walk over the unknown inputs, in declaration order,
 * marking what it has visited: a fact met again adds nothing new, so the walk gives the
 * merged lists' order without building a list per fact (a list per fact and per partial
 * completion, remembered for the whole search, was a fifth of what a write-up's search allocated).
 */
export function needsInSlots(p: Plan, slots: ReadonlyArray<FactValue | undefined>, names: readonly string[]): string[] {
  const marks = p.needMarks;
  const run = nextNeedRun(marks);
  const out: string[] = [];
  for (const f of names) {
    const i = p.slot.get(f);
    if (i === undefined || slots[i] !== undefined) {
      if (!out.includes(f)) out.push(f);
    } else if (marks.at[i] !== run) visitNeeds(p, slots, i, marks.at, run, out);
  }
  return out;
}

function visitNeeds(p: Plan, slots: ReadonlyArray<FactValue | undefined>, i: number, at: Uint32Array, run: number, out: string[]): void {
  at[i] = run;
  const first = p.baseNames.size;
  if (i < first) {
    out.push(p.slotNames[i]!);
    return;
  }
  const inputs = p.inputSlots[i - first]!;
  for (let m = 0; m < inputs.length; m++) {
    const k = inputs[m]!;
    if ((slots[k] === undefined || p.floor[k] === 1) && at[k] !== run) visitNeeds(p, slots, k, at, run, out);
  }
}

/**
 * needsInSlots by place: the places of the case fields behind the first `count` facts of `places`
 * (all unknown in `slots`), first-seen order, each once, written into `out` (room for every case
 * field and each of them): their count. The verdict's search asks it, which reads facts by place
 * and keeps no list per call.
 */
export function needsAtSlotsInto(p: Plan, slots: ReadonlyArray<FactValue | undefined>, places: ArrayLike<number>, count: number, out: Int32Array): number {
  const marks = p.needMarks;
  const run = nextNeedRun(marks);
  let n = 0;
  for (let k = 0; k < count; k++) {
    const i = places[k]!;
    if (marks.at[i] !== run) n = visitNeedsAt(p, slots, i, marks.at, run, out, n);
  }
  return n;
}

/**
 * The walk of needsAtSlotsInto from the fact at `root`: depth first, inputs in declaration order,
 * each fact visited once (marked `run` in `at`), each case field met written to `out` after its
 * first `n`; the count after. A loop over a stack of its own (Plan.needStack), not a call per
 * fact: the search makes ~16M visits per thousand write-ups.
 */
function visitNeedsAt(p: Plan, slots: ReadonlyArray<FactValue | undefined>, root: number, at: Uint32Array, run: number, out: Int32Array, n: number): number {
  at[root] = run;
  const first = p.baseNames.size;
  if (root < first) {
    out[n] = root;
    return n + 1;
  }
  const { facts, next } = p.needStack;
  const floor = p.floor;
  facts[0] = root;
  next[0] = 0;
  let top = 1;
  while (top > 0) {
    const inputs = p.inputSlots[facts[top - 1]! - first]!;
    let m = next[top - 1]!;
    let deeper = false;
    while (m < inputs.length) {
      const k = inputs[m++]!;
      if ((slots[k] !== undefined && floor[k] !== 1) || at[k] === run) continue;
      at[k] = run;
      if (k < first) {
        out[n++] = k;
        continue;
      }
      // Its inputs first, then the rest of this fact's.
      next[top - 1] = m;
      facts[top] = k;
      next[top] = 0;
      top++;
      deeper = true;
      break;
    }
    if (!deeper) top--;
  }
  return n;
}

/** Per plan and case field, 1 at the place of the field and of each derived fact resting on it. */
const MOVED = new WeakMap<Plan, Map<string, Uint8Array>>();
export function movedBy(p: Plan, field: string): Uint8Array {
  let byField = MOVED.get(p);
  if (!byField) MOVED.set(p, (byField = new Map()));
  let out = byField.get(field);
  if (!out) {
    out = new Uint8Array(p.slotNames.length);
    out[p.slot.get(field)!] = 1;
    for (const j of downstream(p, field)) out[p.baseNames.size + j] = 1;
    byField.set(field, out);
  }
  return out;
}

/** Needs (as above) of a partial completion of the verdict's search, worked out from its slots when asked. */
export class SlotNeeds {
  constructor(
    private readonly p: Plan,
    private readonly known: FactSlots,
  ) {}

  get(name: string): string[] | undefined {
    const i = this.p.slot.get(name);
    if (i === undefined || this.known.slots[i] !== undefined) return undefined;
    return needsInSlots(this.p, this.known.slots, [name]);
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}
