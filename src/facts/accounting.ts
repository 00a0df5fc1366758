import { isEntryProbe } from './capacity.js';
import { bool, num, str, type Derivation, type Inputs } from './derive.js';

const sumOf = (xs: Array<number | undefined>) => (xs.every((x) => x !== undefined) ? (xs as number[]).reduce((a, b) => a + b, 0) : undefined);
const open = (i: Inputs) => num(i, 'accounting.open_at_stop');
const lost = (i: Inputs) => num(i, 'accounting.lost_returns');
// Nothing open needs no window; otherwise only a drained workload tells a late return from none.
const windowed = (i: Inputs, drained: boolean) => {
  const o = open(i);
  if (o === 0) return 0;
  const l = lost(i);
  if (o === undefined || l === undefined) return undefined;
  if (o - l === 0) return 0;
  const q = bool(i, 'ledger.workload_quiesced');
  if (q === undefined) return undefined;
  if (!q) return drained ? 0 : o - l;
  // After the drain, a call the return event's hit column saw return after the capture stopped was
  // in flight at the stop, not open (issue 20, class 6); only the rest is unexplained.
  const late = num(i, 'accounting.returns_outside_capture');
  if (late === undefined) return undefined;
  const returnedLate = Math.min(late, o - l);
  return drained ? o - l - returnedLate : returnedLate;
};

/**
 * The accounting identity of DESIGN.md, built from accepted calls (entry records, or entry-probe
 * hits less the calls that got no instance), never from a stated summary alone:
 *   eligible = returned + filtered + in flight + capacity missed + not covered + unexplained
 *   accepted = returned + open at stop
 */
export const ACCOUNTING: readonly Derivation[] = [
  { name: 'accounting.eligible', type: 'number', basis: 'Build an independent operation ledger', description: 'operations that should have reached the target', inputs: ['ledger.eligible'], derive: (i) => num(i, 'ledger.eligible') },
  {
    name: 'accounting.returned', type: 'number', basis: 'Build an independent operation ledger; kernel-facts.md §2 (only a kretprobe follows a call to its return)',
    description: "calls with a return record; for an entry probe, which follows no call to its return, every call it recorded (its entry record is the whole observation)",
    inputs: ['ledger.returns', 'ledger.entries', 'probe.kind'],
    derive: (i) => num(i, isEntryProbe(i) ? 'ledger.entries' : 'ledger.returns'),
  },
  {
    name: 'accounting.filtered', type: 'number', basis: 'Read missed and filtered cases separately',
    description: 'calls the entry handler rejected on purpose (0 when it cannot filter, or the interface gives the user no way to, or the probe is an entry probe: no return record is at stake for it to give up)',
    inputs: ['ledger.filtered', 'probe.entry_handler.present', 'probe.entry_handler.can_filter', 'probe.interface_may_filter', 'probe.kind'],
    // A handler that cannot reject (or no handler) filtered nothing, whatever a summary says; a
    // handler said to reject on an interface that cannot is constraints/tracefs-handler-cannot-filter's.
    // A kretprobe's entry handler rejects an instance, and with it the return record (kernel-facts.md
    // §3); an entry probe takes no instance and promises no return, so nothing of it is filtered.
    derive: (i) =>
      isEntryProbe(i) || bool(i, 'probe.entry_handler.can_filter') === false || bool(i, 'probe.entry_handler.present') === false || (bool(i, 'probe.interface_may_filter') === false && bool(i, 'probe.entry_handler.can_filter') !== true)
        ? 0
        : num(i, 'ledger.filtered'),
  },
  {
    name: 'accounting.accepted', type: 'number', basis: 'docs/case-format.md#the-accounting-identity',
    description: 'calls that got an instance: entry records, else entry-probe hits less the calls that got none and the filtered calls, where every miss counted is a pool miss (none of another part)',
    inputs: ['ledger.entries', 'ledger.entry_events', 'counters.delta.missed_total', 'accounting.filtered', 'counters.delta.kprobe_nmissed', 'probe.kind'],
    derive: (i) => {
      const entries = num(i, 'ledger.entries');
      if (entries !== undefined) return entries;
      // From the entry probe only where the entry records a completion may fill in agree with it:
      // they are at most the hits less the rejections and the pool misses
      // (constraints/entry-events-cover-pool-misses) and, with no record lost, at least the hits
      // less the rejections and every counted miss (constraints/entry-events-accounted). The two
      // meet when no counted miss is another part's (kp.nmissed, a link's skips); with one, the
      // records may be anything between, and a figure worked out before would be taken back
      // (the search cut a branch holding a world on it: issue 20, a write-up's case).
      const ev = num(i, 'ledger.entry_events');
      const m = num(i, 'counters.delta.missed_total');
      const f = num(i, 'accounting.filtered');
      if (ev === undefined || m === undefined || f === undefined) return undefined;
      // (An entry probe's misses are its own kprobe's: the calls it did not see, none of them a hit.)
      if (!isEntryProbe(i) && num(i, 'counters.delta.kprobe_nmissed') !== 0) return undefined;
      return Math.max(0, ev - m - f);
    },
  },
  {
    name: 'accounting.open_contradiction', type: 'boolean', basis: 'Build an independent operation ledger',
    description: 'the stated in-flight figure differs from accepted calls less returns (for an entry probe, from none: no call of it stays open)',
    inputs: ['ledger.in_flight_at_stop', 'accounting.accepted', 'ledger.returns', 'probe.kind'],
    derive: (i) => {
      const stated = num(i, 'ledger.in_flight_at_stop');
      if (isEntryProbe(i)) return stated === undefined ? undefined : stated !== 0;
      const a = num(i, 'accounting.accepted');
      const r = num(i, 'ledger.returns');
      return stated === undefined || a === undefined || r === undefined ? undefined : stated !== a - r;
    },
  },
  {
    name: 'accounting.open_at_stop', type: 'number', basis: 'Build an independent operation ledger',
    description: 'accepted calls with no return record when capture stopped: accepted less returns (a stated figure only where the records do not say; a contradiction is flagged, see accounting.open_contradiction); none for an entry probe, whose calls are observed whole at entry',
    inputs: ['accounting.accepted', 'ledger.returns', 'ledger.in_flight_at_stop', 'probe.kind'],
    derive: (i) => {
      // An entry probe expects no return: no call of it stays open (kernel-facts.md §2, no instance).
      if (isEntryProbe(i)) return 0;
      const a = num(i, 'accounting.accepted');
      const r = num(i, 'ledger.returns');
      if (a !== undefined && r !== undefined) return a - r < 0 ? undefined : a - r;
      return num(i, 'ledger.in_flight_at_stop');
    },
  },
  {
    name: 'accounting.lost_returns', type: 'number', basis: 'Build an independent operation ledger',
    description: 'open calls the ledger saw complete inside the window: a lost return record, not an open call (0 when nothing is open, or no return record was lost and no exit bypasses the return)',
    inputs: ['accounting.open_at_stop', 'ledger.completed_without_return', 'ledger.return_records_complete', 'coverage.unusual_return'],
    derive: (i) => {
      const o = open(i);
      if (o === 0) return 0;
      const c = num(i, 'ledger.completed_without_return');
      if (o !== undefined && c !== undefined) return Math.min(c, o);
      return i['ledger.return_records_complete'] === true && i['coverage.unusual_return'] === false ? 0 : undefined;
    },
  },
  {
    name: 'accounting.in_flight_at_stop', type: 'number', basis: 'Build an independent operation ledger',
    description: 'open calls the capture window explains: the workload was not drained first, or the return hit column saw them return after the stop',
    inputs: ['accounting.open_at_stop', 'accounting.lost_returns', 'ledger.workload_quiesced', 'accounting.returns_outside_capture'],
    derive: (i) => windowed(i, false),
  },
  {
    name: 'accounting.unexplained', type: 'number', basis: 'Interpret the missing-return evidence',
    description: 'accepted calls still open after the owned workload was drained, less those the return hit column saw return after the capture stopped',
    inputs: ['accounting.open_at_stop', 'accounting.lost_returns', 'ledger.workload_quiesced', 'accounting.returns_outside_capture'],
    derive: (i) => windowed(i, true),
  },
  {
    name: 'accounting.capacity_missed', type: 'number', basis: 'Read missed and filtered cases separately',
    description: "calls that found no free instance: the miss counter's rise within one epoch",
    inputs: ['counters.delta.nmissed'],
    derive: (i) => num(i, 'counters.delta.nmissed'),
  },
  {
    name: 'accounting.without_instance', type: 'number', basis: 'Read missed and filtered cases separately',
    description: "the test's calls that got no instance: eligible less accepted and filtered",
    inputs: ['ledger.eligible', 'accounting.accepted', 'accounting.filtered'],
    derive: (i) => {
      const e = num(i, 'ledger.eligible');
      const a = num(i, 'accounting.accepted');
      const f = num(i, 'accounting.filtered');
      return e === undefined || a === undefined || f === undefined ? undefined : Math.max(0, e - a - f);
    },
  },
  {
    name: 'accounting.no_evidence', type: 'number', basis: 'Interpret the missing-return evidence',
    description: 'eligible operations with no probe record at all (no entry record, no filter record, no entry-probe hit)',
    inputs: ['ledger.no_probe_evidence', 'ledger.eligible', 'ledger.entry_events', 'accounting.without_instance'],
    derive: (i) => {
      const stated = num(i, 'ledger.no_probe_evidence');
      if (stated !== undefined) return stated;
      const e = num(i, 'ledger.eligible');
      const ev = num(i, 'ledger.entry_events');
      if (e !== undefined && ev !== undefined) return Math.max(0, e - ev);
      return num(i, 'accounting.without_instance');
    },
  },
  {
    name: 'accounting.not_covered', type: 'number', basis: 'Interpret the missing-return evidence',
    description: 'calls without an instance that the miss counter does not explain, plus returns lost after a completed call',
    inputs: ['accounting.without_instance', 'counters.delta.missed_total', 'accounting.lost_returns'],
    derive: (i) => {
      const w = num(i, 'accounting.without_instance');
      const m = num(i, 'counters.delta.missed_total');
      const l = lost(i);
      // Every call got an instance: no miss figure can leave one uncovered, whatever it is.
      if (w === 0 && l !== undefined) return l;
      return w === undefined || m === undefined || l === undefined ? undefined : Math.max(0, w - m) + l;
    },
  },
  {
    name: 'accounting.misses_exceed_ledger', type: 'number', basis: 'kernel-notes.md (the observer pollutes its own ledger)',
    description: "miss-counter rise beyond the test's calls that got no instance (other callers, or the observer itself)",
    inputs: ['accounting.without_instance', 'counters.delta.missed_total'],
    derive: (i) => {
      const w = num(i, 'accounting.without_instance');
      const m = num(i, 'counters.delta.missed_total');
      return w === undefined || m === undefined ? undefined : Math.max(0, m - w);
    },
  },
  {
    name: 'accounting.sum', type: 'number', basis: 'docs/case-format.md#the-accounting-identity',
    description: 'returned + filtered + in flight + capacity missed + not covered + unexplained',
    inputs: ['accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'accounting.capacity_missed', 'accounting.not_covered', 'accounting.unexplained'],
    derive: (i) => sumOf(['accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'accounting.capacity_missed', 'accounting.not_covered', 'accounting.unexplained'].map((k) => num(i, k))),
  },
  {
    name: 'accounting.balanced', type: 'boolean', basis: 'docs/case-format.md#the-accounting-identity',
    description: 'the identity holds: returned + filtered + in flight + every counted miss (pool or not) + not covered + unexplained equals eligible, and the stated in-flight figure agrees with accepted less returns',
    inputs: ['accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'counters.delta.missed_total', 'accounting.not_covered', 'accounting.unexplained', 'accounting.eligible', 'accounting.open_contradiction'],
    derive: (i) => {
      if (i['accounting.open_contradiction'] === true) return false;
      // Every counted miss, whichever part of the figure it is: the balance needs no split.
      const s = sumOf(['accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'counters.delta.missed_total', 'accounting.not_covered', 'accounting.unexplained'].map((k) => num(i, k)));
      const e = num(i, 'accounting.eligible');
      return s === undefined || e === undefined ? undefined : s === e;
    },
  },
  {
    name: 'accounting.entry_probe_excess', type: 'number', basis: 'Read missed and filtered cases separately',
    description: 'entry-probe hits beyond admitted and filtered calls: calls that got no instance (0 without an entry probe when the miss counters prove none went without)',
    inputs: ['ledger.entry_events', 'ledger.entries', 'accounting.filtered', 'counters.delta.missed_total'],
    derive: (i) => {
      const ev = num(i, 'ledger.entry_events');
      const en = num(i, 'ledger.entries');
      const f = num(i, 'accounting.filtered');
      if (ev !== undefined && en !== undefined && f !== undefined) return Math.max(0, ev - en - f);
      // No call went without an instance, so an entry probe would have seen no excess either.
      return num(i, 'counters.delta.missed_total') === 0 && (ev === undefined || en === undefined) ? 0 : undefined;
    },
  },
  {
    name: 'accounting.returns_outside_capture', type: 'number', basis: 'kernel-notes.md (profile counters keep counting while the ring buffer is off)',
    description: 'returns the profile counted that the captured records do not hold (returned after capture stopped); 0 for an interface with no hit column (a module, bpftrace, a BPF link, fprobe: their own handlers write each record), and when no accepted call was open at the stop',
    inputs: ['counters.delta.hits', 'ledger.returns', 'probe.interface', 'accounting.open_at_stop'],
    derive: (i) => {
      // Returns after the stop are accepted calls open at the stop; a module has no hit column.
      // Only a kprobe_profile line (tracefs, perf probe) has a hit column; other interfaces' own handlers write each record.
      const iface = str(i, 'probe.interface');
      if (iface === 'module' || iface === 'bpftrace' || iface === 'bpf-link' || iface === 'fprobe' || num(i, 'accounting.open_at_stop') === 0) return 0;
      const h = num(i, 'counters.delta.hits');
      const r = num(i, 'ledger.returns');
      return h === undefined || r === undefined ? undefined : Math.max(0, h - r);
    },
  },
];
