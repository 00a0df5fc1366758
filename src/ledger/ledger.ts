import { LogHistogram, type DurationSummary } from './histogram.js';
import type { CounterRecord, OpRecord, ProbeRecord } from './records.js';
import { KeyHeap } from './heap.js';
import { CallStack, CallTable, NO_CALL } from './calls.js';
import { IdTable } from './idtable.js';
import { INTERVAL, NONE, POINT, RetroSweep } from './sweep.js';
import type { ContradictionId } from './contradictions.js';

/**
 * The operation ledger: pairs probe records into calls, binds calls to the independent
 * operations, classifies every operation and fills in DESIGN.md's accounting identity.
 * Seed: "Build an independent operation ledger", "Separate in-flight calls from CPUs",
 * "Report coverage alongside latency".
 *
 * Streaming: records arrive in time order and operations are pulled in submit order, so an
 * operation is held only while it can still receive records (submit ≤ t ≤ done). Memory grows
 * with operations and calls in flight, not with the length of either file.
 */

/**
 * What an entry record means. `instance`: an entry handler ran, so the return probe accepted
 * the call (probe.jsonl). `event`: a separate entry kprobe fired, which it does for every call,
 * also those the return probe missed (trace text, perf script) — kernel-notes.md fixture.
 */
export type EntrySemantics = 'instance' | 'event';

export type PairingIdentity = 'instance-data' | 'task-and-depth' | 'none';

/**
 * More calls open at once than any bounded test can hold (a return probe's pool is sized in the
 * thousands; tracefs allows 4096): past this the input is not a trace whose entries are closed by
 * returns, and holding it would let memory grow with the file instead of with calls in flight.
 */
export const MAX_OPEN_CALLS = 1_000_000;

/**
 * Optional taps on the stream for pictures (the investigation report): called as the ledger
 * goes, so a caller can keep its own bounded summary without the ledger holding a series.
 */
export interface LedgerObserver {
  /** Calls outstanding after each record, at that record's time (time order; out-of-order records are skipped). */
  inFlight?(open: number, tsNs: number): void;
  /** Each duration the ledger adds to its distribution. */
  duration?(ns: number): void;
  /** Each counter snapshot, as fed. */
  counter?(c: CounterRecord): void;
}

export interface LedgerOptions {
  semantics: EntrySemantics;
  observe?: LedgerObserver | undefined;
  /** Called when the input cannot be a trace at all; it must throw (the reader names the file). */
  fail?: ((source: 'ops' | 'trace', line: number, expected: string, got: string) => never) | undefined;
  /**
   * Operations in submit order; absent when there is no ops ledger (pairing and durations only).
   * It may hand out the same object each time: the builder copies what it keeps before pulling again.
   */
  nextOp?: (() => OpRecord | undefined) | undefined;
  captureStartNs?: number | undefined;
  captureStopNs?: number | undefined;
  /** The return probe's miss-counter delta within one epoch (from the case or the command line). */
  nmissedDelta?: number | undefined;
  /** The effective maxactive, when known: admitted instances can never exceed it. */
  maxactive?: number | undefined;
  /**
   * True when the return probe cannot reject a call (no entry handler that may return nonzero:
   * a tracefs `r`/`f` event, a module whose handler cannot filter). Only then does a miss counter
   * that rose by 0 prove that an entry still open at the stop held an instance: otherwise that
   * entry may have been rejected on purpose and held none.
   */
  noFiltering?: boolean | undefined;
  /**
   * Index operations by id (needed when records carry `op`; trace text never does, and skipping
   * the index saves a hash insert and delete per operation). Default true.
   */
  opIds?: boolean | undefined;
  /**
   * What the ops refusal says was expected, when an operation arrives after the trace has passed
   * its submit time (the reader's reorder bound goes here).
   */
  opsOrderExpected?: string | undefined;
  /** How a time of the builder (ns from the reader's origin, clock.ts) is shown in a message; default as it is. */
  showNs?: ((ns: number) => string) | undefined;
  /** Where warnings about single records go (file line, expected, got). */
  warn?: ((source: 'ops' | 'trace', line: number, expected: string, got: string) => void) | undefined;
}

/** An operation while it can still receive records: its OpRecord fields copied in, so one object per operation. */
interface OpState {
  op: string;
  task: number;
  submitNs: number;
  doneNs: number | null;
  line: number;
  eligible: boolean;
  /** Entry records bound to this operation (accepted instances, or entry events). */
  entries: number;
  /** Of those, without a return so far. */
  open: number;
  returned: number;
  filtered: number;
  active: boolean;
  /** A record was bound to it while another operation of its task could have owned it too. */
  uncertain: boolean;
  /** Its calls still open, linked through the call table's rows (no array per operation, O(1) removal). */
  calls: number;
  /** Its number in the call table (see CallTable.addOwner). */
  slot: number;
  /** Its task's list in activeByTask (undefined: no task), so that retiring it needs no lookup. */
  taskOps: OpState[] | undefined;
}

/** A mark the records contradict: only its floor as swept, no ceiling. */
function unknownMark(h: HighWater, why: string): void {
  h.exact = false;
  h.lowerBound = true;
  h.upper = null;
  h.upperFrom = why;
}

/** Remove `x` from `list` keeping the order (splice would allocate an array of the removed element). */
function removeItem<T>(list: T[], x: T): boolean {
  let i = list.length - 1;
  while (i >= 0 && list[i] !== x) i--;
  if (i < 0) return false;
  const n = list.length - 1;
  for (; i < n; i++) list[i] = list[i + 1]!;
  list.pop();
  return true;
}

export interface Classification {
  returned: number;
  /** Entry without return, and the operation had not completed when capture stopped. */
  in_flight_at_stop: number;
  /** Entry without return although the ledger saw the operation complete inside the window. */
  completed_without_return: number;
  filtered: number;
  no_probe_evidence: number;
}

export type ClassName = keyof Classification;
export const CLASS_NAMES: readonly ClassName[] = ['returned', 'in_flight_at_stop', 'completed_without_return', 'filtered', 'no_probe_evidence'];

export type IdentityTerm = 'returned' | 'filtered' | 'in_flight_at_stop' | 'capacity_missed' | 'not_covered' | 'unexplained';
export const IDENTITY_TERMS: readonly IdentityTerm[] = ['returned', 'filtered', 'in_flight_at_stop', 'capacity_missed', 'not_covered', 'unexplained'];

/** A figure the ledger knows exactly (lo === hi) or only within [lo, hi] (hi null: no upper bound). */
export interface Bound {
  lo: number;
  hi: number | null;
  exact: boolean;
}

/** A high-water mark: `value` is exact when `exact`, else a floor with `upper` the ceiling (null: none known). */
export interface HighWater {
  value: number;
  atNs: number | undefined;
  line: number | undefined;
  /** `value` is a floor (the mark may be higher). */
  lowerBound: boolean;
  upper: number | null;
  exact: boolean;
  /** What the ceiling rests on. */
  upperFrom: string;
}

/**
 * The ledger's own summary of DESIGN.md's terms, from its raw counts: each term is a point value
 * only when the records determine it, otherwise null with its bounds. The verdict engine derives
 * the accounting identity from the case; this summary is the ledger's view, not a second owner.
 */
export interface Identity {
  eligible: number;
  returned: number;
  filtered: number;
  in_flight_at_stop: number | null;
  capacity_missed: number | null;
  not_covered: number | null;
  unexplained: number | null;
  /** The point values sum to eligible (null: a term is only bounded or unknown). */
  balanced: boolean | null;
  /** Every term's bounds (exact ones have lo === hi). */
  bounds: Record<IdentityTerm, Bound>;
  /** The bounds allow the terms to sum to eligible (null: a term has no upper bound). */
  consistent: boolean | null;
}

/** What the records make impossible (issue 25): the ledger names it and gives the figures it touches as bounds, never exact. */
export { CONTRADICTIONS, type ContradictionId } from './contradictions.js';

export interface Contradiction {
  id: ContradictionId;
  /** What was seen, one line. */
  detail: string;
  /** The figures (JSON names, as in figures.exact/bounds) it leaves as bounds. */
  affects: string[];
}

export interface LedgerResult {
  semantics: EntrySemantics;
  records: { entries: number; returns: number; filtered: number; counters: number };
  ops?: {
    total: number;
    eligible: number;
    ineligible: number;
    ineligibleWithEvidence: number;
    reachesTargetUnknown: number;
    outsideWindow: number;
    duplicateIds: number;
    unsorted: number;
    classification: Classification;
    /**
     * Each class as bounds: a record of one task that more than one of its operations could own
     * (their windows meet within the stamp's resolution) leaves those operations uncertain.
     */
    classificationBounds: Record<ClassName, Bound>;
    /** Eligible operations whose class rests on such an ambiguous binding. */
    uncertain: number;
    /** Eligible operations with at least one entry record bound to them. */
    withEntry: number;
  };
  pairing: {
    identity: PairingIdentity;
    byInstance: number;
    byTask: number;
    /** Pairs made by a task's stack while it held more than one open call without ids (LIFO assumed). */
    ambiguous: number;
    returnsWithoutEntry: number;
    entriesWithoutReturn: number;
    /** Unreturned calls closed because their operation completed (not counted as outstanding after it). */
    closedByCompletion: number;
    duplicateInstances: number;
    negativeDurations: number;
    unsortedRecords: number;
    firstUnsortedLine: number | undefined;
    /** Probe records that match no operation (only with an ops ledger). */
    foreign: number;
    /** Records that more than one operation of their task could own (bound to one, both marked uncertain). */
    ambiguousOpMatches: number;
    /** Entry records that never got a return (closed by completion, duplicates, open at stop). */
    unpairedEntries: number;
  };
  /**
   * Admitted instances outstanding at once (`concurrency.observed_high_water`): with instance
   * records, every entry; with entry events, only calls that got their return are known to have
   * held an instance, so the mark is exact when the rest are known misses, else a floor with a
   * ceiling from the open entries, maxactive and the miss counter.
   */
  highWater: HighWater;
  /**
   * Demand: calls inside the function at once as the entry events show them, admitted or not
   * (`concurrency.observed_demand_high_water`); only with a separate entry event.
   */
  demand: HighWater | undefined;
  durations: DurationSummary | undefined;
  /** Durations come from pairs bound to eligible operations (with ops) or from all pairs. */
  durationsFrom: 'eligible-operations' | 'all-pairs';
  counters: { nmissedDelta: number | undefined; source: 'given' | 'probe-records' | 'none'; epochs: string[] };
  window: { firstNs: number | undefined; lastNs: number | undefined; stopNs: number | undefined };
  /**
   * Each time of the result (window and marks) as exact decimal ns, present only when one is past
   * 2^53 ns (about 104 days of uptime), where the numbers above are the nearest doubles.
   */
  exactNs?: Record<string, string> | undefined;
  identity: Identity | undefined;
  /** Present only when the records contradict themselves or a given figure (maxactive, the miss counter). */
  contradictions?: Contradiction[] | undefined;
}

export class LedgerBuilder {
  private readonly opts: LedgerOptions;
  private readonly hasOps: boolean;
  private pending: OpRecord | undefined;
  private lastSubmit = -Infinity;
  private readonly activeById = new IdTable<OpState>();
  /** Active operations without done_ns when there is no id index (retired at the end). */
  private readonly activeNoId = new Set<OpState>();
  private readonly opIds: boolean;
  private readonly activeByTask = new Map<number, OpState[]>();
  /** Active operations by completion time, for retiring them as the trace passes it. */
  private readonly heap = new KeyHeap<OpState>();
  /** Retired operations' objects, for reuse (see advance). */
  private readonly freeOps: OpState[] = [];
  /**
   * The open calls, as rows named by number (see calls.ts): a call is released only where it
   * leaves every index (its task's stack, the id index, its operation's list), and its sweep
   * points are named by number, so nothing refers to it any more.
   */
  private readonly calls = new CallTable<OpState>();
  private readonly inst = new IdTable<number>();
  private readonly stacks = new Map<number, CallStack>();
  private readonly hist = new LogHistogram();
  private readonly counterFirst = new Map<string, CounterRecord>();
  private readonly counterLast = new Map<string, CounterRecord>();
  private readonly epochs = new Set<string>();
  private readonly sweepA = new RetroSweep();
  private readonly sweepD: RetroSweep | undefined;
  /**
   * How an unreturned call closed by its operation's completion (or by its id coming back)
   * counts as admitted: an instance record held an instance at least at its entry; an entry
   * event may have been a miss. On demand it counts at its entry.
   */
  private readonly unreturnedHow: number;
  private paired = 0;
  private uncertainCount = 0;
  private readonly uncertainCls: Classification = { returned: 0, in_flight_at_stop: 0, completed_without_return: 0, filtered: 0, no_probe_evidence: 0 };

  private firstNs: number | undefined;
  private maxNs = -Infinity;
  /** Records fed so far may have happened up to (not including) this time. */
  private seenUpTo = -Infinity;
  private openCount = 0;
  /** Most entries open at once (closed by return, completion or a reused id): the ceiling of both marks. */
  private hw = 0;

  private nEntries = 0;
  /** Entries with neither instance id nor task (warned about, never opened). */
  private entriesUnpairable = 0;
  private nReturns = 0;
  private nFiltered = 0;
  private nCounters = 0;
  private byInstance = 0;
  private byTask = 0;
  private ambiguous = 0;
  private orphans = 0;
  private dupInst = 0;
  private negative = 0;
  private unsorted = 0;
  private firstUnsorted: number | undefined;
  private foreign = 0;
  private abandoned = 0;
  private ambiguousOps = 0;

  private opsTotal = 0;
  private ineligible = 0;
  private ineligibleWithEvidence = 0;
  private reachesUnknown = 0;
  private outside = 0;
  private dupOps = 0;
  private firstDupOp: string | undefined;
  private opsUnsorted = 0;
  private opsNeverDone = 0;
  private eligibleCount = 0;
  private withEntry = 0;
  private readonly cls: Classification = { returned: 0, in_flight_at_stop: 0, completed_without_return: 0, filtered: 0, no_probe_evidence: 0 };

  constructor(opts: LedgerOptions) {
    this.opts = opts;
    this.hasOps = opts.nextOp !== undefined;
    this.opIds = opts.opIds ?? true;
    this.sweepD = opts.semantics === 'event' ? new RetroSweep() : undefined;
    this.unreturnedHow = opts.semantics === 'instance' ? POINT : NONE;
    if (this.hasOps) this.pending = this.pullOp();
  }

  private show(ns: number): string {
    return this.opts.showNs !== undefined ? this.opts.showNs(ns) : String(ns);
  }

  private warn(source: 'ops' | 'trace', line: number, expected: string, got: string): void {
    this.opts.warn?.(source, line, expected, got);
  }

  private pullOp(): OpRecord | undefined {
    const op = this.opts.nextOp?.();
    if (op === undefined) return undefined;
    this.opsTotal++;
    // Out of order is harmless while the trace has not reached it; activate() refuses it when late.
    if (op.submitNs < this.lastSubmit) this.opsUnsorted++;
    else this.lastSubmit = op.submitNs;
    return op;
  }

  /** `stopNs`: the capture stop when none was given (at the end, the last record's time). */
  private activate(rec: OpRecord, stopNs?: number): void {
    const start = this.opts.captureStartNs;
    const stop = this.opts.captureStopNs ?? stopNs;
    if ((start !== undefined && rec.doneNs !== null && rec.doneNs < start) || (stop !== undefined && rec.submitNs > stop)) {
      this.outside++;
      return;
    }
    if (rec.submitNs < this.seenUpTo) {
      // Records of its task since submit_ns were already bound elsewhere or called foreign:
      // continuing would give a wrong classification, so refuse.
      const expected = this.opts.opsOrderExpected ?? 'operations in submit_ns order';
      const got = `submit_ns ${this.show(rec.submitNs)} after the trace had passed ${this.show(this.seenUpTo - 1)}`;
      if (this.opts.fail) this.opts.fail('ops', rec.line, expected, got);
      throw new Error(`ops line ${rec.line}: expected ${expected}; got ${got}`);
    }
    if (rec.reachesTarget === undefined) this.reachesUnknown++;
    // Operations never completed stay open to the end, like open calls: bounded alike.
    if (rec.doneNs === null && ++this.opsNeverDone > MAX_OPEN_CALLS) {
      const expected = `an ops ledger with at most ${MAX_OPEN_CALLS} operations never completed ("done_ns": null)`;
      const got = `${this.opsNeverDone} such operations`;
      if (this.opts.fail) this.opts.fail('ops', rec.line, expected, got);
      throw new Error(`line ${rec.line}: expected ${expected}; got ${got}`);
    }
    let st = this.freeOps.pop();
    if (st === undefined) {
      st = { op: '', task: -1, submitNs: 0, doneNs: null, line: 0, eligible: true, entries: 0, open: 0, returned: 0, filtered: 0, active: true, uncertain: false, calls: NO_CALL, slot: -1, taskOps: undefined };
      this.calls.addOwner(st);
    }
    st.op = rec.op;
    st.task = rec.task;
    st.submitNs = rec.submitNs;
    st.doneNs = rec.doneNs;
    st.line = rec.line;
    st.eligible = rec.reachesTarget !== false;
    st.entries = 0;
    st.open = 0;
    st.returned = 0;
    st.filtered = 0;
    st.active = true;
    st.uncertain = false;
    st.calls = NO_CALL;
    if (this.opIds) {
      const prev = this.activeById.swap(rec.op, st);
      if (prev !== undefined) {
        this.dupOps++;
        if (this.firstDupOp === undefined) this.firstDupOp = `"op" ${JSON.stringify(rec.op)} at ops lines ${prev.line} and ${rec.line}`;
        this.warn('ops', rec.line, `a unique "op" (line ${prev.line} uses it too)`, JSON.stringify(rec.op));
        // Records naming the id go to the later one: which of the two they belong to is not known.
        prev.uncertain = true;
        st.uncertain = true;
      }
    } else if (rec.doneNs === null) {
      this.activeNoId.add(st);
    }
    st.taskOps = undefined;
    if (rec.task >= 0) {
      let list = this.activeByTask.get(rec.task);
      if (list === undefined) this.activeByTask.set(rec.task, (list = [st]));
      else list.push(st);
      st.taskOps = list;
    }
    if (rec.doneNs !== null) this.heap.push(st, rec.doneNs);
  }

  private retire(st: OpState, stopNs: number): void {
    st.active = false;
    const rec = st;
    if (st.calls !== NO_CALL && rec.doneNs !== null && rec.doneNs <= stopNs) {
      // The operation completed, so its unreturned calls are over (a missed return, or a call the
      // return probe never admitted): stop counting them as outstanding and keep the task's stack clean.
      const T = this.calls;
      for (let call = st.calls; call !== NO_CALL; call = T.nextOf(call)) {
        this.removeFromStack(call);
        const inst = T.inst(call);
        if (inst !== undefined) this.inst.deleteIf(inst, call);
        this.openCount--;
        this.abandoned++;
        this.resolve(call, this.unreturnedHow, POINT);
        // Out of the stack, the id index and (below) the operation's list: free for reuse (its
        // `next` is read before any entry can take it).
        T.release(call);
      }
      st.calls = NO_CALL;
    }
    if (this.opIds) {
      this.activeById.deleteIf(rec.op, st);
    } else if (rec.doneNs === null) this.activeNoId.delete(st);
    // Empty lists stay: the same tasks come back, and re-creating them is garbage (and the list
    // an operation holds is the one the map holds for its task).
    if (st.taskOps !== undefined) removeItem(st.taskOps, st);
    if (!st.eligible) {
      this.ineligible++;
      if (st.entries + st.filtered + st.returned > 0) this.ineligibleWithEvidence++;
      return;
    }
    this.eligibleCount++;
    let k: ClassName;
    if (st.entries > 0) {
      this.withEntry++;
      if (st.open === 0) k = 'returned';
      else if (rec.doneNs !== null && rec.doneNs <= stopNs) k = 'completed_without_return';
      else k = 'in_flight_at_stop';
    } else if (st.returned > 0) {
      // Only returns (the entry preceded capture, or there is no entry event): it came back.
      k = 'returned';
    } else if (st.filtered > 0) {
      k = 'filtered';
    } else {
      k = 'no_probe_evidence';
    }
    this.cls[k]++;
    if (st.uncertain) {
      this.uncertainCount++;
      this.uncertainCls[k]++;
    }
  }

  private advance(ts: number, line: number, res: number): void {
    if (this.firstNs === undefined) this.firstNs = ts;
    if (ts < this.maxNs) {
      this.unsorted++;
      if (this.firstUnsorted === undefined) {
        this.firstUnsorted = line;
        this.warn('trace', line, 'records in time order (pairing and operation matching assume it)', `${this.show(ts)} after ${this.show(this.maxNs)}`);
      }
      return;
    }
    this.maxNs = ts;
    if (!this.hasOps) return;
    // The record happened somewhere in [ts, ts + res): every operation submitted by then may own it.
    while (this.pending !== undefined && this.pending.submitNs < ts + res) {
      this.activate(this.pending);
      this.pending = this.pullOp();
    }
    let top = this.heap.peek();
    while (top !== undefined && top.doneNs! < ts) {
      this.heap.pop();
      this.retire(top, ts);
      // Retired here, it is in no index, and its unreturned calls were closed with it: nothing
      // refers to it any more, so the next operation reuses the object (a quarter of the
      // ledger's allocation was one of these per operation).
      if (top.calls === NO_CALL) this.freeOps.push(top);
      top = this.heap.peek();
    }
  }

  /**
   * The operation a record belongs to: by its `op` id, else the one operation of its task whose
   * window [submit_ns, done_ns] meets [ts, ts + resolution). When several do (two operations of
   * one task closer than the stamp's resolution, or overlapping), the record is bound to the
   * latest submitted and every candidate is marked uncertain, so its class is reported as a bound.
   */
  private matchOp(rec: ProbeRecord): OpState | undefined {
    if (!this.hasOps) return undefined;
    if (rec.op !== undefined) return this.activeById.get(rec.op);
    if (rec.task < 0) return undefined;
    const list = this.activeByTask.get(rec.task);
    if (list === undefined) return undefined;
    const ts = rec.tsNs;
    const until = ts + (rec.resNs ?? 1);
    let only: OpState | undefined;
    let latest: OpState | undefined;
    let count = 0;
    for (const st of list) {
      if (st.submitNs >= until) continue;
      if (st.doneNs !== null && st.doneNs < ts) continue;
      count++;
      if (only === undefined) only = st;
      if (latest === undefined || st.submitNs >= latest.submitNs) latest = st;
    }
    if (count <= 1) return only;
    this.ambiguousOps++;
    for (const st of list) {
      if (st.submitNs >= until) continue;
      if (st.doneNs !== null && st.doneNs < ts) continue;
      st.uncertain = true;
    }
    return latest;
  }

  /** Call `call` resolved: its admitted point counts as `howA`, its demand point (if any) as `howD`. */
  private resolve(call: number, howA: number, howD: number): void {
    const T = this.calls;
    this.sweepA.close(T.paOf(call), howA);
    const pd = T.pdOf(call);
    if (pd >= 0) this.sweepD!.close(pd, howD);
  }

  private removeFromStack(call: number): boolean {
    const task = this.calls.taskOf(call);
    if (task < 0) return false;
    const stack = this.stacks.get(task);
    // Empty stacks stay: the same tasks come back, and re-creating them is garbage.
    return stack !== undefined && stack.remove(call);
  }

  /** Feed one probe record (entry, return or filtered), in time order. */
  add(rec: ProbeRecord): void {
    const res = rec.resNs ?? 1;
    this.advance(rec.tsNs, rec.line, res);
    if (rec.ev === 'entry') this.entry(rec);
    else if (rec.ev === 'return') this.ret(rec);
    else this.filtered(rec);
    if (rec.tsNs + res > this.seenUpTo) this.seenUpTo = rec.tsNs + res;
    if (this.opts.observe?.inFlight !== undefined && rec.tsNs >= this.maxNs) this.opts.observe.inFlight(this.openCount, rec.tsNs);
  }

  private entry(rec: ProbeRecord): void {
    this.nEntries++;
    if (rec.inst === undefined && rec.task < 0) {
      this.warn('trace', rec.line, 'an entry record with "inst" or "task" (nothing else can pair it)', 'neither');
      this.entriesUnpairable++;
      return;
    }
    const op = this.matchOp(rec);
    const T = this.calls;
    const call = T.take();
    T.set(call, rec.tsNs, rec.line, rec.task, this.sweepA.open(rec.tsNs, rec.line), this.sweepD !== undefined ? this.sweepD.open(rec.tsNs, rec.line) : -1, op);
    T.setInst(call, rec.inst);
    if (rec.inst !== undefined) {
      // The id now names this call (in place when it was open already, as set() would).
      const old = this.inst.swap(rec.inst, call);
      if (old !== undefined) {
        // The id came back while we still held it open: its return was never recorded.
        this.dupInst++;
        this.warn('trace', rec.line, `an instance id not already open (line ${T.lineOf(old)} opened it, no return seen)`, JSON.stringify(rec.inst));
        this.removeFromStack(old);
        this.openCount--;
        T.unlink(old);
        this.resolve(old, this.unreturnedHow, POINT);
        T.release(old);
      }
    }
    if (rec.task >= 0) {
      let stack = this.stacks.get(rec.task);
      if (stack === undefined) this.stacks.set(rec.task, (stack = new CallStack()));
      stack.push(call);
    }
    this.openCount++;
    if (this.openCount > MAX_OPEN_CALLS) {
      const expected = `a trace whose entries are closed by returns (at most ${MAX_OPEN_CALLS} calls open at once)`;
      const got = `${this.openCount} calls open (the entry events of other functions, or no return event in the trace?)`;
      if (this.opts.fail) this.opts.fail('trace', rec.line, expected, got);
      throw new Error(`line ${rec.line}: expected ${expected}; got ${got}`);
    }
    if (this.openCount > this.hw) this.hw = this.openCount;
    if (op !== undefined) {
      op.entries++;
      op.open++;
      T.link(call, op);
    } else if (this.hasOps) {
      this.foreign++;
    }
  }

  private ret(rec: ProbeRecord): void {
    this.nReturns++;
    const T = this.calls;
    let call: number | undefined;
    if (rec.inst !== undefined) {
      call = this.inst.take(rec.inst);
      if (call !== undefined) {
        this.removeFromStack(call);
        this.byInstance++;
      }
    } else if (rec.task >= 0) {
      const stack = this.stacks.get(rec.task);
      if (stack !== undefined) {
        if (stack.length > 1) this.ambiguous++;
        call = stack.pop();
        if (call !== undefined) {
          const inst = T.inst(call);
          if (inst !== undefined) this.inst.delete(inst);
          this.byTask++;
        }
      }
    } else {
      this.warn('trace', rec.line, 'a return record with "inst" or "task" (nothing else can pair it)', 'neither');
      return;
    }
    if (call === undefined) {
      // Started before capture (or its entry was lost): no duration, but the operation did come back.
      this.orphans++;
      if (this.orphans === 1) this.warn('trace', rec.line, 'a return whose entry was recorded (it may have started before capture)', 'no open entry');
      const op = this.matchOp(rec);
      if (op !== undefined) op.returned++;
      else if (this.hasOps) this.foreign++;
      return;
    }
    this.openCount--;
    this.paired++;
    this.resolve(call, INTERVAL, INTERVAL);
    const d = rec.tsNs - T.tsNsOf(call);
    const op = T.op(call);
    if (d < 0) {
      this.negative++;
      this.warn('trace', rec.line, `a return after its entry (line ${T.lineOf(call)})`, `${d} ns`);
    } else if (!this.hasOps || (op !== undefined && op.eligible)) {
      this.hist.add(d);
      this.opts.observe?.duration?.(d);
    }
    if (op !== undefined) {
      op.open--;
      op.returned++;
      T.unlink(call);
    } else if (this.hasOps) {
      this.foreign++;
    }
    // Paired: out of its stack, the id index and its operation's list, so free for reuse.
    T.release(call);
  }

  private filtered(rec: ProbeRecord): void {
    this.nFiltered++;
    const op = this.matchOp(rec);
    if (op !== undefined) op.filtered++;
    else if (this.hasOps) this.foreign++;
  }

  /** Feed a counter snapshot (probe.jsonl `"ev": "counter"`). */
  addCounter(c: CounterRecord): void {
    this.nCounters++;
    this.opts.observe?.counter?.(c);
    if (c.epoch !== undefined) this.epochs.add(c.epoch);
    if (!this.counterFirst.has(c.name)) this.counterFirst.set(c.name, c);
    this.counterLast.set(c.name, c);
  }

  private counterDelta(): { delta: number | undefined; source: 'given' | 'probe-records' | 'none' } {
    if (this.opts.nmissedDelta !== undefined) return { delta: this.opts.nmissedDelta, source: 'given' };
    const first = this.counterFirst.get('nmissed');
    const last = this.counterLast.get('nmissed');
    if (first === undefined || last === undefined) return { delta: undefined, source: 'none' };
    if (first.epoch !== last.epoch || last.value < first.value) {
      // A new registration reset the counter: a delta across epochs means nothing.
      this.warn('trace', last.line, `nmissed snapshots within one registration epoch (line ${first.line} is epoch ${first.epoch ?? 'unknown'})`, `epoch ${last.epoch ?? 'unknown'}, value ${last.value}`);
      return { delta: undefined, source: 'probe-records' };
    }
    return { delta: last.value - first.value, source: 'probe-records' };
  }

  /** Close the capture: classify what is left and compute the summary. */
  finish(): LedgerResult {
    const lastNs = this.maxNs === -Infinity ? undefined : this.maxNs;
    const stopNs = this.opts.captureStopNs ?? lastNs ?? Infinity;
    if (this.hasOps) {
      // Operations not yet reached: submitted after the last record (or the stop given) are outside
      // the window, since a record of theirs would have reached them (ledger-format.md).
      const lateStop = stopNs === Infinity ? undefined : stopNs;
      while (this.pending !== undefined) {
        this.activate(this.pending, lateStop);
        this.pending = this.pullOp();
      }
      for (const st of this.activeById.values()) this.retire(st, stopNs);
      for (const st of [...this.activeNoId]) this.retire(st, stopNs);
      // Duplicated ids leave the shadowed state only in the per-task index or the heap.
      for (const list of [...this.activeByTask.values()]) for (const st of [...list]) if (st.active) this.retire(st, stopNs);
      let st = this.heap.pop();
      while (st !== undefined) {
        if (st.active) this.retire(st, stopNs);
        st = this.heap.pop();
      }
    }
    // Calls still open at the end: an instance record held its instance to the stop; an entry
    // event may have been a miss, and the call may have ended unseen (demand counts its entry only).
    // A miss counter that rose by 0 over the capture says no call was missed; when the probe also
    // cannot reject calls, each open entry held an instance, so its return would have been
    // recorded had it come before the stop, and it was inside the function to the stop (both
    // marks count it over its interval). A call the entry handler rejected holds no instance.
    const counters = this.counterDelta();
    const heldToStop = this.opts.semantics === 'instance' || (counters.delta === 0 && this.opts.noFiltering === true);
    const endHow = heldToStop ? INTERVAL : NONE;
    const endHowD = heldToStop ? INTERVAL : POINT;
    for (const stack of this.stacks.values()) {
      for (let i = 0; i < stack.length; i++) this.resolve(stack.at(i), endHow, endHowD);
    }
    for (const call of this.inst.values()) this.resolve(call, endHow, endHowD);
    const unpaired = this.nEntries - this.entriesUnpairable - this.paired;
    const contradictions: Contradiction[] = [];
    // With entry events every missed call shows an entry and no return: a counter that says more
    // were missed than entries went unreturned counts something else (another window, another
    // registration), so nothing may rest on it.
    let delta = counters.delta;
    if (this.opts.semantics === 'event' && delta !== undefined && delta > unpaired) {
      contradictions.push({ id: 'nmissed-exceeds-unreturned', detail: `the miss counter rose by ${delta} but only ${unpaired} entry event(s) have no return`, affects: ['high_water', ...IDENTITY_TERMS.filter((t) => t !== 'returned' && t !== 'not_covered').map((t) => `identity.${t}`)] });
      delta = undefined;
    }
    const identity = this.hasOps ? this.identity(delta, unpaired) : undefined;
    const result: LedgerResult = {
      semantics: this.opts.semantics,
      records: { entries: this.nEntries, returns: this.nReturns, filtered: this.nFiltered, counters: this.nCounters },
      pairing: {
        identity: this.byInstance > 0 && this.byTask === 0 ? 'instance-data' : this.byTask > 0 ? 'task-and-depth' : 'none',
        byInstance: this.byInstance,
        byTask: this.byTask,
        ambiguous: this.ambiguous,
        returnsWithoutEntry: this.orphans,
        entriesWithoutReturn: this.openCount + this.abandoned,
        closedByCompletion: this.abandoned,
        duplicateInstances: this.dupInst,
        negativeDurations: this.negative,
        unsortedRecords: this.unsorted,
        firstUnsortedLine: this.firstUnsorted,
        foreign: this.foreign,
        ambiguousOpMatches: this.ambiguousOps,
        unpairedEntries: unpaired,
      },
      highWater: this.admittedMark(delta, unpaired),
      demand: this.demandMark(),
      durations: this.hist.summary(),
      durationsFrom: this.hasOps ? 'eligible-operations' : 'all-pairs',
      counters: { nmissedDelta: counters.delta, source: counters.source, epochs: [...this.epochs] },
      window: { firstNs: this.firstNs, lastNs, stopNs: stopNs === Infinity ? undefined : stopNs },
      identity,
    };
    if (this.hasOps) {
      result.ops = {
        total: this.opsTotal,
        eligible: this.eligibleCount,
        ineligible: this.ineligible,
        ineligibleWithEvidence: this.ineligibleWithEvidence,
        reachesTargetUnknown: this.reachesUnknown,
        outsideWindow: this.outside,
        duplicateIds: this.dupOps,
        unsorted: this.opsUnsorted,
        classification: { ...this.cls },
        classificationBounds: this.classBounds(),
        uncertain: this.uncertainCount,
        withEntry: this.withEntry,
      };
    }
    this.contradict(result, contradictions);
    return result;
  }

  /**
   * The contradictions the finished figures show, added to those found on the way; each leaves
   * the figures it touches as bounds that contain any truth (issue 25: never smoothed over).
   */
  private contradict(r: LedgerResult, found: Contradiction[]): void {
    const cap = this.opts.maxactive;
    const hw = r.highWater;
    if (cap !== undefined && hw.value > cap) {
      found.push({ id: 'admitted-above-maxactive', detail: `${hw.value} admitted instances outstanding at once, above maxactive ${cap}`, affects: ['high_water'] });
      unknownMark(hw, 'none (the mark is above maxactive, which cannot be)');
    }
    if (this.unsorted > 0) {
      // Records out of time order were paired as they came but bound to no operation, and the
      // marks swept them out of place: no figure that rests on time is known.
      found.push({ id: 'records-out-of-order', detail: `${this.unsorted} record(s) earlier than one before them (first at trace line ${this.firstUnsorted})`, affects: ['high_water', 'demand', 'ops.classification', 'identity', 'durations'] });
      unknownMark(hw, 'none (records out of time order)');
      if (r.demand !== undefined) unknownMark(r.demand, 'none (records out of time order)');
      const n = this.eligibleCount;
      const all = (): Bound => ({ lo: 0, hi: n, exact: false });
      if (r.ops !== undefined) for (const k of CLASS_NAMES) r.ops.classificationBounds[k] = all();
      const id = r.identity;
      if (id !== undefined) {
        for (const t of IDENTITY_TERMS) id.bounds[t] = all();
        id.in_flight_at_stop = id.capacity_missed = id.not_covered = id.unexplained = null;
        id.balanced = null;
        id.consistent = null;
      }
    }
    if (this.dupOps > 0) {
      found.push({ id: 'duplicate-operation-ids', detail: `${this.dupOps} operation(s) reuse the id of one still open (first ${this.firstDupOp})`, affects: ['ops.classification', 'identity'] });
    }
    if (found.length > 0) r.contradictions = found;
  }

  /**
   * Admitted instances outstanding at once. The floor counts what surely held an instance
   * (paired calls over their life; with instance records also unreturned ones, to their end or
   * at their entry); the ceiling counts every open entry until its return, its operation's
   * completion or the stop, capped by maxactive. With entry events, a miss counter at least as
   * large as the unreturned entries says all of them were misses: then the floor is exact.
   */
  private admittedMark(delta: number | undefined, unpaired: number): HighWater {
    const a = this.sweepA;
    const cap = this.opts.maxactive;
    // Returns without entries: calls were open before capture began, the open count saw none of them.
    let upper: number | null = this.orphans > 0 ? null : this.hw;
    let upperFrom = this.orphans > 0 ? 'none (calls were open before capture began)' : 'open entries until return, completion or stop';
    if (cap !== undefined && (upper === null || cap < upper)) {
      upper = cap;
      upperFrom = 'maxactive';
    }
    let exact = upper !== null && a.value >= upper;
    if (!exact && this.opts.semantics === 'event' && this.orphans === 0 && delta !== undefined && delta >= unpaired) {
      exact = true;
      upper = a.value;
      upperFrom = 'the miss counter: every unreturned entry was a miss';
    }
    if (exact) upper = a.value;
    return { value: a.value, atNs: a.at, line: a.line, lowerBound: !exact, upper, exact, upperFrom };
  }

  /** Demand (entry events only): paired calls over their life, others at their entry (floor); every entry open until closed (ceiling). */
  private demandMark(): HighWater | undefined {
    const d = this.sweepD;
    if (d === undefined) return undefined;
    const upper = this.orphans > 0 ? null : this.hw;
    const exact = upper !== null && d.value >= upper;
    return {
      value: d.value,
      atNs: d.at,
      line: d.line,
      lowerBound: !exact,
      upper: exact ? d.value : upper,
      exact,
      upperFrom: this.orphans > 0 ? 'none (calls were open before capture began)' : 'every entry open until its return, its operation\'s completion or the stop',
    };
  }

  /** Class counts as bounds: an uncertain operation may belong to any class. */
  private classBounds(): Record<ClassName, Bound> {
    const u = this.uncertainCount;
    const out = {} as Record<ClassName, Bound>;
    for (const k of CLASS_NAMES) {
      const lo = this.cls[k] - this.uncertainCls[k];
      out[k] = { lo, hi: lo + u, exact: u === 0 };
    }
    return out;
  }

  private identity(delta: number | undefined, unpaired: number): Identity {
    const cb = this.classBounds();
    const eligible = this.eligibleCount;
    const u = this.uncertainCount;
    const c = this.cls;
    const b = (lo: number, hi: number | null): Bound => ({ lo: Math.max(0, lo), hi, exact: hi !== null && Math.max(0, lo) === hi });
    const bounds = {} as Record<IdentityTerm, Bound>;
    bounds.returned = cb.returned;
    bounds.filtered = cb.filtered;
    if (this.opts.semantics === 'instance') {
      // A missed call reaches no handler: it is among the operations without any record, but the
      // counter also counts nested, ineligible and foreign calls, so how many is a bound.
      bounds.in_flight_at_stop = cb.in_flight_at_stop;
      bounds.unexplained = cb.completed_without_return;
      const silentHi = cb.no_probe_evidence.hi!;
      if (delta === undefined) {
        bounds.capacity_missed = b(0, silentHi);
        bounds.not_covered = b(0, silentHi);
      } else {
        const missedHi = Math.min(delta, silentHi);
        bounds.capacity_missed = b(0, missedHi);
        bounds.not_covered = b(cb.no_probe_evidence.lo - missedHi, silentHi);
      }
    } else {
      // The entry kprobe fires for every call: a missed call shows an entry event and no return.
      // An operation whose entry has no return was missed, or is still running (in flight at
      // stop) or unexplained (completed without return; in trace text also filtered calls).
      bounds.not_covered = cb.no_probe_evidence;
      const ifs = cb.in_flight_at_stop;
      const cwr = cb.completed_without_return;
      const open = c.in_flight_at_stop + c.completed_without_return;
      // A call the entry handler rejected also shows an entry event and no return: without
      // filtered records (trace text has none) the completed ones may be filtered too.
      if (this.nFiltered === 0) bounds.filtered = b(cb.filtered.lo, cb.filtered.hi! + cwr.hi!);
      if (delta === undefined) {
        bounds.capacity_missed = b(0, ifs.hi! + cwr.hi!);
        bounds.in_flight_at_stop = b(0, ifs.hi);
        bounds.unexplained = b(0, cwr.hi);
      } else {
        // Misses fall on unreturned entries; at most `unpaired - open` of them are not the first
        // unreturned entry of one of these operations.
        const lo = u > 0 ? 0 : Math.max(0, delta - (unpaired - open));
        bounds.capacity_missed = b(lo, Math.min(delta, ifs.hi! + cwr.hi!));
        bounds.in_flight_at_stop = b(ifs.lo - Math.min(delta, ifs.hi!), ifs.hi);
        bounds.unexplained = b(this.nFiltered === 0 ? 0 : cwr.lo - Math.min(delta, cwr.hi!), cwr.hi);
        if (u === 0 && delta >= unpaired) {
          // Every unreturned entry was a miss: nothing is in flight, filtered or unexplained.
          bounds.filtered = cb.filtered;
          bounds.capacity_missed = b(open, open);
          bounds.in_flight_at_stop = b(0, 0);
          bounds.unexplained = b(0, 0);
        }
      }
    }
    const point = (t: IdentityTerm): number | null => (bounds[t].exact ? bounds[t].lo : null);
    const parts = IDENTITY_TERMS.map(point);
    const known = parts.every((p) => p !== null);
    const sum = parts.reduce<number>((acc, p) => acc + (p ?? 0), 0);
    let loSum = 0;
    let hiSum: number | null = 0;
    for (const t of IDENTITY_TERMS) {
      loSum += bounds[t].lo;
      const hi = bounds[t].hi;
      hiSum = hi === null || hiSum === null ? null : hiSum + hi;
    }
    return {
      eligible,
      returned: c.returned,
      filtered: c.filtered,
      in_flight_at_stop: point('in_flight_at_stop'),
      capacity_missed: point('capacity_missed'),
      not_covered: point('not_covered'),
      unexplained: point('unexplained'),
      balanced: known ? sum === eligible : null,
      bounds,
      consistent: hiSum === null ? null : loSum <= eligible && eligible <= hiSum,
    };
  }
}
