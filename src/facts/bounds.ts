import { isEntryProbe } from './capacity.js';
import { bool, num, type Derivation, type Inputs } from './derive.js';

/**
 * The sums and differences the consistency constraints (rules/constraints/) compare: a
 * condition compares two facts, never an expression, so each side that is a sum is declared here.
 */
export const BOUNDS: readonly Derivation[] = [
  {
    name: 'bounds.holding_instances', type: 'number', basis: 'kernel-facts.md §2 (an accepted call holds its instance until it returns)',
    description: 'accepted calls still holding an instance at the stop: open at the stop less the returns the ledger saw lost',
    inputs: ['accounting.open_at_stop', 'accounting.lost_returns'],
    derive: (i) => {
      const o = num(i, 'accounting.open_at_stop');
      const l = num(i, 'accounting.lost_returns');
      return o === undefined || l === undefined ? undefined : o - l;
    },
  },
  {
    name: 'bounds.paired_returns', type: 'number', basis: 'Build an independent operation ledger (a return record closes an accepted call whose entry was recorded)',
    description: 'return records that close a recorded entry: the returns less those said to lack their entry',
    inputs: ['ledger.returns', 'ledger.returns_without_entry'],
    derive: (i) => {
      const r = num(i, 'ledger.returns');
      const w = num(i, 'ledger.returns_without_entry');
      return r === undefined || w === undefined ? undefined : r - w;
    },
  },
  {
    name: 'bounds.entry_events_unaccounted', type: 'number', basis: 'docs/case-format.md#the-accounting-identity (entry events = accepted + capacity missed + filtered)',
    description: 'entry-probe hits that are neither an entry record, nor a call the entry handler rejected, nor a counted miss',
    inputs: ['ledger.entry_events', 'ledger.entries', 'accounting.filtered', 'counters.delta.missed_total'],
    derive: (i) => {
      const ev = num(i, 'ledger.entry_events');
      const e = num(i, 'ledger.entries');
      const f = num(i, 'accounting.filtered');
      const m = num(i, 'counters.delta.missed_total');
      return ev === undefined || e === undefined || f === undefined || m === undefined ? undefined : ev - e - f - m;
    },
  },
  {
    name: 'bounds.entries_and_filtered', type: 'number', basis: 'docs/case-format.md#the-accounting-identity (entry events = accepted + capacity missed + filtered)',
    description: 'entry records and calls the entry handler rejected: each one was an entry-probe hit first',
    inputs: ['ledger.entries', 'accounting.filtered'],
    derive: (i) => {
      const e = num(i, 'ledger.entries');
      const f = num(i, 'accounting.filtered');
      return e === undefined || f === undefined ? undefined : e + f;
    },
  },
  {
    name: 'bounds.entry_hits_needed', type: 'number', floor: true, basis: 'Read missed and filtered cases separately; kernel-facts.md §2 (a call that finds the pool empty is missed after the kprobe fired)',
    description: 'entry-probe hits the return probe\'s own counts call for: entry records, rejections, and its pool misses (each passed the entry probe first): the counted rise of rp->nmissed, or at least the calls beyond the pool at the demand peak',
    inputs: ['bounds.entries_and_filtered', 'capacity.pool_excess', 'counters.delta.nmissed'],
    derive: (i) => {
      const a = num(i, 'bounds.entries_and_filtered');
      const x = num(i, 'capacity.pool_excess');
      // A pool miss happens in the return probe's pre-handler, after the kprobe at the function's
      // entry fired (kernel-facts.md §2): every one counted is a call a separate entry probe saw.
      const counted = num(i, 'counters.delta.nmissed');
      const missed = x === undefined ? counted : counted === undefined ? x : Math.max(x, counted);
      return a === undefined || missed === undefined ? undefined : a + missed;
    },
  },
  {
    name: 'bounds.eligible_beyond_pool', type: 'number', basis: 'Propose a controlled overlap fixture; Separate in-flight calls from CPUs',
    description: 'eligible operations less the calls the entry handler rejected (they give their instance straight back) less the pool: above 0, a gate that holds every eligible call at once leaves that many without an instance',
    inputs: ['ledger.eligible', 'accounting.filtered', 'capacity.effective_maxactive'],
    derive: (i) => {
      const e = num(i, 'ledger.eligible');
      const f = num(i, 'accounting.filtered');
      const pool = num(i, 'capacity.effective_maxactive');
      return e === undefined || f === undefined || pool === undefined ? undefined : e - f - pool;
    },
  },
  {
    name: 'bounds.own_calls_beyond_eligible', type: 'number', basis: 'Build an independent operation ledger',
    description: "the test's own accepted and filtered calls (entry records and rejections less foreign records) beyond the eligible operations",
    inputs: ['ledger.entries', 'accounting.filtered', 'ledger.foreign_records', 'ledger.eligible'],
    derive: (i) => {
      const e = num(i, 'ledger.entries');
      const f = num(i, 'accounting.filtered');
      const x = num(i, 'ledger.foreign_records');
      const el = num(i, 'ledger.eligible');
      return e === undefined || f === undefined || x === undefined || el === undefined ? undefined : e + f - x - el;
    },
  },
  {
    name: 'bounds.no_evidence_beyond_unentered', type: 'number', basis: 'Build an independent operation ledger',
    description: "operations said to have left no probe record beyond the eligible operations that cannot have one of the test's own entry records or rejections: each operation holds at most recursion_depth of them (one without nesting), so at least that many records over the depth belong to distinct operations",
    inputs: ['ledger.no_probe_evidence', 'ledger.eligible', 'ledger.entries', 'accounting.filtered', 'ledger.foreign_records', 'concurrency.recursion_depth'],
    derive: (i) => {
      const n = num(i, 'ledger.no_probe_evidence');
      const el = num(i, 'ledger.eligible');
      const e = num(i, 'ledger.entries');
      const f = num(i, 'accounting.filtered');
      const x = num(i, 'ledger.foreign_records');
      const depth = num(i, 'concurrency.recursion_depth');
      if (n === undefined || el === undefined || e === undefined || f === undefined || x === undefined || depth === undefined) return undefined;
      const withRecord = Math.ceil(Math.max(0, e + f - x) / Math.max(1, depth));
      return n - (el - withRecord);
    },
  },
  {
    name: 'bounds.records_cover_eligible', type: 'boolean', basis: 'Build an independent operation ledger',
    description: "the records received reach every eligible operation by their counts alone: without nesting, entries and returns (an entry probe: its records) less every foreign record each reach eligible (unknown while a count it needs is unknown and the others do not already rule it out)",
    inputs: ['ledger.eligible', 'ledger.entries', 'ledger.returns', 'ledger.foreign_records', 'concurrency.recursion_depth', 'probe.kind'],
    derive: (i) => byCounts(i, 'entries-and-returns'),
  },
  {
    name: 'bounds.eligible_record_lost', type: 'boolean', basis: 'Build an independent operation ledger',
    description: "a record the probe lost was an eligible call's: its records are the workload's only (ledger.records_only_eligible) and some were lost; false when the case does not say its records are the workload's only, which bounds nothing (their losses may be anyone's, as without the field)",
    inputs: ['ledger.records_only_eligible', 'ledger.records_lost', 'ledger.records_lost_known'],
    derive: (i) => {
      // Never unknown while the field is unstated, so no completion and no missing list turns on
      // the losses through it (a probe whose records may be anyone's is the wider world already).
      if (bool(i, 'ledger.records_only_eligible') !== true) return false;
      // Some loss known is enough; none needs every channel known.
      const floor = num(i, 'ledger.records_lost_known');
      if (floor !== undefined && floor > 0) return true;
      const lost = num(i, 'ledger.records_lost');
      return lost === undefined ? undefined : lost > 0;
    },
  },
  {
    name: 'bounds.every_eligible_recorded', type: 'boolean', basis: 'Build an independent operation ledger (a capacity miss only hides a call that has no record)',
    description: "every eligible operation has its entry and its return record (an entry probe: its one record): the counts reach eligible (bounds.records_cover_eligible), and no record lost was an eligible call's",
    inputs: ['bounds.records_cover_eligible', 'capacity.overlap_experiment', 'capacity.pool_drained', 'bounds.eligible_record_lost'],
    derive: (i) => {
      // A probe that writes records of eligible calls only, and lost some: each lost record was an
      // eligible call's, which lacks it (whatever the counts say; constraints/lost-records-were-eligible
      // names counts that already cover every eligible call).
      if (bool(i, 'bounds.eligible_record_lost') === true) return false;
      return withExperiment(i, bool(i, 'bounds.records_cover_eligible'));
    },
  },
  {
    name: 'bounds.every_eligible_entered', type: 'boolean', basis: 'Read missed and filtered cases separately (a call that finds no instance, or re-enters a running kprobe, never reaches the entry handler)',
    description: "every eligible operation got an instance and its entry record: without nesting, entries less every foreign record reach eligible, so no miss counted (pool or kprobe) was one of them (unknown while a count it needs is unknown and the others do not already rule it out)",
    inputs: ['ledger.eligible', 'ledger.entries', 'ledger.foreign_records', 'concurrency.recursion_depth', 'capacity.overlap_experiment', 'capacity.pool_drained', 'fixture.gated', 'fixture.overlap_verified', 'bounds.eligible_beyond_pool', 'ledger.entry_events', 'capacity.pool_excess', 'accounting.filtered'],
    derive: (i) => {
      const counted = withExperiment(i, byCounts(i, 'entries'));
      return counted === undefined && somePoolMissEligible(i) ? false : counted;
    },
  },
];

/**
 * The pool evidence that some eligible call found no instance, whatever the entry records say (a
 * count that says otherwise is a contradiction: constraints/gated-calls-entered-beyond-pool,
 * constraints/entry-events-cover-pool-misses): a verified gate held more eligible calls at once
 * than the pool holds; or the entry probe's hits, less the rejections and the calls beyond the pool
 * at the demand peak, leave fewer accepted calls than eligible operations.
 */
function somePoolMissEligible(i: Inputs): boolean {
  const beyond = num(i, 'bounds.eligible_beyond_pool');
  if (bool(i, 'fixture.gated') === true && bool(i, 'fixture.overlap_verified') === true && beyond !== undefined && beyond > 0) return true;
  const ev = num(i, 'ledger.entry_events');
  const f = num(i, 'accounting.filtered');
  const excess = num(i, 'capacity.pool_excess');
  const el = num(i, 'ledger.eligible');
  // No foreign record is the most the accepted calls can keep for the test.
  const x = num(i, 'ledger.foreign_records') ?? 0;
  return ev !== undefined && f !== undefined && excess !== undefined && el !== undefined && ev - f - excess - x < el;
}

/**
 * An overlap experiment says this run lost returns to its pool (Propose a controlled overlap
 * fixture): a call that found the pool empty has neither record, so some eligible call lacks
 * them, unless the counts say every one has them, which constraints/overlap-experiment-lost-returns
 * names as a contradiction. The same for a probe that went silent for good until it was
 * registered again (capacity.pool_drained): its later calls have no record
 * (constraints/pool-drained-lost-calls names counts that say otherwise).
 */
function withExperiment(i: Inputs, counted: boolean | undefined): boolean | undefined {
  return counted === undefined && (bool(i, 'capacity.overlap_experiment') === true || bool(i, 'capacity.pool_drained') === true) ? false : counted;
}

/**
 * bounds.every_eligible_recorded (entry and return records) or bounds.every_eligible_entered
 * (entry records alone) from the ledger's counts. A missed call, whichever counter took it, has no
 * entry record (kernel-facts.md §2, §4): entries that cover every eligible operation leave no miss
 * to any of them, whatever became of their returns.
 */
function byCounts(i: Inputs, sides: 'entries' | 'entries-and-returns'): boolean | undefined {
  const el = num(i, 'ledger.eligible');
  const en = num(i, 'ledger.entries');
  // An entry probe's record is the whole observation of a call: there is no return record to wait for.
  const r = sides === 'entries' || isEntryProbe(i) ? en : num(i, 'ledger.returns');
  const x = num(i, 'ledger.foreign_records');
  const depth = num(i, 'concurrency.recursion_depth');
  // Nested calls' records inflate the counts, and with no eligible operation there is nothing to establish.
  if ((depth !== undefined && depth > 1) || el === 0) return false;
  // Short of eligible on either side, even with every record the test's own (no foreign
  // record at all is the most a count can keep): false whatever the unknown counts are.
  const short = (n: number | undefined) => el !== undefined && n !== undefined && n - (x ?? 0) < el;
  if (short(en) || short(r)) return false;
  // Three-valued (issue 20): while a count is unknown the records may or may not cover every
  // operation, so a miss-counter rise is neither the test's own nor someone else's yet.
  if (el === undefined || en === undefined || r === undefined || x === undefined || depth === undefined) return undefined;
  return true;
}
