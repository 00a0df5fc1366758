import { LogHistogram, type DurationSummary } from './histogram.js';
import type { CounterRecord, OpRecord, ProbeRecord } from './records.js';

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
  /**
   * Index operations by id (needed when records carry `op`; trace text never does, and skipping
   * the index saves a hash insert and delete per operation). Default true.
   */
  opIds?: boolean | undefined;
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
  /** Its calls still open, linked through the calls themselves (no array per operation, O(1) removal). */
  calls: OpenCall | null;
}

interface OpenCall {
  tsNs: number;
  task: number;
  op: OpState | undefined;
  line: number;
  inst: string | undefined;
  /** Neighbours in `op.calls`. */
  prev: OpenCall | null;
  next: OpenCall | null;
}

function unlinkCall(call: OpenCall): void {
  const op = call.op;
  if (op === undefined) return;
  if (call.prev !== null) call.prev.next = call.next;
  else if (op.calls === call) op.calls = call.next;
  else return; // not linked (already unlinked)
  if (call.next !== null) call.next.prev = call.prev;
  call.prev = null;
  call.next = null;
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

export interface Identity {
  eligible: number;
  returned: number;
  filtered: number;
  in_flight_at_stop: number | null;
  capacity_missed: number | null;
  not_covered: number | null;
  unexplained: number | null;
  balanced: boolean | null;
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
    ambiguousOpMatches: number;
  };
  highWater: { value: number; atNs: number | undefined; line: number | undefined; lowerBound: boolean };
  durations: DurationSummary | undefined;
  /** Durations come from pairs bound to eligible operations (with ops) or from all pairs. */
  durationsFrom: 'eligible-operations' | 'all-pairs';
  counters: { nmissedDelta: number | undefined; source: 'given' | 'probe-records' | 'none'; epochs: string[] };
  window: { firstNs: number | undefined; lastNs: number | undefined; stopNs: number | undefined };
  identity: Identity | undefined;
}

/** A binary min-heap of operations by completion time, for retiring them as the trace passes it. */
class DoneHeap {
  private readonly a: OpState[] = [];
  get size(): number {
    return this.a.length;
  }
  peek(): OpState | undefined {
    return this.a[0];
  }
  push(x: OpState): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]!.doneNs! <= x.doneNs!) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = x;
  }
  pop(): OpState | undefined {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      let i = 0;
      const n = a.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && a[r]!.doneNs! < a[l]!.doneNs! ? r : l;
        if (a[c]!.doneNs! >= last.doneNs!) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

export class LedgerBuilder {
  private readonly opts: LedgerOptions;
  private readonly hasOps: boolean;
  private pending: OpRecord | undefined;
  private lastSubmit = -Infinity;
  private readonly activeById = new Map<string, OpState>();
  /** Active operations without done_ns when there is no id index (retired at the end). */
  private readonly activeNoId = new Set<OpState>();
  private readonly opIds: boolean;
  private readonly activeByTask = new Map<number, OpState[]>();
  private readonly heap = new DoneHeap();
  private readonly inst = new Map<string, OpenCall>();
  private readonly stacks = new Map<number, OpenCall[]>();
  private readonly hist = new LogHistogram();
  private readonly counterFirst = new Map<string, CounterRecord>();
  private readonly counterLast = new Map<string, CounterRecord>();
  private readonly epochs = new Set<string>();

  private firstNs: number | undefined;
  private maxNs = -Infinity;
  private openCount = 0;
  private hw = 0;
  private hwAt: number | undefined;
  private hwLine: number | undefined;

  private nEntries = 0;
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
  private opsUnsorted = 0;
  private opsNeverDone = 0;
  private eligibleCount = 0;
  private withEntry = 0;
  private readonly cls: Classification = { returned: 0, in_flight_at_stop: 0, completed_without_return: 0, filtered: 0, no_probe_evidence: 0 };

  constructor(opts: LedgerOptions) {
    this.opts = opts;
    this.hasOps = opts.nextOp !== undefined;
    this.opIds = opts.opIds ?? true;
    if (this.hasOps) this.pending = this.pullOp();
  }

  private warn(source: 'ops' | 'trace', line: number, expected: string, got: string): void {
    this.opts.warn?.(source, line, expected, got);
  }

  private pullOp(): OpRecord | undefined {
    const op = this.opts.nextOp?.();
    if (op === undefined) return undefined;
    this.opsTotal++;
    if (op.submitNs < this.lastSubmit) {
      this.opsUnsorted++;
      if (this.opsUnsorted === 1) this.warn('ops', op.line, 'operations sorted by submit_ns (records before this one may be reported as foreign)', `${op.submitNs} after ${this.lastSubmit}`);
    } else {
      this.lastSubmit = op.submitNs;
    }
    return op;
  }

  private activate(rec: OpRecord): void {
    const start = this.opts.captureStartNs;
    const stop = this.opts.captureStopNs;
    if ((start !== undefined && rec.doneNs !== null && rec.doneNs < start) || (stop !== undefined && rec.submitNs > stop)) {
      this.outside++;
      return;
    }
    if (rec.reachesTarget === undefined) this.reachesUnknown++;
    // Operations never completed stay open to the end, like open calls: bounded alike.
    if (rec.doneNs === null && ++this.opsNeverDone > MAX_OPEN_CALLS) {
      const expected = `an ops ledger with at most ${MAX_OPEN_CALLS} operations never completed ("done_ns": null)`;
      const got = `${this.opsNeverDone} such operations`;
      if (this.opts.fail) this.opts.fail('ops', rec.line, expected, got);
      throw new Error(`line ${rec.line}: expected ${expected}; got ${got}`);
    }
    const st: OpState = {
      op: rec.op,
      task: rec.task,
      submitNs: rec.submitNs,
      doneNs: rec.doneNs,
      line: rec.line,
      eligible: rec.reachesTarget !== false,
      entries: 0,
      open: 0,
      returned: 0,
      filtered: 0,
      active: true,
      calls: null,
    };
    if (this.opIds) {
      const prev = this.activeById.get(rec.op);
      if (prev !== undefined) {
        this.dupOps++;
        this.warn('ops', rec.line, `a unique "op" (line ${prev.line} uses it too)`, JSON.stringify(rec.op));
      }
      this.activeById.set(rec.op, st);
    } else if (rec.doneNs === null) {
      this.activeNoId.add(st);
    }
    if (rec.task >= 0) {
      const list = this.activeByTask.get(rec.task);
      if (list === undefined) this.activeByTask.set(rec.task, [st]);
      else list.push(st);
    }
    if (rec.doneNs !== null) this.heap.push(st);
  }

  private retire(st: OpState, stopNs: number): void {
    st.active = false;
    const rec = st;
    if (st.calls !== null && rec.doneNs !== null && rec.doneNs <= stopNs) {
      // The operation completed, so its unreturned calls are over (a missed return, or a call the
      // return probe never admitted): stop counting them as outstanding and keep the task's stack clean.
      for (let call: OpenCall | null = st.calls; call !== null; call = call.next) {
        this.removeFromStack(call);
        if (call.inst !== undefined && this.inst.get(call.inst) === call) this.inst.delete(call.inst);
        this.openCount--;
        this.abandoned++;
      }
      st.calls = null;
    }
    if (this.opIds) {
      if (this.activeById.get(rec.op) === st) this.activeById.delete(rec.op);
    } else if (rec.doneNs === null) this.activeNoId.delete(st);
    if (rec.task >= 0) {
      // Empty lists stay: the same tasks come back, and re-creating them is garbage.
      const list = this.activeByTask.get(rec.task);
      if (list !== undefined) removeItem(list, st);
    }
    if (!st.eligible) {
      this.ineligible++;
      if (st.entries + st.filtered + st.returned > 0) this.ineligibleWithEvidence++;
      return;
    }
    this.eligibleCount++;
    if (st.entries > 0) {
      this.withEntry++;
      if (st.open === 0) this.cls.returned++;
      else if (rec.doneNs !== null && rec.doneNs <= stopNs) this.cls.completed_without_return++;
      else this.cls.in_flight_at_stop++;
    } else if (st.returned > 0) {
      // Only returns (the entry preceded capture, or there is no entry event): it came back.
      this.cls.returned++;
    } else if (st.filtered > 0) {
      this.cls.filtered++;
    } else {
      this.cls.no_probe_evidence++;
    }
  }

  private advance(ts: number, line: number): void {
    if (this.firstNs === undefined) this.firstNs = ts;
    if (ts < this.maxNs) {
      this.unsorted++;
      if (this.firstUnsorted === undefined) {
        this.firstUnsorted = line;
        this.warn('trace', line, 'records in time order (pairing and operation matching assume it)', `${ts} after ${this.maxNs}`);
      }
      return;
    }
    this.maxNs = ts;
    if (!this.hasOps) return;
    while (this.pending !== undefined && this.pending.submitNs <= ts) {
      this.activate(this.pending);
      this.pending = this.pullOp();
    }
    let top = this.heap.peek();
    while (top !== undefined && top.doneNs! < ts) {
      this.heap.pop();
      this.retire(top, ts);
      top = this.heap.peek();
    }
  }

  private matchOp(rec: ProbeRecord): OpState | undefined {
    if (!this.hasOps) return undefined;
    if (rec.op !== undefined) return this.activeById.get(rec.op);
    if (rec.task < 0) return undefined;
    // A nested call (recursion) belongs to the operation of the call it is nested in.
    const stack = this.stacks.get(rec.task);
    if (stack !== undefined) {
      for (let i = stack.length - 1; i >= 0; i--) {
        const op = stack[i]!.op;
        if (op !== undefined) return op;
      }
    }
    const list = this.activeByTask.get(rec.task);
    if (list === undefined) return undefined;
    let fresh: OpState | undefined;
    let freshCount = 0;
    let latest: OpState | undefined;
    for (const st of list) {
      if (st.submitNs > rec.tsNs) continue;
      if (st.doneNs !== null && st.doneNs < rec.tsNs) continue;
      if (st.entries + st.filtered + st.returned === 0) {
        if (fresh === undefined) fresh = st;
        freshCount++;
      }
      if (latest === undefined || st.submitNs >= latest.submitNs) latest = st;
    }
    if (freshCount > 1) this.ambiguousOps++;
    return fresh ?? latest;
  }

  private removeFromStack(call: OpenCall): boolean {
    if (call.task < 0) return false;
    const stack = this.stacks.get(call.task);
    // Empty stacks stay: the same tasks come back, and re-creating them is garbage.
    return stack !== undefined && removeItem(stack, call);
  }

  /** Feed one probe record (entry, return or filtered), in time order. */
  add(rec: ProbeRecord): void {
    this.advance(rec.tsNs, rec.line);
    if (rec.ev === 'entry') this.entry(rec);
    else if (rec.ev === 'return') this.ret(rec);
    else this.filtered(rec);
    if (this.opts.observe?.inFlight !== undefined && rec.tsNs >= this.maxNs) this.opts.observe.inFlight(this.openCount, rec.tsNs);
  }

  private entry(rec: ProbeRecord): void {
    this.nEntries++;
    if (rec.inst === undefined && rec.task < 0) {
      this.warn('trace', rec.line, 'an entry record with "inst" or "task" (nothing else can pair it)', 'neither');
      return;
    }
    const op = this.matchOp(rec);
    const call: OpenCall = { tsNs: rec.tsNs, task: rec.task, op, line: rec.line, inst: rec.inst, prev: null, next: null };
    if (rec.inst !== undefined) {
      const old = this.inst.get(rec.inst);
      if (old !== undefined) {
        // The id came back while we still held it open: its return was never recorded.
        this.dupInst++;
        this.warn('trace', rec.line, `an instance id not already open (line ${old.line} opened it, no return seen)`, JSON.stringify(rec.inst));
        this.removeFromStack(old);
        this.openCount--;
        unlinkCall(old);
      }
      this.inst.set(rec.inst, call);
    }
    if (rec.task >= 0) {
      const stack = this.stacks.get(rec.task);
      if (stack === undefined) this.stacks.set(rec.task, [call]);
      else stack.push(call);
    }
    this.openCount++;
    if (this.openCount > MAX_OPEN_CALLS) {
      const expected = `a trace whose entries are closed by returns (at most ${MAX_OPEN_CALLS} calls open at once)`;
      const got = `${this.openCount} calls open (the entry events of other functions, or no return event in the trace?)`;
      if (this.opts.fail) this.opts.fail('trace', rec.line, expected, got);
      throw new Error(`line ${rec.line}: expected ${expected}; got ${got}`);
    }
    if (this.openCount > this.hw) {
      this.hw = this.openCount;
      this.hwAt = rec.tsNs;
      this.hwLine = rec.line;
    }
    if (op !== undefined) {
      op.entries++;
      op.open++;
      const head = op.calls;
      if (head !== null) {
        call.next = head;
        head.prev = call;
      }
      op.calls = call;
    } else if (this.hasOps) {
      this.foreign++;
    }
  }

  private ret(rec: ProbeRecord): void {
    this.nReturns++;
    let call: OpenCall | undefined;
    if (rec.inst !== undefined) {
      call = this.inst.get(rec.inst);
      if (call !== undefined) {
        this.inst.delete(rec.inst);
        this.removeFromStack(call);
        this.byInstance++;
      }
    } else if (rec.task >= 0) {
      const stack = this.stacks.get(rec.task);
      if (stack !== undefined) {
        if (stack.length > 1) this.ambiguous++;
        call = stack.pop();
        if (call !== undefined) {
          if (call.inst !== undefined) this.inst.delete(call.inst);
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
    const d = rec.tsNs - call.tsNs;
    if (d < 0) {
      this.negative++;
      this.warn('trace', rec.line, `a return after its entry (line ${call.line})`, `${d} ns`);
    } else if (!this.hasOps || (call.op !== undefined && call.op.eligible)) {
      this.hist.add(d);
      this.opts.observe?.duration?.(d);
    }
    if (call.op !== undefined) {
      call.op.open--;
      call.op.returned++;
      unlinkCall(call);
    } else if (this.hasOps) {
      this.foreign++;
    }
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
      while (this.pending !== undefined) {
        this.activate(this.pending);
        this.pending = this.pullOp();
      }
      for (const st of [...this.activeById.values()]) this.retire(st, stopNs);
      for (const st of [...this.activeNoId]) this.retire(st, stopNs);
      // Duplicated ids leave the shadowed state only in the per-task index or the heap.
      for (const list of [...this.activeByTask.values()]) for (const st of [...list]) if (st.active) this.retire(st, stopNs);
      let st = this.heap.pop();
      while (st !== undefined) {
        if (st.active) this.retire(st, stopNs);
        st = this.heap.pop();
      }
    }
    const counters = this.counterDelta();
    const identity = this.hasOps ? this.identity(counters.delta) : undefined;
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
      },
      // Returns without entries mean calls were outstanding before capture began: the mark is a floor.
      highWater: { value: this.hw, atNs: this.hwAt, line: this.hwLine, lowerBound: this.orphans > 0 },
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
        withEntry: this.withEntry,
      };
    }
    return result;
  }

  private identity(delta: number | undefined): Identity {
    const c = this.cls;
    const eligible = this.eligibleCount;
    let inFlight: number | null;
    let missed: number | null;
    let notCovered: number | null;
    let unexplained: number | null;
    if (this.opts.semantics === 'instance') {
      // A missed call reaches no handler: it is among the operations without any record.
      inFlight = c.in_flight_at_stop;
      missed = delta === undefined ? null : Math.min(delta, c.no_probe_evidence);
      notCovered = missed === null ? null : c.no_probe_evidence - missed;
      unexplained = c.completed_without_return;
    } else {
      // The entry kprobe fires for every call: a missed call shows an entry event and no return.
      notCovered = c.no_probe_evidence;
      if (delta === undefined) {
        missed = null;
        inFlight = null;
        unexplained = null;
      } else {
        missed = Math.min(delta, c.completed_without_return + c.in_flight_at_stop);
        const missedDone = Math.min(missed, c.completed_without_return);
        unexplained = c.completed_without_return - missedDone;
        inFlight = c.in_flight_at_stop - (missed - missedDone);
      }
    }
    const parts = [c.returned, c.filtered, inFlight, missed, notCovered, unexplained];
    const known = parts.every((p) => p !== null);
    const sum = parts.reduce<number>((s, p) => s + (p ?? 0), 0);
    return {
      eligible,
      returned: c.returned,
      filtered: c.filtered,
      in_flight_at_stop: inFlight,
      capacity_missed: missed,
      not_covered: notCovered,
      unexplained,
      balanced: known ? sum === eligible : null,
    };
  }
}
