import { bpfReturnPoolOf, type BpfReturnAttach } from '../kernel/history.js';
import { poolFor, type ProbeInterface } from '../kernel/maxactive.js';
import { bool, num, str, type Derivation, type Inputs } from './derive.js';

/**
 * How a BPF program sits on the return (probe.bpf_attach), where the interface is one a BPF
 * program can be: bpftrace, a BPF link, another tool, or not stated. A kprobe_multi link and a
 * BPF trampoline (fexit) are not kretprobes: their pool, or its absence, is theirs
 * (bpfReturnPoolOf, kernel-history.md §3, §4). A perf kretprobe is the interface's own default.
 */
export const bpfAttach = (i: Inputs): 'kprobe-multi' | 'fexit' | undefined => {
  const iface = str(i, 'probe.interface');
  if (iface !== undefined && iface !== 'bpftrace' && iface !== 'bpf-link' && iface !== 'other') return undefined;
  const how = str(i, 'probe.bpf_attach') as BpfReturnAttach | undefined;
  return how === 'kprobe-multi' || how === 'fexit' ? how : undefined;
};

/**
 * The interface is one a BPF program can be (bpftrace, a BPF link, another tool) and the case does
 * not say how it sits on the return: a perf kretprobe (the default pool), a kprobe_multi link (its
 * own pool, none from 6.14) and a BPF trampoline (no pool, no kretprobe counters) are each a
 * completion. Every derivation that reads probe.bpf_attach answers only what all three agree on
 * (issue 20: the oracle found the unstated attach read as a perf kretprobe, while a fexit completion
 * of the same case was fully observed). The readers state it where the tool fixes it (bpftrace's
 * `kretprobe:` on one function is a perf kretprobe; bpftool link show names the link).
 */
export const bpfAttachOpen = (i: Inputs): boolean => {
  // An entry probe has no return to sit on (and no completion gives it one: src/engine/domains.ts).
  if (str(i, 'probe.kind') === 'entry') return false;
  const iface = str(i, 'probe.interface');
  return (iface === 'bpftrace' || iface === 'bpf-link' || iface === 'other') && str(i, 'probe.bpf_attach') === undefined;
};

/**
 * Whether the probe under investigation is an entry probe (probe.kind: entry): a kprobe, a tracefs
 * `p:` event, bpftrace's or ply's `kprobe:`, bcc's attach_kprobe. It takes no instance: only a
 * kretprobe's pre-handler takes one from the pool (kernel-facts.md §2), and a kprobe's only miss
 * count is kp.nmissed, re-entry (kernel-facts.md §4). Nothing returns through it, so no return of
 * it is expected. An unstated kind is the return probe this format describes. Every derivation
 * that treats an entry probe apart reads this one answer (with `probe.kind` among its inputs).
 */
export const isEntryProbe = (i: Inputs): boolean => str(i, 'probe.kind') === 'entry';

/** The pool the interface makes of the request on this kernel, when that is a number (none for an entry probe). */
const interfacePool = (i: Inputs): number | undefined => {
  const o = outcome(i);
  return o?.kind === 'value' ? o.value : undefined;
};

const outcome = (i: Inputs) => {
  if (isEntryProbe(i)) return undefined;
  const attach = bpfAttach(i);
  if (attach !== undefined) {
    const pool = bpfReturnPoolOf(attach, { defaultPool: undefined, fprobeWithoutPool: bool(i, 'kernel.fprobe_without_pool'), possibleCpus: num(i, 'kernel.possible_cpu_count'), functions: num(i, 'probe.bpf_functions') });
    return typeof pool === 'number' ? { kind: 'value' as const, value: pool, rule: 'a kprobe_multi link: one pool of functions x 2 x possible CPUs' } : undefined;
  }
  const iface = str(i, 'probe.interface') as ProbeInterface | undefined;
  if (iface === undefined || bpfAttachOpen(i)) return undefined;
  if (iface === 'fprobe' && bool(i, 'kernel.fprobe_without_pool') !== false) return undefined;
  const requested = num(i, 'probe.maxactive.requested');
  // Where the caller can ask for a number, an unstated request is no pool at all (issue 20): a
  // tracefs `r:` (the default) and `r<N>:`, a module's rp.maxactive of 0 and of N, an fprobe event's
  // `f:` and `fN:` (6.5-6.13) are all completions of it. bpftrace, perf probe and a BPF link set
  // none, so with none stated theirs is the kernel default (src/kernel/maxactive.ts).
  if ((iface === 'tracefs' || iface === 'module' || iface === 'fprobe') && requested === undefined) return undefined;
  return poolFor(iface, requested, num(i, 'capacity.default_maxactive'), num(i, 'kernel.possible_cpu_count'));
};
const OUTCOME_INPUTS = ['probe.kind', 'probe.interface', 'probe.maxactive.requested', 'capacity.default_maxactive', 'kernel.possible_cpu_count', 'kernel.fprobe_without_pool', 'probe.bpf_attach', 'probe.bpf_functions'] as const;

/** The instance pool: its size in force, where it came from, what the interface refuses. */
export const CAPACITY: readonly Derivation[] = [
  {
    name: 'probe.is_entry', type: 'boolean', basis: 'kernel-facts.md §2, §4 (only a kretprobe takes an instance; a kprobe counts kp.nmissed alone)',
    description: 'the case is about an entry probe (probe.kind: entry): no instance pool, no return expected; false for the return probe the format describes, stated or not',
    inputs: ['probe.kind'],
    derive: (i) => isEntryProbe(i),
  },
  {
    name: 'capacity.overlap_experiment', type: 'boolean', basis: 'Propose a controlled overlap fixture',
    description: "an A/B run showed the loss follows the overlap (concurrency.loss_follows_overlap): returns lost in this run came back with fewer calls inside the function at once or a larger pool, so this run's demand was above its pool; false when no such experiment is reported, which bounds nothing (as an unknown date does not)",
    inputs: ['concurrency.loss_follows_overlap'],
    derive: (i) => bool(i, 'concurrency.loss_follows_overlap') === true,
  },
  {
    name: 'capacity.pool_drained', type: 'boolean', basis: 'Read missed and filtered cases separately; kernel-facts.md §2; kernel-history.md §0 (an entry handler that rejects leaks the instance before 3.2.6)',
    description: "the probe went silent for good until a new registration (concurrency.loss_until_reregistration): registered and armed, it ran not even its entry handler for any later call, which only an empty pool does for every call (the pre-handler counts a pool miss and skips the entry handler), so its pool ran dry and stayed dry (leaked or held instances); false when no such loss is reported, which bounds nothing",
    inputs: ['concurrency.loss_until_reregistration'],
    derive: (i) => bool(i, 'concurrency.loss_until_reregistration') === true,
  },
  {
    name: 'capacity.request_rejected', type: 'boolean', basis: 'kernel-notes.md (r0:, r9999: rejected)',
    description: 'the interface refuses the requested maxactive (tracefs: r0 or more than 4096; an fprobe event: any fN: from 6.14)',
    inputs: ['probe.registration.result', 'probe.interface', 'probe.maxactive.requested', 'kernel.fprobe_without_pool'],
    derive: (i) => {
      // Only tracefs refuses a number outright, whatever the case says the registration gave; and
      // from 6.14 an fprobe event refuses any fN: (a2224559cbba, trace_fprobe BAD_MAXACT).
      const iface = str(i, 'probe.interface');
      const requested = num(i, 'probe.maxactive.requested');
      if (iface === 'fprobe') {
        if (requested === undefined) return str(i, 'probe.registration.result') === 'ok' ? false : undefined;
        if (requested <= 0) return false;
        return bool(i, 'kernel.fprobe_without_pool');
      }
      if (iface !== undefined && iface !== 'tracefs') return false;
      if (requested === undefined) return str(i, 'probe.registration.result') === 'ok' ? false : undefined;
      if (iface === undefined) return undefined;
      return poolFor('tracefs', requested, undefined, undefined).kind === 'rejected';
    },
  },
  {
    name: 'capacity.request_rejection', type: 'string', basis: 'kernel-facts.md §6',
    description: 'the reason the interface gives for refusing the request',
    inputs: ['capacity.request_rejected', 'probe.maxactive.requested', 'probe.interface'],
    derive: (i) => {
      if (i['capacity.request_rejected'] !== true) return undefined;
      if (str(i, 'probe.interface') === 'fprobe') return 'Invalid maxactive number: fprobe events take no fN: from 6.14 (a2224559cbba, no instance pool)';
      const o = poolFor('tracefs', num(i, 'probe.maxactive.requested'), undefined, undefined);
      return o.kind === 'rejected' ? o.reason : undefined;
    },
  },
  {
    name: 'capacity.effective_maxactive', type: 'number', basis: 'kernel-facts.md §1, §6; kernel-history.md §2',
    description: 'the pool size in force: as read back, else what the interface makes of the request on this kernel',
    inputs: ['probe.maxactive.effective', ...OUTCOME_INPUTS],
    derive: (i) => {
      // An entry probe has no pool; a figure given for it is constraints/entry-probe-has-no-pool's.
      if (isEntryProbe(i)) return undefined;
      return num(i, 'probe.maxactive.effective') ?? interfacePool(i);
    },
  },
  {
    name: 'capacity.read_back_differs', type: 'boolean', basis: 'kernel-facts.md §1, §6; kernel-history.md §2',
    description: 'the pool size read back differs from what the interface makes of the request on this kernel (the default when nothing was requested, or a perf kretprobe, which has no way to ask for one): one of them is wrong (constraints/read-back-pool-matches-interface); unknown while either is',
    inputs: ['probe.maxactive.effective', ...OUTCOME_INPUTS],
    derive: (i) => {
      const readBack = num(i, 'probe.maxactive.effective');
      const made = interfacePool(i);
      return readBack === undefined || made === undefined ? undefined : readBack !== made;
    },
  },
  {
    name: 'capacity.has_pool', type: 'boolean', basis: 'kernel-history.md §3, §4 (4346ba160409, a2224559cbba); kernel-facts.md §2, §4 (only a kretprobe takes an instance)',
    description: 'the return side takes an instance from a fixed pool: every kretprobe; an fprobe or a kprobe_multi link only before 6.14 (from 6.14 its exits run on the function-graph shadow stack); never a BPF trampoline (fexit), never an entry probe (probe.kind: entry, a kprobe takes no instance)',
    inputs: ['probe.kind', 'probe.interface', 'kernel.fprobe_without_pool', 'probe.bpf_attach'],
    derive: (i) => {
      if (isEntryProbe(i)) return false;
      const attach = bpfAttach(i);
      if (attach === 'fexit') return false;
      if (attach === 'kprobe-multi') {
        const none = bool(i, 'kernel.fprobe_without_pool');
        return none === undefined ? undefined : !none;
      }
      const iface = str(i, 'probe.interface');
      if (iface === undefined || iface === 'other' || bpfAttachOpen(i)) return undefined;
      if (iface !== 'fprobe') return true;
      const without = bool(i, 'kernel.fprobe_without_pool');
      return without === undefined ? undefined : !without;
    },
  },
  {
    name: 'capacity.demand_peak', type: 'number', floor: true, basis: 'Separate in-flight calls from CPUs; Propose a controlled overlap fixture',
    description: 'a floor on the most calls inside the function at once, admitted or not: the largest of the demand a separate entry event measured, the accepted high-water mark (accepted calls are inside too), and every gated call of a fixture whose overlap was verified',
    inputs: ['concurrency.observed_demand_high_water', 'concurrency.observed_high_water', 'fixture.gated', 'fixture.overlap_verified', 'ledger.eligible'],
    derive: (i) => {
      const gated = bool(i, 'fixture.gated') === true && bool(i, 'fixture.overlap_verified') === true ? num(i, 'ledger.eligible') : undefined;
      const known = [num(i, 'concurrency.observed_demand_high_water'), num(i, 'concurrency.observed_high_water'), gated].filter((x): x is number => x !== undefined);
      return known.length ? Math.max(...known) : undefined;
    },
  },
  {
    name: 'capacity.pool_excess', type: 'number', floor: true, basis: 'Separate in-flight calls from CPUs; Read missed and filtered cases separately',
    description: 'calls beyond the pool at the demand peak that cannot have held an instance: demand peak less the pool less the calls the entry handler filtered (a filtered call holds none while it runs); each is a pool miss',
    inputs: ['capacity.has_pool', 'capacity.effective_maxactive', 'capacity.demand_peak', 'accounting.filtered'],
    derive: (i) => {
      if (bool(i, 'capacity.has_pool') === false) return 0;
      const pool = num(i, 'capacity.effective_maxactive');
      const peak = num(i, 'capacity.demand_peak');
      const f = num(i, 'accounting.filtered');
      return pool === undefined || peak === undefined || f === undefined ? undefined : Math.max(0, peak - pool - f);
    },
  },
  {
    name: 'capacity.pool_short', type: 'boolean', basis: 'Separate in-flight calls from CPUs; Read missed and filtered cases separately',
    description: 'the pool is too small for the demand: more calls were inside the function at once than it holds, or an A/B run shows the loss follows the overlap, or the probe went silent for good until registered again (capacity.pool_drained) (true); a measured demand stayed within it, or there is no pool (false); a demand that is only a floor (returns without an entry) cannot show the pool was enough',
    inputs: ['capacity.has_pool', 'capacity.pool_excess', 'capacity.effective_maxactive', 'concurrency.observed_demand_high_water', 'ledger.returns_without_entry', 'capacity.overlap_experiment', 'capacity.pool_drained'],
    derive: (i) => {
      if (bool(i, 'capacity.has_pool') === false) return false;
      const excess = num(i, 'capacity.pool_excess');
      if (excess !== undefined && excess > 0) return true;
      // A probe that went silent for good until it was registered again: every later call found the
      // pool empty (kernel-facts.md §2), whatever the demand measured: leaked instances (an entry
      // handler's rejection before 3.2.6, kernel-history.md §0) hold no call inside the function.
      if (bool(i, 'capacity.pool_drained') === true) return true;
      // Only a measurement of every caller (an entry event) shows the pool was enough; a floor does not.
      const pool = num(i, 'capacity.effective_maxactive');
      const measured = num(i, 'concurrency.observed_demand_high_water');
      const floor = num(i, 'ledger.returns_without_entry');
      if (pool !== undefined && measured !== undefined && measured <= pool && floor === 0) return false;
      // The article's fixture as an experiment (Propose a controlled overlap fixture): returns lost
      // while more calls were held inside the function, none lost with fewer held or a larger pool,
      // nothing else changed. Of the ways a return goes unseen only the pool depends on how many
      // calls hold an instance at once, so this run's demand was above its pool, its size unknown.
      // A measurement that says otherwise is constraints/overlap-experiment-fits-pool's to name.
      return bool(i, 'capacity.overlap_experiment') === true ? true : undefined;
    },
  },
  {
    name: 'capacity.uses_default', type: 'boolean', basis: 'Separate in-flight calls from CPUs',
    description: 'the pool size came from the kernel default, not from the caller model',
    inputs: ['concurrency.capacity_basis', 'probe.maxactive.requested', 'probe.interface'],
    derive: (i) => {
      const basis = str(i, 'concurrency.capacity_basis');
      if (basis !== undefined) return basis === 'default';
      const requested = num(i, 'probe.maxactive.requested');
      const iface = str(i, 'probe.interface');
      return requested !== undefined && iface !== undefined ? requested <= 0 && iface !== 'tracefs' : undefined;
    },
  },
];
