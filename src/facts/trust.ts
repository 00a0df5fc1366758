import { bpfAttach, bpfAttachOpen, isEntryProbe } from './capacity.js';
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

/**
 * Which channels can lose a record of this probe, each with its known loss: trace events always;
 * printk where a module may write its records with printk (unless its handlers do not print); a
 * tracer's own per-CPU buffers (perf, BPF rings) for the interfaces that read through them; a BPF
 * program's runs skipped for recursion (5.12, kprobe programs from 6.7). A loss on a channel this
 * probe does not write through hides none of its records.
 */
function recordChannels(i: Inputs): Array<[number | undefined, boolean | undefined]> {
  const [events, printk, overruns, recursion] = ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen'].map((k) => num(i, k));
  const iface = str(i, 'probe.interface');
  // With the interface unknown, whether a channel is this probe's is unknown too (a completion
  // may make it a module, whose records no tracer buffer carries, or a tracefs event, which
  // prints nothing): a loss there may be one of its records, and read as one it was taken back.
  const printkApplies = iface === undefined ? undefined : iface === 'module' && bool(i, 'probe.handler.heavy_printk') !== false;
  // Another tool is a BPF program when the case says how it sits on the return; unsaid, it may be
  // one (src/facts/capacity.ts bpfAttachOpen): whether its channels apply is then unknown.
  const bpf: boolean | undefined = iface === 'bpftrace' || iface === 'bpf-link' || iface === 'fprobe' || bpfAttach(i) !== undefined || (iface === 'other' && str(i, 'probe.bpf_attach') !== undefined) ? true : iface === 'other' && bpfAttachOpen(i) ? undefined : false;
  // Another tool (ply, a bcc script, an agent) reads its records through buffers of its
  // own, BPF program or not: their overruns are its records lost.
  const overrunsApplies = iface === undefined ? undefined : iface === 'perf-probe' || iface === 'other' ? true : bpf;
  const recursionApplies = iface === undefined ? undefined : bpf;
  return [[events, true], [printk, printkApplies], [overruns, overrunsApplies], [recursion, recursionApplies]];
}

export const TRUST: readonly Derivation[] = [
  {
    name: 'probe.was_armed', type: 'boolean', basis: 'Establish the probe’s actual scope',
    description: 'the probe was live during the test: proven by entry/return records, return hits or a miss-counter rise within the test, else as stated',
    inputs: ['probe.armed', ...FIRED],
    derive: (i) => (fired(i) ? true : bool(i, 'probe.armed')),
  },
  {
    name: 'probe.registered', type: 'boolean', basis: 'Establish the probe’s actual scope',
    description: 'the return probe was registered: the result says ok, or its own records, return hits or miss-counter rise prove it (a stated error wins over records); not registered when nothing proves it and the target is one the kernel refuses a probe on (blacklisted, or removed before this kernel)',
    inputs: ['probe.registration.result', ...FIRED, 'coverage.blacklisted', 'coverage.target_removed'],
    derive: (i) => {
      const r = str(i, 'probe.registration.result');
      if (r !== undefined) return r === 'ok';
      if (fired(i)) return true;
      // register_kprobe refuses a blacklisted address (EINVAL) and a symbol the kernel lacks
      // (ENOENT), kernel-facts.md: with no evidence of a registration, there was none. (Evidence
      // of one beside such a target is the contradiction constraints/blacklisted-not-registered
      // or constraints/removed-target-not-registered names.)
      return bool(i, 'coverage.blacklisted') === true || bool(i, 'coverage.target_removed') === true ? false : undefined;
    },
  },
  {
    name: 'probe.handlers_observational', type: 'boolean', basis: 'Establish the probe’s actual scope (keep handlers observational)',
    description: "the handlers neither sleep, nor take a blocking lock, nor wait for I/O (the kernel's own tracefs/perf handlers and BPF programs cannot)",
    inputs: ['probe.interface', 'probe.handler.may_sleep', 'probe.handler.blocking_locks', 'probe.handler.does_io', 'probe.bpf_attach'],
    derive: (i) => {
      const iface = str(i, 'probe.interface');
      if (iface === 'tracefs' || iface === 'perf-probe' || iface === 'bpftrace' || iface === 'bpf-link' || iface === 'fprobe' || bpfAttach(i) !== undefined) return true;
      const bad = or(bool(i, 'probe.handler.may_sleep'), bool(i, 'probe.handler.blocking_locks'), bool(i, 'probe.handler.does_io'));
      // Another tool that may be a BPF program (its attach unsaid) has handlers that cannot block in
      // those completions: a blocking handler stated for it settles nothing.
      if (bad === true && bpfAttachOpen(i)) return undefined;
      return bad === undefined ? undefined : !bad;
    },
  },
  {
    name: 'probe.interface_may_filter', type: 'boolean', basis: 'kernel-facts.md §3 (a tracefs return event\'s entry handler rejects a call only in an unregistration race)',
    description: "the interface lets the user's code reject a call at entry: false for a BPF trampoline (fexit) and for a tracefs, perf probe or bpftrace return probe (the kernel's own trace_kprobe: no entry handler before 6.10, one that only stores $argN from 6.10); unknown for a module, a BPF link (a kprobe session's entry program may) or another tool",
    inputs: ['probe.interface', 'probe.bpf_attach'],
    derive: (i) => {
      const iface = str(i, 'probe.interface');
      // A BPF trampoline runs the program after the function returned: nothing at entry decides it.
      if (bpfAttach(i) === 'fexit') return false;
      return iface === 'tracefs' || iface === 'perf-probe' || iface === 'bpftrace' ? false : undefined;
    },
  },
  {
    name: 'ledger.observations_lost', type: 'number', floor: true, basis: 'Establish the probe’s actual scope (heavy printk can introduce unrelated lost observations); kernel-history.md §3 (recursion_misses)',
    description: 'observations known lost, whatever the channel: trace events overwritten, printk records the log dropped, tracer buffer overruns, BPF program runs skipped for recursion (the known ones summed; unknown when none is known)',
    inputs: ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen'],
    derive: (i) => {
      const known = ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen'].map((k) => num(i, k)).filter((x): x is number => x !== undefined);
      return known.length ? known.reduce((a, b) => a + b, 0) : undefined;
    },
  },
  {
    name: 'ledger.return_records_complete', type: 'boolean', basis: 'Establish the probe’s actual scope (unrelated lost observations); kernel-notes.md',
    description: "no return record was lost (an entry probe: none of its records): the kernel's own return-hit count equals the return records, or every channel that can lose one lost none (trace events always; printk drops where a module's handler may print its records; recursion misses for a BPF program)",
    inputs: ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen', 'probe.interface', 'probe.bpf_attach', 'probe.handler.heavy_printk', 'counters.source', 'counters.delta.hits', 'ledger.returns', 'ledger.eligible', 'ledger.foreign_records', 'probe.kind', 'ledger.entries'],
    derive: (i) => {
      const h = num(i, 'counters.delta.hits');
      // An entry probe's records are its entry records (its profile line counts entry hits).
      const r = num(i, isEntryProbe(i) ? 'ledger.entries' : 'ledger.returns');
      // The return event's hit column (kprobe_profile only) counts every return its handler ran.
      if (str(i, 'counters.source') === 'kprobe_profile' && h !== undefined && r !== undefined && h === r) return true;
      // A return record for every eligible operation and none foreign: nothing lost can hide one.
      const e = num(i, 'ledger.eligible');
      if (r !== undefined && e !== undefined && r >= e && num(i, 'ledger.foreign_records') === 0) return true;
      const channels = recordChannels(i);
      if (channels.some(([x, applies]) => applies === true && x !== undefined && x > 0)) return false;
      // Three-valued (issue 20): a channel this probe writes through with its loss unknown may have
      // lost one; a loss on a channel that may be this probe's may have been one of its records.
      if (channels.some(([x, applies]) => applies !== false && (x === undefined || (applies === undefined && x > 0)))) return undefined;
      return true;
    },
  },
  {
    name: 'ledger.records_lost', type: 'number', basis: 'Establish the probe’s actual scope (unrelated lost observations); kernel-history.md §3 (recursion_misses)',
    description: "the probe's own records lost: the losses of the channels this probe writes through (trace events; printk where a module's handler may print its records; a tracer's buffers; a BPF program's recursion skips), summed; unknown while any of them is unknown (ledger.records_lost_known is the floor the known ones give)",
    inputs: ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen', 'probe.interface', 'probe.bpf_attach', 'probe.handler.heavy_printk'],
    // Issue 20 (the oracle found it): as a floor it read an unknown channel as 0, so "lost no more
    // records than calls are open" was concluded while a completion losing one more said otherwise.
    derive: (i) => {
      const channels = recordChannels(i).filter(([, applies]) => applies !== false);
      if (channels.some(([x, applies]) => x === undefined || (applies === undefined && x > 0))) return undefined;
      return channels.reduce((a, [x, applies]) => a + (applies === true ? (x as number) : 0), 0);
    },
  },
  {
    name: 'ledger.records_lost_known', type: 'number', floor: true, basis: 'Establish the probe’s actual scope (unrelated lost observations); kernel-history.md §3 (recursion_misses)',
    description: "a floor on the probe's own records lost: the known losses of those channels, summed (the total when every one is known); unknown when none of them is known. A comparison it passes holds whatever the unknown channels lost; one it fails waits for ledger.records_lost",
    inputs: ['ledger.lost_events', 'ledger.printk_dropped', 'ledger.buffer_overruns', 'counters.recursion_misses_seen', 'probe.interface', 'probe.bpf_attach', 'probe.handler.heavy_printk'],
    derive: (i) => {
      const known = recordChannels(i).filter(([x, applies]) => applies === true && x !== undefined).map(([x]) => x as number);
      return known.length ? known.reduce((a, b) => a + b, 0) : undefined;
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
