import { bool, num, or, str, type Derivation, type Inputs } from './derive.js';

/**
 * Facts that decide whether the records can carry a conclusion at all: the probe was in place,
 * the handlers only observed, the records are complete and the test's own, the pairing binds
 * one call's entry to its return.
 */
/**
 * What proves the probe fired during the test: its own entry/return records, its return hits, or
 * a rise of its miss figure within one valid delta. A miss is counted only when the probe hit
 * (kernel-facts.md §2, §4: pre_handler_kretprobe found no instance, or the kprobe re-entered), so
 * a rising counter proves registration and arming as surely as a record does.
 */
export const FIRED = ['ledger.entries', 'ledger.returns', 'counters.delta.hits', 'counters.delta.column'] as const;
const fired = (i: Inputs) => FIRED.some((k) => (num(i, k) ?? 0) > 0);

export const TRUST: readonly Derivation[] = [
  {
    name: 'probe.was_armed', type: 'boolean', basis: 'Establish the probe’s actual scope',
    description: 'the probe was live during the test: proven by entry/return records, return hits or a miss-counter rise within the test, else as stated',
    inputs: ['probe.armed', ...FIRED],
    derive: (i) => (fired(i) ? true : bool(i, 'probe.armed')),
  },
  {
    name: 'probe.registered', type: 'boolean', basis: 'Establish the probe’s actual scope',
    description: 'the return probe was registered: the result says ok, or its own records, return hits or miss-counter rise prove it (a stated error wins over records)',
    inputs: ['probe.registration.result', ...FIRED],
    derive: (i) => {
      const r = str(i, 'probe.registration.result');
      if (r !== undefined) return r === 'ok';
      return fired(i) ? true : undefined;
    },
  },
  {
    name: 'probe.handlers_observational', type: 'boolean', basis: 'Establish the probe’s actual scope (keep handlers observational)',
    description: "the handlers neither sleep, nor take a blocking lock, nor wait for I/O (the kernel's own tracefs/perf handlers and BPF programs cannot)",
    inputs: ['probe.interface', 'probe.handler.may_sleep', 'probe.handler.blocking_locks', 'probe.handler.does_io'],
    derive: (i) => {
      const iface = str(i, 'probe.interface');
      if (iface === 'tracefs' || iface === 'perf-probe' || iface === 'bpftrace' || iface === 'bpf-link' || iface === 'fprobe') return true;
      const bad = or(bool(i, 'probe.handler.may_sleep'), bool(i, 'probe.handler.blocking_locks'), bool(i, 'probe.handler.does_io'));
      return bad === undefined ? undefined : !bad;
    },
  },
  {
    name: 'ledger.return_records_complete', type: 'boolean', basis: 'Establish the probe’s actual scope (unrelated lost observations); kernel-notes.md',
    description: "no return record was lost: no trace events overwritten, or the kernel's own return-hit count equals the return records",
    inputs: ['ledger.lost_events', 'counters.delta.hits', 'ledger.returns'],
    derive: (i) => {
      const h = num(i, 'counters.delta.hits');
      const r = num(i, 'ledger.returns');
      if (h !== undefined && r !== undefined && h === r) return true;
      const l = num(i, 'ledger.lost_events');
      return l === undefined ? undefined : l === 0;
    },
  },
  {
    name: 'ledger.records_clean', type: 'boolean', basis: 'Build an independent operation ledger; kernel-notes.md (the observer pollutes its own ledger)',
    description: "the records are complete and all the test's own: no lost return record, no foreign record mixed in",
    inputs: ['ledger.return_records_complete', 'ledger.foreign_records'],
    derive: (i) => {
      const f = num(i, 'ledger.foreign_records');
      const c = bool(i, 'ledger.return_records_complete');
      if (f !== undefined && f > 0) return false;
      if (c === false) return false;
      return f === 0 && c === true ? true : undefined;
    },
  },
  {
    name: 'ledger.pairing_sound', type: 'boolean', basis: 'Build an independent operation ledger (a task identifier alone may be ambiguous; no shared global timestamp)',
    description: "each return is bound to its own call's entry: per-instance data or task and depth; task id alone only without nesting or ambiguous pairs; never a global timestamp",
    inputs: ['ledger.identity', 'concurrency.recursion_depth', 'ledger.ambiguous_pairs'],
    derive: (i) => {
      const id = str(i, 'ledger.identity');
      if (id === 'instance-data' || id === 'task-and-depth') return true;
      if (id === 'global-timestamp' || id === 'none') return false;
      if (id !== 'task-only') return undefined;
      const depth = num(i, 'concurrency.recursion_depth');
      const amb = num(i, 'ledger.ambiguous_pairs');
      if ((depth !== undefined && depth > 1) || (amb !== undefined && amb > 0)) return false;
      return depth !== undefined && amb !== undefined ? true : undefined;
    },
  },
];
