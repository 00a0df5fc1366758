import { z } from 'zod';
import { caseSchema, UNKNOWN, type Case } from '../case/schema.js';
import { countCpuList } from '../kernel/cpus.js';
import { defaultMaxactive, effectiveMaxactive, type ProbeInterface } from '../kernel/maxactive.js';

/**
 * Stage two of the flow: a case becomes a flat set of facts. Every leaf of the case is a fact
 * named by its dotted path; derived facts (counter deltas, the accounting identity, the
 * effective pool size) are computed here, once, with the kernel facts they rest on. A fact is
 * a value or unknown; an unknown fact knows which case fields would decide it (`needs`).
 */

export type FactValue = string | number | boolean | string[];

export interface Facts {
  /** Known values. A fact absent from this map is unknown. */
  values: Map<string, FactValue>;
  /** For each unknown fact, the case fields (dotted paths) that would decide it. */
  needs: Map<string, string[]>;
  /** For each derived fact, the case fields it was computed from (for provenance). */
  inputs: Map<string, string[]>;
}

export interface DerivedFact {
  name: string;
  description: string;
  /** A seed section heading or a kernel fact the derivation rests on. */
  basis: string;
  type: 'number' | 'boolean' | 'string';
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
  walk(caseSchema, '', out);
  return out;
})();

export const DERIVED_FACTS: readonly DerivedFact[] = [
  { name: 'probe.was_armed', type: 'boolean', description: 'the probe was live during the test: as stated, or proven by entry/return records or hits', basis: 'Establish the probe’s actual scope' },
  { name: 'kernel.possible_cpu_count', type: 'number', description: 'possible CPUs as a count (a cpulist is a population count: "0-3,8-11" is 8)', basis: 'kernel-facts.md §11' },
  { name: 'capacity.default_maxactive', type: 'number', description: 'the v6.12 default pool size, max(10, 2 x possible CPUs)', basis: 'kernel-facts.md §1' },
  { name: 'capacity.effective_maxactive', type: 'number', description: 'the pool size in force: as read back, else what the interface makes of the request', basis: 'kernel-facts.md §1, §6' },
  { name: 'capacity.uses_default', type: 'boolean', description: 'the pool size came from the kernel default, not from the caller model', basis: 'Separate in-flight calls from CPUs' },
  { name: 'capacity.request_rejected', type: 'boolean', description: 'the interface refuses the requested maxactive (tracefs: r0 or more than 4096)', basis: 'kernel-notes.md (r0:, r9999: rejected)' },
  { name: 'capacity.request_rejection', type: 'string', description: 'the reason the interface gives for refusing the request', basis: 'kernel-facts.md §6' },
  { name: 'counters.same_epoch', type: 'boolean', description: 'both snapshots were read within one registration', basis: 'Read missed and filtered cases separately' },
  { name: 'counters.went_down', type: 'boolean', description: 'a counter is lower at the end than at the start (only a new registration resets it)', basis: 'kernel-facts.md §2, §6' },
  { name: 'counters.delta_valid', type: 'boolean', description: 'the start/end difference is a real delta: one epoch, no reset between', basis: 'Read missed and filtered cases separately' },
  { name: 'counters.delta.nmissed', type: 'number', description: "rise of the return probe's miss counter within one epoch", basis: 'kernel-facts.md §2' },
  { name: 'counters.delta.kprobe_nmissed', type: 'number', description: "rise of the embedded kprobe's miss counter within one epoch", basis: 'kernel-facts.md §4' },
  { name: 'accounting.eligible', type: 'number', description: 'operations that should have reached the target', basis: 'Build an independent operation ledger' },
  { name: 'accounting.returned', type: 'number', description: 'calls with a return record', basis: 'Build an independent operation ledger' },
  { name: 'accounting.filtered', type: 'number', description: 'calls the entry handler rejected on purpose (0 when it cannot filter)', basis: 'Read missed and filtered cases separately' },
  { name: 'accounting.accepted', type: 'number', description: 'calls that got an instance: entry records, else entry-probe hits less misses and filtered calls', basis: 'DESIGN.md accounting identity' },
  { name: 'counters.delta.hits', type: 'number', description: 'return-handler runs of the return event within one epoch (kprobe_profile hits)', basis: 'kernel-facts.md §4' },
  { name: 'accounting.returns_outside_capture', type: 'number', description: 'returns the profile counted that the captured records do not hold (returned after capture stopped)', basis: 'kernel-notes.md (profile counters keep counting while the ring buffer is off)' },
  { name: 'accounting.open_at_stop', type: 'number', description: 'accepted calls with no return record when capture stopped', basis: 'Build an independent operation ledger' },
  { name: 'accounting.in_flight_at_stop', type: 'number', description: 'open calls the capture window explains (the workload was not drained first)', basis: 'Build an independent operation ledger' },
  { name: 'accounting.capacity_missed', type: 'number', description: "calls that found no free instance: the miss counter's rise within one epoch", basis: 'Read missed and filtered cases separately' },
  { name: 'accounting.no_evidence', type: 'number', description: 'eligible operations with neither an entry record nor a filter record', basis: 'Interpret the missing-return evidence' },
  { name: 'accounting.not_covered', type: 'number', description: 'calls with no probe evidence that the miss counter does not explain, plus returns lost after a completed call', basis: 'Interpret the missing-return evidence' },
  { name: 'accounting.unexplained', type: 'number', description: 'accepted calls still open after the owned workload was drained', basis: 'Interpret the missing-return evidence' },
  { name: 'accounting.sum', type: 'number', description: 'returned + filtered + in flight + capacity missed + not covered + unexplained', basis: 'DESIGN.md accounting identity' },
  { name: 'accounting.balanced', type: 'boolean', description: 'the identity holds: the sum equals eligible and accepted = returned + open', basis: 'DESIGN.md accounting identity' },
  { name: 'accounting.misses_exceed_ledger', type: 'number', description: 'miss-counter rise beyond the operations the ledger lost (other callers, or the observer itself)', basis: 'kernel-notes.md (the observer pollutes its own ledger)' },
  { name: 'accounting.entry_probe_excess', type: 'number', description: 'entry-probe hits beyond admitted and filtered calls: calls that got no instance', basis: 'Read missed and filtered cases separately' },
  { name: 'coverage.clone_count', type: 'number', description: 'compiler clones of the target found in kallsyms', basis: 'Establish the probe’s actual scope' },
  { name: 'coverage.target_is_fragment', type: 'boolean', description: 'the target is a .cold fragment (entered by a jump, not a call)', basis: 'kernel-facts.md §10' },
];

const BASE_PATHS = BASE_FACTS.map((f) => ({ name: f.name, keys: f.name.split('.') }));

/** Names, types and descriptions of every fact a rule may use. */
export interface CatalogueEntry { type: string; description: string; values?: string[]; derived: boolean; basis?: string }
export const FACT_CATALOGUE: ReadonlyMap<string, CatalogueEntry> = new Map<string, CatalogueEntry>([
  ...BASE_FACTS.map((f): [string, CatalogueEntry] => [f.name, { type: f.type, description: f.description, ...(f.values ? { values: f.values } : {}), derived: false }]),
  ...DERIVED_FACTS.map((f): [string, CatalogueEntry] => [f.name, { type: f.type, description: f.description, derived: true, basis: f.basis }]),
]);

/** Turn a validated case into facts. Pure and cheap: runs once per case, per triage answer. */
export function caseFacts(c: Case): Facts {
  const values = new Map<string, FactValue>();
  const needs = new Map<string, string[]>();

  for (const f of BASE_PATHS) {
    let v: unknown = c;
    for (const key of f.keys) {
      if (v === null || typeof v !== 'object') {
        v = undefined;
        break;
      }
      v = (v as Record<string, unknown>)[key];
    }
    if (v === undefined || v === null || v === UNKNOWN) needs.set(f.name, [f.name]);
    else values.set(f.name, v as FactValue);
  }

  // Helpers: a derived fact is set from known inputs or left unknown with the union of needs.
  const num = (name: string) => values.get(name) as number | undefined;
  const bool = (name: string) => values.get(name) as boolean | undefined;
  const str = (name: string) => values.get(name) as string | undefined;
  const need = (name: string): string[] => needs.get(name) ?? [];
  const inputsOf = new Map<string, string[]>();
  // Runs for every derived fact of every case: plain loops, no intermediate arrays.
  const union = (into: string[], from: readonly string[]) => {
    for (const x of from) if (!into.includes(x)) into.push(x);
  };
  const set = (name: string, value: FactValue | undefined, inputs: string[]) => {
    const base: string[] = [];
    for (const i of inputs) union(base, inputsOf.get(i) ?? [i]);
    inputsOf.set(name, base);
    if (value === undefined) {
      const n: string[] = [];
      for (const i of inputs) if (!values.has(i)) union(n, need(i));
      needs.set(name, n.length ? n : inputs);
    } else {
      values.set(name, value);
    }
  };

  // Possible CPUs.
  const pc = values.get('kernel.possible_cpus');
  set('kernel.possible_cpu_count', typeof pc === 'number' ? pc : typeof pc === 'string' ? countCpuList(pc) : undefined, ['kernel.possible_cpus']);
  const cpus = num('kernel.possible_cpu_count');
  set('capacity.default_maxactive', cpus === undefined ? undefined : defaultMaxactive(cpus), ['kernel.possible_cpu_count']);

  // Effective pool size, what the interface makes of the request.
  const iface = str('probe.interface') as ProbeInterface | undefined;
  const requested = num('probe.maxactive.requested');
  const outcome = iface === undefined ? undefined : effectiveMaxactive(iface, requested, cpus);
  const reqInputs = ['probe.interface', 'probe.maxactive.requested'];
  const registered = str('probe.registration.result') === 'ok';
  if (registered || (iface !== undefined && iface !== 'tracefs')) {
    // A registration that succeeded was not refused; only tracefs refuses a number outright.
    set('capacity.request_rejected', false, ['probe.registration.result', 'probe.interface']);
    set('capacity.request_rejection', undefined, reqInputs);
  } else if (iface !== undefined && requested !== undefined) {
    set('capacity.request_rejected', outcome?.kind === 'rejected', reqInputs);
    if (outcome?.kind === 'rejected') set('capacity.request_rejection', outcome.reason, reqInputs);
    else set('capacity.request_rejection', undefined, reqInputs);
  } else {
    set('capacity.request_rejected', undefined, reqInputs);
    set('capacity.request_rejection', undefined, reqInputs);
  }
  const readBack = num('probe.maxactive.effective');
  if (readBack !== undefined) set('capacity.effective_maxactive', readBack, ['probe.maxactive.effective']);
  else if (outcome?.kind === 'value' && requested !== undefined) set('capacity.effective_maxactive', outcome.value, [...reqInputs, 'kernel.possible_cpus']);
  else set('capacity.effective_maxactive', undefined, ['probe.maxactive.effective']);
  const basis = str('concurrency.capacity_basis');
  const usesDefault =
    basis === 'default' ? true
    : basis !== undefined ? false
    : requested !== undefined && iface !== undefined ? requested <= 0 && iface !== 'tracefs'
    : undefined;
  set('capacity.uses_default', usesDefault, ['concurrency.capacity_basis']);

  // Counter snapshots: a delta is only a delta inside one registration epoch.
  const e0 = str('counters.start.epoch');
  const e1 = str('counters.end.epoch');
  set('counters.same_epoch', e0 !== undefined && e1 !== undefined ? e0 === e1 : undefined, ['counters.start.epoch', 'counters.end.epoch']);
  const downs: Array<boolean | undefined> = ['nmissed', 'kprobe_nmissed', 'hits'].map((k) => {
    const a = num(`counters.start.${k}`);
    const b = num(`counters.end.${k}`);
    return a === undefined || b === undefined ? undefined : b < a;
  });
  // Any counter going down proves a reset; the miss counter staying level or rising rules one out.
  const wentDown = downs.some((d) => d === true) ? true : downs[0] === false ? false : undefined;
  set('counters.went_down', wentDown, ['counters.start.nmissed', 'counters.end.nmissed']);
  const same = bool('counters.same_epoch');
  const valid = same === false || wentDown === true ? false : same === true && wentDown === false ? true : undefined;
  set('counters.delta_valid', valid, ['counters.start.epoch', 'counters.end.epoch', 'counters.start.nmissed', 'counters.end.nmissed']);
  for (const k of ['nmissed', 'kprobe_nmissed']) {
    const a = num(`counters.start.${k}`);
    const b = num(`counters.end.${k}`);
    const inputs = [`counters.start.${k}`, `counters.end.${k}`];
    if (valid === false) {
      // Not a delta: the decision needs a start snapshot read in the end's registration.
      values.delete(`counters.delta.${k}`);
      needs.set(`counters.delta.${k}`, [`counters.start.${k}`]);
    } else {
      set(`counters.delta.${k}`, valid === true && a !== undefined && b !== undefined ? b - a : undefined, valid === undefined ? [...inputs, 'counters.start.epoch', 'counters.end.epoch'] : inputs);
    }
  }

  // kprobe_profile (and the BPF link) report one miss column, kp.nmissed + rp.nmissed: a level
  // sum proves both parts level, a rise cannot be split (kernel-facts.md §4).
  const src = str('counters.source');
  if ((src === 'kprobe_profile' || src === 'bpf-link') && !values.has('counters.delta.kprobe_nmissed') && values.get('counters.delta.nmissed') === 0) {
    set('counters.delta.kprobe_nmissed', 0, ['counters.start.nmissed', 'counters.end.nmissed', 'counters.source']);
  }
  // So while the source is unknown it is one more way to decide the kprobe part (triage asks it).
  if (src === undefined && !values.has('counters.delta.kprobe_nmissed')) {
    needs.set('counters.delta.kprobe_nmissed', [...new Set([...(needs.get('counters.delta.kprobe_nmissed') ?? []), 'counters.source'])]);
  }

  // Records prove a probe was armed; only an explicit answer can say it was not.
  const armed = bool('probe.armed');
  const recorded = [num('ledger.entries'), num('ledger.returns'), num('counters.end.hits')].some((n) => n !== undefined && n > 0);
  set('probe.was_armed', armed ?? (recorded ? true : undefined), ['probe.armed', 'ledger.entries', 'ledger.returns', 'counters.end.hits']);

  // The accounting identity (DESIGN.md).
  const eligible = num('ledger.eligible');
  const returned = num('ledger.returns');
  set('accounting.eligible', eligible, ['ledger.eligible']);
  set('accounting.returned', returned, ['ledger.returns']);
  const canFilter = bool('probe.entry_handler.can_filter');
  const hasHandler = bool('probe.entry_handler.present');
  const filtered = num('ledger.filtered') ?? (canFilter === false || hasHandler === false ? 0 : undefined);
  set('accounting.filtered', filtered, ['ledger.filtered', 'probe.entry_handler.present', 'probe.entry_handler.can_filter']);
  const entries = num('ledger.entries');
  // Admitted calls: the entry records, or — where admitted calls leave no record of their own, as
  // with a tracefs return event — every entry-probe hit less the misses and the filtered calls.
  const entryEvents = num('ledger.entry_events');
  const missedEarly = num('counters.delta.nmissed');
  const accepted = entries ?? (entryEvents !== undefined && missedEarly !== undefined && filtered !== undefined ? Math.max(0, entryEvents - missedEarly - filtered) : undefined);
  set('accounting.accepted', accepted, entries !== undefined ? ['ledger.entries'] : ['ledger.entries', 'ledger.entry_events', 'counters.delta.nmissed', 'ledger.filtered']);
  const open = num('ledger.in_flight_at_stop') ?? (accepted !== undefined && returned !== undefined ? Math.max(0, accepted - returned) : undefined);
  set('accounting.open_at_stop', open, ['ledger.in_flight_at_stop', 'ledger.entries', 'ledger.returns']);
  // Profile counters keep counting while the ring buffer is off (kernel-notes.md): return-event
  // hits beyond the return records are calls that returned outside the captured window.
  const h0 = num('counters.start.hits');
  const h1 = num('counters.end.hits');
  const hitsDelta = valid === true && h0 !== undefined && h1 !== undefined ? h1 - h0 : undefined;
  set('counters.delta.hits', hitsDelta, ['counters.start.hits', 'counters.end.hits']);
  set('accounting.returns_outside_capture', hitsDelta !== undefined && returned !== undefined ? Math.max(0, hitsDelta - returned) : undefined, ['counters.start.hits', 'counters.end.hits', 'ledger.returns']);
  const lost = num('ledger.completed_without_return') ?? 0;
  const quiesced = bool('ledger.workload_quiesced');
  const openInputs = ['accounting.open_at_stop', 'ledger.workload_quiesced'];
  // Nothing open needs no window; otherwise only a drained workload tells a late return from none.
  const windowed = (drained: boolean) => (open === undefined ? undefined : open - Math.min(lost, open) === 0 ? 0 : quiesced === undefined ? undefined : quiesced === drained ? open - Math.min(lost, open) : 0);
  set('accounting.in_flight_at_stop', windowed(false), openInputs);
  set('accounting.unexplained', windowed(true), openInputs);
  const missed = num('counters.delta.nmissed');
  set('accounting.capacity_missed', missed, ['counters.delta.nmissed']);
  const noEvidence = num('ledger.no_probe_evidence') ??
    (eligible !== undefined && returned !== undefined && filtered !== undefined && open !== undefined ? eligible - returned - filtered - open : undefined);
  set('accounting.no_evidence', noEvidence === undefined ? undefined : Math.max(0, noEvidence), ['ledger.no_probe_evidence', 'ledger.eligible', 'ledger.returns', 'accounting.filtered', 'accounting.open_at_stop']);
  set('accounting.not_covered', noEvidence === undefined || missed === undefined ? undefined : Math.max(0, noEvidence - missed) + Math.min(lost, open ?? 0),
    ['accounting.no_evidence', 'counters.delta.nmissed']);
  set('accounting.misses_exceed_ledger', noEvidence === undefined || missed === undefined ? undefined : Math.max(0, missed - Math.max(0, noEvidence)),
    ['accounting.no_evidence', 'counters.delta.nmissed']);
  const parts = ['accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'accounting.capacity_missed', 'accounting.not_covered', 'accounting.unexplained'];
  const partValues = parts.map(num);
  const sum = partValues.every((v) => v !== undefined) ? (partValues as number[]).reduce((a, b) => a + b, 0) : undefined;
  set('accounting.sum', sum, parts);
  const acceptedOk = entries === undefined || returned === undefined || open === undefined ? true : entries === returned + open;
  set('accounting.balanced', sum === undefined || eligible === undefined ? undefined : sum === eligible && acceptedOk, ['accounting.sum', 'accounting.eligible']);
  set('accounting.entry_probe_excess', entryEvents !== undefined && entries !== undefined && filtered !== undefined ? Math.max(0, entryEvents - entries - filtered) : undefined,
    ['ledger.entry_events', 'ledger.entries', 'ledger.filtered']);

  // Coverage of the symbol family.
  const clones = values.get('coverage.clones');
  set('coverage.clone_count', Array.isArray(clones) ? clones.length : undefined, ['coverage.clones']);
  const target = str('probe.target');
  set('coverage.target_is_fragment', target === undefined ? undefined : /\.cold(\.\d+)?$/.test(target), ['probe.target']);

  return { values, needs, inputs: inputsOf };
}
