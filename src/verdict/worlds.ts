import type { VerdictId } from '../case/schema.js';
import { domainOf } from '../engine/domains.js';
import { factsOf, slotCondition, truthAt, unknownSlotsInto, type SlotCondition } from '../engine/evaluate.js';

import { factsOfValues, factsWith, restingOn, searchFacts, SLOT_COUNT, slotName, slotOf, type Facts, type SearchFacts, type FactValue } from '../facts/facts.js';
import type { RuleSet } from '../rules/load.js';
import { rankIn } from './order.js';
import { possibleOf, type Choice } from './choose.js';

/**
 * The verdict of a partial case is the set of verdicts over its consistent completions
 * (DESIGN.md). The three-valued fold gives a superset of it at once (the fast path, exact when
 * its verdict is definite); when it is not, this searches the completions: it fills one unknown
 * field at a time from its domain (src/engine/domains.ts), judges each partial completion with
 * the same fold, drops those a constraint rules out, and stops a branch as soon as the fold
 * says it can add no verdict not already seen. `decides` are the fields one of whose values
 * changes that set, ranked by how much.
 */

/**
 * The case fields behind the constraints a partial completion leaves undecided, in declaration
 * order, each once. Worked out when first asked: most partial completions are ruled out or left
 * at once, and never ask.
 */
function constraintNeedsOf(j: Judged, compiled: Compiled, facts: SearchFacts): readonly number[] {
  if (j.constraintNeeds) return j.constraintNeeds;
  const out = PLACES.fields;
  let count = 0;
  // Each field once: marked with this call's number, by place (a list search per field added up).
  if (NEEDS_SEEN.run === 0xffffffff) {
    NEEDS_SEEN.run = 0;
    NEEDS_SEEN.at.fill(0);
  }
  const run = ++NEEDS_SEEN.run;
  const seen = NEEDS_SEEN.at;
  for (let i = 0; i < j.constraints.length; i++) {
    if (j.constraints[i]!.truth !== 'unknown') continue;
    const needs = needsOf(j.constraints, i, compiled.constraints[i]!.when, facts);
    for (let k = 0; k < needs.length; k++) {
      const f = needs[k]!;
      if (seen[f] !== run) {
        seen[f] = run;
        out[count++] = f;
      }
    }
  }
  return (j.constraintNeeds = listOf(out, count));
}

/**
 * Places worked out before they are kept as a list of their own length (listOf): the search keeps
 * every node's lists, and one grown by push, then copied, was a third of what it allocated.
 * `unknown` and `needs` for needsOf, `fields` for constraintNeedsOf (which calls needsOf).
 */
const PLACES = { unknown: new Int32Array(SLOT_COUNT + 1), needs: new Int32Array(SLOT_COUNT + 1), fields: new Int32Array(SLOT_COUNT + 1) };

/** The first `count` places of `from`, as a list (the shared empty one for none). */
function listOf(from: Int32Array, count: number): readonly number[] {
  if (count === 0) return NO_PLACES;
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = from[i]!;
  return out;
}

/** No places: shared, read only. */
const NO_PLACES: readonly number[] = Object.freeze([]);

/** constraintNeedsOf's marks, by place, and the number of its last call. */
const NEEDS_SEEN = { at: new Uint32Array(SLOT_COUNT), run: 0 };

/** The exact answer, or the fast path's where the search ran out of budget. */
export interface Settled {
  verdict: VerdictId;
  possible: VerdictId[];
  decides: string[];
  /** False when the search stopped at its budget and the fast path's superset was kept. */
  exact: boolean;
  /**
   * False when `decides` keeps a field that ranking did not judge within its budget (the fold lists
   * it): the list then holds every field that splits the answer and perhaps some that do not.
   */
  decidesExact: boolean;
}

/** What the searches have cost so far in this process (npm run bench prints it). */
export const SEARCH_STATS = { cases: 0, judgements: 0, inexact: 0, ranking: 0, remembered: 0 };

/** Partial completions one case may judge before the fold's superset is kept (`exact: false`). */
const BUDGET = 2000;
/** Judgements confirming one verdict for one value of one field, while ranking `decides`. */
const PER_VALUE = 3;
/** The same for a field of two or three values (a flag, an outcome): few values, so each may search longer. */
const PER_SMALL = 30;
/** Judgements ranking `decides` may spend on short searches; past it each value is judged by the fold alone. */
const RANKING_DEEP = 120;
/** Judgements ranking `decides` may spend in all; past it a field is kept where the fold lists it. */
const RANKING_BUDGET = 200;

/**
 * A check's answer in one partial completion: its truth, and for an unknown one, once asked
 * (needsOf), the case fields it waits for and the unknown facts it read. Facts and fields are
 * named by their places in the slot arrays (slotOf).
 */
interface Checked {
  truth: 'true' | 'false' | 'unknown';
  /** needsOf's answer (undefined: not asked yet). */
  needs: readonly number[] | undefined;
  /** The unknown facts it read (with needs). */
  unknown: readonly number[] | undefined;
}

/**
 * The case fields the check at `answers[i]` waits for (none for a decided one), on `facts`, the
 * partial completion whose answers they are. Worked out when first asked, and kept in its place:
 * an unknown check is the shared UNKNOWN until then, since most partial completions are ruled
 * out or left at once and never ask (an answer object each was a sixth of what the search kept).
 */
function needsOf(answers: Checked[], i: number, when: SlotCondition, facts: SearchFacts): readonly number[] {
  const c = answers[i]!;
  if (c.truth !== 'unknown') return NO_PLACES;
  if (c.needs !== undefined) return c.needs;
  const unknownCount = unknownSlotsInto(when, facts.values.slots, PLACES.unknown, 0);
  const needsCount = facts.needsInto(PLACES.unknown, unknownCount, PLACES.needs);
  const needs = listOf(PLACES.needs, needsCount);
  answers[i] = { truth: 'unknown', needs, unknown: listOf(PLACES.unknown, unknownCount) };
  return needs;
}

/** Per rule set: each verdict check and constraint with the facts its condition reads. */
interface Compiled {
  /** `bit`: the check's verdict as one bit (Compiled.verdicts); `rank`: its rankIn; `requires` by place in the slots. */
  checks: Array<{ verdict: VerdictId; bit: number; rank: number; weight: number; when: SlotCondition; requires: readonly number[] | undefined; reads: ReadonlySet<number> }>;
  constraints: Array<{ when: SlotCondition; reads: ReadonlySet<number> }>;
  /** Every verdict of the policy, each once: a verdict's bit is 1 << its place here. */
  verdicts: readonly VerdictId[];
  /** A verdict's bit (0 for one not in `verdicts`). */
  bit: (v: VerdictId) => number;
  /** 2 ** verdicts.length: couldOf's key is fired * span + opened. */
  span: number;
  /** couldOf's answers, by that key. */
  could: Map<number, { list: readonly VerdictId[]; mask: number }>;
  /** Per fact, by its place in the slots: the constraints and the checks that read it (their places above). */
  readers: Array<{ constraints: number[]; checks: number[] } | undefined>;
  /** Per constraint and per check, the last judgement (its number) that found it reading a changed fact. */
  touchedConstraints: Uint32Array;
  touchedChecks: Uint32Array;
  judgements: number;
}
const COMPILED = new WeakMap<RuleSet, Compiled>();
function compiledOf(set: RuleSet): Compiled {
  let c = COMPILED.get(set);
  if (!c) {
    const checks = set.rules.filter((r) => r.spec.verdict !== 'warning');
    const verdicts = [...new Set<VerdictId>([...set.verdicts.order.map((e) => e.id), set.verdicts.fallback.id, ...set.verdicts.holds_back, ...checks.map((r) => r.spec.verdict as VerdictId)])];
    if (verdicts.length > 26) throw new Error(`the search keeps verdicts as bits of one number (and two such in one key): ${verdicts.length} is too many`);
    // Checks and constraints read only facts of the catalogue (src/rules/parse.ts), each with its place.
    const at = (name: string): number => {
      const i = slotOf(name);
      if (i === undefined) throw new Error(`the search reads facts by place, and ${name} has none`);
      return i;
    };
    const places = (names: Iterable<string>) => new Set([...names].map(at));
    c = {
      checks: checks.map((r) => ({ verdict: r.spec.verdict as VerdictId, bit: 1 << verdicts.indexOf(r.spec.verdict as VerdictId), rank: rankIn(set.verdicts, r.spec.verdict as VerdictId), weight: r.spec.weight, when: slotCondition(r.spec.when, at), requires: r.spec.requires?.map(at), reads: places([...factsOf(r.spec.when), ...(r.spec.requires ?? [])]) })),
      constraints: set.constraints.map((k) => ({ when: slotCondition(k.spec.broken_when, at), reads: places(factsOf(k.spec.broken_when)) })),
      verdicts,
      bit: (v) => { const i = verdicts.indexOf(v); return i < 0 ? 0 : 1 << i; },
      span: 2 ** verdicts.length,
      could: new Map(),
      readers: new Array(SLOT_COUNT),
      touchedConstraints: new Uint32Array(set.constraints.length),
      touchedChecks: new Uint32Array(checks.length),
      judgements: 0,
    };
    const readersOf = (f: number) => (c!.readers[f] ??= { constraints: [], checks: [] });
    c.constraints.forEach((k, i) => k.reads.forEach((f) => readersOf(f).constraints.push(i)));
    c.checks.forEach((k, i) => k.reads.forEach((f) => readersOf(f).checks.push(i)));
    COMPILED.set(set, c);
  }
  return c;
}

/** A decided check's answer: shared, it waits for nothing. */
const TRUE: Checked = { truth: 'true', needs: undefined, unknown: undefined };
const FALSE: Checked = { truth: 'false', needs: undefined, unknown: undefined };
/** An undecided answer whose fields no one has asked for yet: shared, never changed (needsOf replaces it). */
const UNKNOWN: Checked = Object.freeze({ truth: 'unknown', needs: undefined, unknown: undefined }) as Checked;

function check(when: SlotCondition, facts: SearchFacts): Checked {
  const t = truthAt(when, facts.values.slots);
  return t === 'unknown' ? UNKNOWN : t === 'true' ? TRUE : FALSE;
}

/**
 * A parent's answer to a check that reads nothing that changed: its truth, on the child's facts.
 * An unknown one waits for the same fields when none of its unknown facts rests on the field just
 * set (`moved`: that field and every derived fact resting on it), since which inputs behind them
 * are known is the parent's: then the parent's answer, with its fields, is shared.
 */
function reused(c: Checked, moved: Uint8Array): Checked {
  if (c.truth !== 'unknown') return c;
  if (c.needs !== undefined && !movedAny(c.unknown!, moved)) return c;
  return UNKNOWN;
}

/** Whether a fact at one of `places` is marked in `moved` (a loop: a closure per check added up). */
function movedAny(places: readonly number[], moved: Uint8Array): boolean {
  for (let i = 0; i < places.length; i++) if (moved[places[i]!]) return true;
  return false;
}

/**
 * Mark the constraints and checks that read a fact of `changed` with a new judgement number (in
 * compiled.touchedConstraints and touchedChecks), which it returns: marks, not fresh arrays, so a
 * judgement allocates nothing to know them.
 */
function touchedBy(compiled: Compiled, changed: readonly number[]): number {
  // A mark past what the arrays hold would match none: start again from 1 with the arrays cleared.
  if (compiled.judgements === 0xffffffff) {
    compiled.judgements = 0;
    compiled.touchedConstraints.fill(0);
    compiled.touchedChecks.fill(0);
  }
  const mark = ++compiled.judgements;
  for (const f of changed) {
    const r = compiled.readers[f];
    if (!r) continue;
    for (const i of r.constraints) compiled.touchedConstraints[i] = mark;
    for (const i of r.checks) compiled.touchedChecks[i] = mark;
  }
  return mark;
}

/** What judging one partial completion gives, with each check's answer kept for its children. */
interface Judged {
  /** A constraint rules it out. */
  dead: boolean;
  /** The verdicts its worlds may get (couldOf); none when dead. */
  could: readonly VerdictId[];
  /** The bits (Compiled.verdicts) of `could` and of the fallback: the verdicts whose undecided checks fields() reads. */
  live: number;
  /** Each check's answer (the undecided ones are the `unknown`), and each constraint's, by place in Compiled. */
  checks: Checked[];
  constraints: Checked[];
  /** constraintNeedsOf's answer, once asked. */
  constraintNeeds: readonly number[] | undefined;
}

/**
 * One partial completion judged by the fold, with the constraints it breaks or leaves open. With
 * `from` (its parent's answers) and `changed` (the field just filled and every derived fact whose
 * value that changed), a check that reads none of them keeps its parent's truth (it reads the same
 * values); the fields an unknown one waits for are worked out on these facts, when asked (which of
 * them are known has changed).
 */
/** Whether every one of `names` is known (a loop: a closure per check and judgement added up). */
function allKnown(places: readonly number[], facts: SearchFacts): boolean {
  const slots = facts.values.slots;
  for (let i = 0; i < places.length; i++) {
    const at = places[i]!;
    if (at < 0 || slots[at] === undefined) return false;
  }
  return true;
}

function judgeFull(set: RuleSet, facts: SearchFacts, from?: Judged, changed?: readonly number[], moved?: Uint8Array): Judged {
  const compiled = compiledOf(set);
  const touched = changed && from ? touchedBy(compiled, changed) : 0;
  // Arrays of their final length: grown by push, they were copied as they grew, and the search
  // keeps every node's.
  const constraints: Checked[] = new Array<Checked>(compiled.constraints.length);
  // Indexed loops: entries() made a pair for every constraint and check of every judgement, a
  // third of what a write-up's search allocated.
  for (let i = 0; i < compiled.constraints.length; i++) {
    const k = compiled.constraints[i]!;
    const c = touched && compiled.touchedConstraints[i] !== touched ? reused(from!.constraints[i]!, moved!) : check(k.when, facts);
    // A partial completion a constraint rules out is never extended: nothing of it is read again.
    if (c.truth === 'true') return DEAD;
    constraints[i] = c;
  }
  const checks: Checked[] = new Array<Checked>(compiled.checks.length);
  // The verdicts of the checks that fired and of those left undecided, as bits (Compiled.verdicts).
  let fired = 0;
  let opened = 0;
  for (let i = 0; i < compiled.checks.length; i++) {
    const r = compiled.checks[i]!;
    let c: Checked;
    if (touched && from!.checks.length && compiled.touchedChecks[i] !== touched) c = reused(from!.checks[i]!, moved!);
    else if (r.requires && !allKnown(r.requires, facts)) c = FALSE; // not applied until they are known
    else c = check(r.when, facts);
    checks[i] = c;
    if (c.truth === 'true') fired |= r.bit;
    else if (c.truth === 'unknown') opened |= r.bit;
  }
  const could = couldOf(set, compiled, fired, opened);
  return { dead: false, could: could.list, live: could.mask | compiled.bit(set.verdicts.fallback.id), checks, constraints, constraintNeeds: undefined };
}

/** Whether the check at `i` is undecided and of a verdict in `reachable` (bits, Compiled.verdicts): one fields() reads. */
function live(checks: readonly Checked[], compiled: Compiled['checks'], reachable: number, i: number): boolean {
  return checks[i]!.truth === 'unknown' && (reachable & compiled[i]!.bit) !== 0;
}

/** What every partial completion a constraint rules out gives: shared, as nothing reads it but `dead`. */
const DEAD: Judged = { dead: true, could: [], live: 0, checks: [], constraints: [], constraintNeeds: [] };

/**
 * The verdicts the worlds of a partial completion may get: one the fold still allows (never one a
 * fired insufficient-evidence check holds back), or the fallback while no verdict below is
 * established whatever the rest. A function of which verdicts' checks fired and which are left
 * undecided (as bits), so worked out once per rule set and pair of them: the lists are shared,
 * read-only.
 */
function couldOf(set: RuleSet, compiled: Compiled, fired: number, opened: number): { list: readonly VerdictId[]; mask: number } {
  const key = fired * compiled.span + opened;
  const known = compiled.could.get(key);
  if (known) return known;
  const bit = compiled.bit;
  const blocked = (fired & bit(set.verdicts.fallback.id)) !== 0;
  // A check that concludes the fallback and is still undecided may yet hold back the verdicts it
  // holds back (a completion where it fires gets the fallback, not them).
  const mayBlock = blocked || (opened & bit(set.verdicts.fallback.id)) !== 0;
  // The lowest verdict that holds whatever the rest: with one, the fallback is out of reach.
  const floor = set.verdicts.order.find((e) => (fired & bit(e.id)) !== 0 && !(mayBlock && set.verdicts.holds_back.includes(e.id)))?.id;
  const { possible } = possibleOf(set.verdicts, (v) => (fired & bit(v)) !== 0, (v) => (opened & bit(v)) !== 0);
  const could = possible.filter((v) => !(blocked && set.verdicts.holds_back.includes(v)));
  if (floor === undefined) could.push(set.verdicts.fallback.id);
  const answer = { list: could, mask: could.reduce((m, v) => m | bit(v), 0) };
  compiled.could.set(key, answer);
  return answer;
}


/** A partial completion known to have a world with `verdict`: its added fields, and the fields its judgement still read. */
interface Witness {
  verdict: VerdictId;
  added: ReadonlyMap<string, FactValue>;
  /** Every completion of it gets `verdict` (the fold is definite and no constraint is open). */
  settled: boolean;
  /** Fields the judgement of this partial completion still reads (any other field cannot change it). */
  reads: ReadonlySet<string>;
}

/** A partial completion judged: the verdicts its worlds may get and the fields its judgement reads. */
interface Node {
  /** The partial completion this one extends by `field` = `value` (none for the case as given). */
  parent: Node | undefined;
  field: string | undefined;
  value: FactValue | undefined;
  /** The partial completions one step on from this one, by the id of the pair that step sets (Worlds.idOf). */
  kids: Map<number, Node> | undefined;
  /** addedOf's answer, once asked (witnesses only: the search keeps every node, so not a copy each). */
  added: ReadonlyMap<string, FactValue> | undefined;
  /** Its memo key: the ids of its field=value pairs (Worlds.idOf), ascending, one character each. */
  key: string;
  dead: boolean;
  could: readonly VerdictId[];
  /**
   * Its facts while it is one of the last HELD whose facts were asked for (the case as given keeps
   * its own): Worlds.factsAt works them out again from its parent's and `changes` otherwise. A
   * copy of every fact per partial completion, kept for the whole search, was most of what the
   * search kept, and the garbage collector copied it young and old.
   */
  facts: SearchFacts | undefined;
  /** Where its facts differ from its parent's (factsWith's `changed`): place, value, place, value, … */
  changes: ReadonlyArray<number | FactValue | undefined>;
  judged: Judged;
}

/** The fields a partial completion sets, in the order they were set. */
function addedOf(n: Node): ReadonlyMap<string, FactValue> {
  if (n.added) return n.added;
  const chain: Node[] = [];
  for (let at: Node | undefined = n; at?.parent; at = at.parent) chain.push(at);
  const added = new Map<string, FactValue>();
  for (let i = chain.length - 1; i >= 0; i--) added.set(chain[i]!.field!, chain[i]!.value!);
  return (n.added = added);
}

/** The changes of the case as given: it has no parent, and holds its facts. */
const NO_CHANGES: Node['changes'] = [];

/** Thrown (not an Error: no stack to build) when a search spends its budget. */
const EXHAUSTED = { exhausted: true } as const;
/** Thrown when a try has ruled out enough values to start again with what it learnt (reachSoon). */
const RESTART = { restart: true } as const;

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
  /** has() of the case field at a place (slotOf), remembered by place. */
  private readonly byPlace: Array<boolean | undefined> = [];
  hasAt(at: number): boolean {
    return (this.byPlace[at] ??= this.has(slotName(at)));
  }
}

/** How many partial completions keep their facts at once (Node.facts): the path being searched and its last branches. */
const HELD = 64;

/** Values a first try at one verdict may see ruled out before it restarts with what it learnt (then twice as many, …). */
const RESTART_FIRST = 16;

/**
 * The targeted search: for one verdict at a time, is there a consistent completion that gets it?
 * Each partial completion is judged by the fold, which says which verdicts its worlds may get
 * (a superset); a branch is dropped as soon as the target is not among them, and the search
 * stops at the first completion that gets it. The fields filled first are the ones the target
 * turns on (its own checks, the checks ranked above it, the checks that hold it back), then
 * those of the constraints still open, so a completion is consistent as well.
 */
class Worlds {
  evals = 0;
  private readonly memo = new Map<string, Node>();
  readonly witnesses: Witness[] = [];

  constructor(
    private readonly set: RuleSet,
    private readonly base: ReadonlyMap<string, FactValue>,
    private readonly domains: Domains,
    private readonly untrusted: ReadonlySet<string> | undefined,
    private budget: number,
  ) {}

  /** One id per field=value pair this search has set, so a memo key is a short list of numbers. */
  private readonly pairs = new Map<string, Map<FactValue, number>>();
  private idOf(field: string, value: FactValue): number {
    let byValue = this.pairs.get(field);
    if (!byValue) this.pairs.set(field, (byValue = new Map()));
    // Domain values are primitives or one shared list per field, so identity is equality here.
    let id = byValue.get(value);
    if (id === undefined) {
      // A memo key holds one UTF-16 unit per pair; the domains give a few thousand pairs at most.
      if (this.nextId > 0xffff) throw new Error('the search set more field=value pairs than its memo keys can hold');
      byValue.set(value, (id = this.nextId++));
    }
    return id;
  }
  private nextId = 0;

  /** The case as given: no unknown field set. */
  top(): Node {
    const hit = this.memo.get('');
    if (hit) return hit;
    if (++this.evals > this.budget) throw EXHAUSTED;
    SEARCH_STATS.judgements++;
    const facts = searchFacts(factsOfValues(new Map(this.base), this.untrusted));
    const n = this.keep('', undefined, undefined, undefined, NO_CHANGES, judgeFull(this.set, facts));
    n.facts = facts;
    return n;
  }

  /**
   * `parent` with one more field set. The memo key is the set of pairs, whatever the order they
   * were set in, so a partial completion reached by two fill orders is judged once; only what
   * rests on the new field is worked out again.
   */
  child(parent: Node, field: string, value: FactValue): Node {
    const id = this.idOf(field, value);
    // A step taken before from this node (restarts and ranking walk the same paths again) is
    // found without building the key.
    const again = parent.kids?.get(id);
    if (again) return again;
    const ids = parent.key;
    let at = ids.length;
    while (at > 0 && ids.charCodeAt(at - 1) > id) at--;
    const key = ids.slice(0, at) + String.fromCharCode(id) + ids.slice(at);
    const hit = this.memo.get(key);
    if (hit) {
      (parent.kids ??= new Map()).set(id, hit);
      return hit;
    }
    if (++this.evals > this.budget) throw EXHAUSTED;
    SEARCH_STATS.judgements++;
    const { facts, changed } = factsWith(this.factsAt(parent), field, value, this.untrusted, this.spare.pop());
    const changes = new Array<number | FactValue | undefined>(2 * changed.length);
    for (let k = 0; k < changed.length; k++) {
      changes[2 * k] = changed[k]!;
      changes[2 * k + 1] = facts.values.slots[changed[k]!];
    }
    const n = this.keep(key, parent, field, value, changes, judgeFull(this.set, facts, parent.judged, changed, restingOn(field)));
    // One a constraint rules out is never extended nor read again: its facts are not kept.
    if (!n.dead) this.hold(n, facts);
    else this.spare.push(facts);
    (parent.kids ??= new Map()).set(id, n);
    return n;
  }

  private keep(key: string, parent: Node | undefined, field: string | undefined, value: FactValue | undefined, changes: Node['changes'], judged: Judged): Node {
    const n: Node = { parent, field, value, kids: undefined, added: undefined, key, dead: judged.dead, could: judged.could, facts: undefined, changes, judged };
    this.memo.set(key, n);
    return n;
  }

  /** The nodes holding their facts (Node.facts), oldest first from `heldAt`, which the next to hold them replaces. */
  private readonly held = new Array<Node | undefined>(HELD).fill(undefined);
  private heldAt = 0;

  /**
   * Facts no node holds any more, to be overwritten by the next worked out (a copy of every fact
   * per judgement was most of what the search allocated). At most HELD + 1: each comes from a
   * node letting go of its own or from one ruled out, and the next judgement takes one.
   */
  private readonly spare: SearchFacts[] = [];

  private hold(n: Node, facts: SearchFacts): SearchFacts {
    const old = this.held[this.heldAt];
    if (old) {
      // Nothing reads a node's facts once it lets go of them: only its own calls read them, and
      // none of those holds another node's meanwhile.
      this.spare.push(old.facts!);
      old.facts = undefined;
    }
    this.held[this.heldAt] = n;
    this.heldAt = (this.heldAt + 1) % HELD;
    return (n.facts = facts);
  }

  /** The facts of `n`: held, or its nearest holding ancestor's with the changes of each step since (the same values, the same lists). */
  private factsAt(n: Node): SearchFacts {
    if (n.facts) return n.facts;
    const chain: Node[] = [];
    let from = n;
    // The case as given holds its facts for the whole search, so the walk ends there at the latest.
    while (!from.facts) {
      chain.push(from);
      from = from.parent!;
    }
    const facts = from.facts.copy(this.spare.pop());
    for (let i = chain.length - 1; i >= 0; i--) {
      const c = chain[i]!.changes;
      for (let k = 0; k < c.length; k += 2) facts.setAt(c[k] as number, c[k + 1] as FactValue | undefined);
    }
    return this.hold(n, facts);
  }

  /** constraintNeedsOf of `n`, its facts worked out only when it has not been asked before. */
  private constraintNeeds(n: Node): readonly number[] {
    return n.judged.constraintNeeds ?? constraintNeedsOf(n.judged, compiledOf(this.set), this.factsAt(n));
  }

  /**
   * The fields the judgement of `n` reads that a completion can fill, most relevant to `target`
   * first. With `firstOnly`, only the first of them (or none): a try that has learnt nothing yet
   * fills the first, and working out the rest was most of a write-up's search.
   */
  private fields(n: Node, target: VerdictId | undefined, firstOnly = false, withChecks = true): string[] {
    // A field this partial completion has set is known in its facts, as is every field the case
    // gives (which has no domain): unknown there and with a domain is exactly "fillable".
    const facts = this.factsAt(n);
    const out: string[] = [];
    // Each field judged once (a list search per field made this a third of a write-up's search):
    // marked by this call's number, by place.
    if (this.seenRun === 0xffffffff) {
      this.seenRun = 0;
      this.seen.fill(0);
    }
    const run = ++this.seenRun;
    const policy = this.set.verdicts;
    const fallback = policy.fallback.id;
    // The undecided checks (in declaration order) of a verdict still in reach, or of the fallback.
    const checks = n.judged.checks;
    const compiled = compiledOf(this.set).checks;
    const reachable = n.judged.live;
    if (withChecks) {
      if (target !== undefined) {
        for (let i = 0; i < checks.length; i++) if (live(checks, compiled, reachable, i) && compiled[i]!.verdict === target && this.addAll(needsOf(checks, i, compiled[i]!.when, facts), facts, run, out, firstOnly)) return out;
        const targetRank = rankIn(policy, target);
        for (let i = 0; i < checks.length; i++) {
          const v = compiled[i]!.verdict;
          if (live(checks, compiled, reachable, i) && v !== target && v !== fallback && compiled[i]!.rank < targetRank && this.addAll(needsOf(checks, i, compiled[i]!.when, facts), facts, run, out, firstOnly)) return out;
        }
        if (policy.holds_back.includes(target)) for (let i = 0; i < checks.length; i++) if (live(checks, compiled, reachable, i) && compiled[i]!.verdict === fallback && this.addAll(needsOf(checks, i, compiled[i]!.when, facts), facts, run, out, firstOnly)) return out;
      }
      for (let i = 0; i < checks.length; i++) if (live(checks, compiled, reachable, i) && this.addAll(needsOf(checks, i, compiled[i]!.when, facts), facts, run, out, firstOnly)) return out;
    }
    this.addAll(constraintNeedsOf(n.judged, compiledOf(this.set), facts), facts, run, out, firstOnly);
    return out;
  }

  /**
   * fields(): adds to `out` the fillable fields of `needs` not marked with `run` yet, marking
   * them; true when the caller has what it asked for (the first, with `firstOnly`). A method, not
   * a closure per call of fields.
   */
  private addAll(needs: readonly number[], facts: SearchFacts, run: number, out: string[], firstOnly: boolean): boolean {
    const seen = this.seen;
    const slots = facts.values.slots;
    for (let k = 0; k < needs.length; k++) {
      const f = needs[k]!;
      if (seen[f] === run) continue;
      seen[f] = run;
      if (slots[f] === undefined && this.domains.hasAt(f)) {
        out.push(slotName(f));
        if (firstOnly) return true;
      }
    }
    return false;
  }

  /** fields()'s marks, by place, and the number of its last call. */
  private readonly seen = new Uint32Array(SLOT_COUNT);
  private seenRun = 0;

  /** Every field the judgement of `n` reads (with or without a domain). */
  private reads(n: Node): Set<string> {
    const compiled = compiledOf(this.set);
    const facts = this.factsAt(n);
    const r = new Set<string>(constraintNeedsOf(n.judged, compiled, facts).map(slotName));
    const checks = n.judged.checks;
    for (let i = 0; i < checks.length; i++) if (checks[i]!.truth === 'unknown') for (const f of needsOf(checks, i, compiled.checks[i]!.when, facts)) r.add(slotName(f));
    return r;
  }

  /** A consistent completion of `added` whose verdict is `target`, or undefined when there is none. */
  reach(target: VerdictId, n: Node): Witness | undefined {
    if (n.dead || !n.could.includes(target)) return undefined;
    const alone = n.could.length === 1;
    const settled = alone && this.constraintNeeds(n).length === 0;
    let fields: string[];
    if (settled) fields = [];
    else if (alone) fields = this.fields(n, undefined, !this.learnt, false);
    else fields = this.fields(n, target, !this.learnt);
    if (!fields.length) {
      // Nothing left to fill that the judgement reads: this partial completion stands for its
      // worlds, and a check left open only by a fact no case field decides may go either way.
      const w: Witness = { verdict: target, added: addedOf(n), settled, reads: this.reads(n) };
      this.witnesses.push(w);
      for (const [f, v] of w.added) this.phase.set(f, v);
      return w;
    }
    const field = this.pick(fields);
    for (const v of this.valuesOf(field)) {
      const child = this.child(n, field, v);
      if (child.dead || !child.could.includes(target)) {
        // This value rules the target out at once: the field is one the target's fate turns on.
        this.weight.set(field, (this.weight.get(field) ?? 0) + 1);
        if (++this.fails > this.failLimit) throw RESTART;
        continue;
      }
      const w = this.reach(target, child);
      if (w) return w;
    }
    return undefined;
  }

  /**
   * How often setting each field has ruled the target out at once. The field to fill next is the
   * one with the most such failures for its number of values (fail first: a field that refutes
   * the target is best filled near the root, where one refutation covers every branch below),
   * else the first in the target's order. With restarts (reachSoon) a refutation learnt deep in
   * one branch moves its field up for the next try.
   */
  private readonly weight = new Map<string, number>();
  /** Values ruled out at once in this try, and how many a try may see before it restarts (reachSoon). */
  private fails = 0;
  private failLimit = Infinity;

  private learnt = false;

  private pick(fields: readonly string[]): string {
    let best = fields[0]!;
    if (!this.learnt) return best;
    let score = 0;
    for (const f of fields) {
      const w = this.weight.get(f);
      if (w === undefined) continue;
      const s = w / this.domains.get(f).length;
      if (s > score) { best = f; score = s; }
    }
    return best;
  }

  /**
   * reach with restarts: a try that has seen RESTART_FIRST values ruled out at once (then twice as
   * many, and so on) without an answer starts again from the top, the fields reordered by what
   * it learnt. What it judged is remembered, so a restart pays only for nodes it has not seen;
   * a try that only goes deeper, ruling nothing out, is never cut short.
   */
  reachSoon(target: VerdictId, from: Node): Witness | undefined {
    for (let limit = RESTART_FIRST; ; limit *= 2) {
      this.fails = 0;
      this.failLimit = limit;
      // The first try keeps the target's own order, which reaches a verdict that is there soonest.
      this.learnt = limit > RESTART_FIRST;
      try {
        return this.reach(target, from);
      } catch (e) {
        if (e !== RESTART) throw e;
      } finally {
        this.failLimit = Infinity;
        this.learnt = false;
      }
    }
  }

  /**
   * The values a completion may give `field`, the one the latest witness gave it first (phase
   * saving, as SAT solvers do): the worlds of the verdicts share most of their benign settings (no
   * record lost, the counter level, a pool as large as the schema allows), so a setting that
   * let one verdict be reached is the likeliest to let the next, and the other values are tried
   * only when it fails. Which world is found first changes; which verdicts have one does not.
   */
  private valuesOf(field: string): readonly FactValue[] {
    const d = this.domains.get(field);
    const saved = this.phase.get(field);
    const at = saved === undefined ? -1 : d.indexOf(saved);
    if (at <= 0) return d;
    return [d[at]!, ...d.slice(0, at), ...d.slice(at + 1)];
  }

  /** Each field's value in the latest witness that set it (valuesOf). */
  private readonly phase = new Map<string, FactValue>();

  /** Whether a known witness of `v` has a completion with `field` = `value`. */
  covered(v: VerdictId, field: string, value: FactValue | undefined): boolean {
    // Values come from this search's domains (one object per list value), so identity is equality.
    return this.witnesses.some((w) => w.verdict === v && (w.added.has(field) ? value !== undefined && w.added.get(field) === value : w.settled || !w.reads.has(field)));
  }

  /**
   * The verdicts of `within` some completion with `field` = `value` gets: those the fold still
   * allows, each confirmed by a known witness or by a search of at most `spend` judgements.
   * `open` when some were kept on the fold's word alone (a search ran out, or none was made);
   * `seen` when at least one was confirmed, so the value has a consistent world at all.
   * Undefined when the fold rules every one out or no completion with the value is consistent.
   */
  reachWith(within: readonly VerdictId[], field: string, value: FactValue, spend: number): { got: VerdictId[]; open: boolean; seen: boolean } | undefined {
    // Known witnesses first: when each verdict has one with this value, no judgement is needed
    // (a witness that leaves the field free, settled or not reading it, allows every value).
    if (within.every((v) => this.covered(v, field, value))) return { got: [...within], open: false, seen: true };
    const n = this.child(this.top(), field, value);
    if (n.dead) return undefined;
    let open = false;
    let seen = false;
    const got: VerdictId[] = [];
    for (const v of within) {
      if (!n.could.includes(v)) continue;
      if (this.covered(v, field, value)) { got.push(v); seen = true; continue; }
      if (spend === 0) { got.push(v); open = true; continue; }
      const limit = this.budget;
      this.budget = Math.min(limit, this.evals + spend);
      try {
        if (this.reach(v, n)) { got.push(v); seen = true; }
      } catch (e) {
        if (!(e === EXHAUSTED) || this.evals > limit) throw e;
        got.push(v);
        open = true;
      } finally {
        this.budget = limit;
      }
    }
    return got.length ? { got, open, seen } : undefined;
  }

  /** Stop judging past this many judgements in all. */
  limit(total: number): void {
    this.budget = Math.min(this.budget, total);
  }

  /** The fields the root's judgement reads that a completion can fill. */
  candidates(): string[] {
    const top = this.top();
    return this.fields(top, undefined);
  }

}

const sorted = (set: RuleSet, vs: Iterable<VerdictId>) => [...vs].sort((a, b) => rankIn(set.verdicts, a) - rankIn(set.verdicts, b));

/**
 * Refine a fast-path answer that is not definite. `base` holds the case's known fields (its
 * derived facts are worked out again for each partial completion), `known` the facts of the case.
 * `possible` is every verdict some consistent completion gets; `decides` every unknown field one
 * of whose values (with a consistent completion) leaves a verdict of `possible` out, ranked by
 * how many it leaves out at most, then by how many different answers its values give.
 */
export function settle(...args: Parameters<typeof settleCase>): Settled {
  const [set, base, , , untrusted] = args;
  // The answer is a function of the rule set, the known case fields and what is not trusted (the
  // facts and the fold's answer are worked out from them), so evidence seen before, as a batch of
  // investigations brings (the same fixture run again, a case replayed), is answered again at once.
  let memo = SETTLED.get(set);
  if (!memo) SETTLED.set(set, (memo = new Map()));
  let key = '';
  for (const [k, v] of base) key += `${k}=${JSON.stringify(v)}\n`;
  if (untrusted?.size) key += `untrusted=${[...untrusted].sort().join(',')}`;
  const hit = memo.get(key);
  if (hit) {
    SEARCH_STATS.remembered++;
    return { ...hit, possible: [...hit.possible], decides: [...hit.decides] };
  }
  const r = settleCase(...args);
  SEARCH_STATS.cases++;
  if (!r.exact) SEARCH_STATS.inexact++;
  if (memo.size >= SETTLED_LIMIT) memo.clear();
  memo.set(key, { ...r, possible: [...r.possible], decides: [...r.decides] });
  return r;
}

/** Answers of earlier searches, per rule set, by the evidence searched (bounded: cleared when full). */
const SETTLED = new WeakMap<RuleSet, Map<string, Settled>>();
const SETTLED_LIMIT = 1024;

function settleCase(set: RuleSet, base: ReadonlyMap<string, FactValue>, known: Facts, fast: Choice, untrusted?: ReadonlySet<string>): Settled {
  const domains = new Domains(known.values);
  // The fold's superset stands; of what it waits for, only the fields a completion can fill. Its
  // verdicts are the root's (the case as given, judged as the search judges it), the fallback
  // among them unless a verdict holds whatever the rest (couldOf): a completion the evidence
  // cannot decide is a world whose verdict is the fallback, and an answer cut short by the budget
  // has not shown there is none.
  let root: Node | undefined;
  const folded = (): Settled => ({ ...fast, possible: root && !root.dead ? sorted(set, root.could) : fast.possible, decides: fast.decides.filter((f) => domains.has(f)), exact: false, decidesExact: false });
  const w = new Worlds(set, base, domains, untrusted, BUDGET);
  let possible: VerdictId[];
  // Verdicts of the root's list shown to have no consistent world before the budget ran out.
  const none = new Set<VerdictId>();
  try {
    const top = (root = w.top());
    if (top.dead) return folded();
    possible = sorted(set, top.could.filter((v) => {
      const found = w.reachSoon(v, top) !== undefined;
      if (!found) none.add(v);
      return found;
    }));
  } catch (e) {
    if (e !== EXHAUSTED) throw e;
    // Cut short: the root's list less what was already ruled out (two or more left, so the
    // verdict stays the fallback; fewer, and the fold's whole list stands).
    const left = root && !root.dead ? root.could.filter((v) => !none.has(v)) : [];
    return left.length >= 2 ? { ...folded(), possible: sorted(set, left) } : folded();
  }
  // No consistent completion at all: the constraints rule every world out (a contradiction the
  // known facts alone do not show); the fold's answer stands.
  if (!possible.length) return folded();
  const verdict = possible.length === 1 ? possible[0]! : set.verdicts.fallback.id;
  if (possible.length === 1) return { verdict, possible, decides: [], exact: true, decidesExact: true };
  const atRanking = w.evals;
  const scored: Array<{ field: string; narrows: number; splits: number; at: number }> = [];
  const candidates = w.candidates();
  // Ranking spends a bounded share: each value's verdicts confirmed by a short search while the
  // deep share lasts, then by the fold alone (one judgement a value), then not at all: a field
  // left unjudged is kept where the fold lists it. `possible` is exact either way.
  const deep = w.evals + RANKING_DEEP;
  w.limit(w.evals + RANKING_BUDGET);
  const judged = new Set<string>();
  try {
    for (const [at, field] of candidates.entries()) {
      // Every verdict has a witness whatever the field's value: it cannot split the answer.
      if (possible.every((v) => w.covered(v, field, undefined))) { judged.add(field); continue; }
      let narrows = 0;
      let open = false;
      const answers = new Set<string>();
      for (const value of domains.get(field)) {
        const r = w.reachWith(possible, field, value, w.evals < deep ? (domains.get(field).length <= 3 ? PER_SMALL : PER_VALUE) : 0);
        if (!r) continue; // no consistent world has this value
        if (r.open) open = true;
        // A value no world was seen with may have none: what the fold rules out for it splits
        // nothing until one is.
        if (!r.seen) continue;
        answers.add(r.got.join(','));
        if (r.got.length < possible.length) narrows = Math.max(narrows, possible.length - r.got.length);
      }
      // A field none of whose values was seen to split the answer, but some only because a short
      // search ran out, is not judged: it stays where the fold lists it.
      if (narrows === 0 && open) continue;
      judged.add(field);
      if (narrows > 0) scored.push({ field, narrows, splits: answers.size, at });
    }
  } catch (e) {
    if (!(e === EXHAUSTED)) throw e;
  }
  SEARCH_STATS.ranking += w.evals - atRanking;
  scored.sort((a, b) => b.narrows - a.narrows || b.splits - a.splits || a.at - b.at);
  const decides = scored.map((x) => x.field);
  // A field ranking did not judge (its budget ran out, or a value's short search did) may split
  // the answer: it is kept, the fold's own list first, then the other fields the root reads, and
  // the list is marked a superset. Only the fold's were kept before, so a field it did not list
  // (an entry probe's count that only a constraint reads) was dropped while the list said exact.
  let kept = 0;
  const keep = (f: string) => {
    if (decides.includes(f) || judged.has(f) || !candidates.includes(f)) return;
    decides.push(f);
    kept++;
  };
  for (const f of fast.decides) keep(f);
  for (const f of candidates) keep(f);
  return { verdict, possible, decides, exact: true, decidesExact: kept === 0 };
}
