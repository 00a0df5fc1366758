import type { VerdictId } from '../case/schema.js';
import { bpfReturnPool, hasChange } from '../kernel/history.js';

/**
 * The lab's scenarios: the article's controlled overlap fixture ("Propose a controlled overlap
 * fixture") and the registration facts of kernel-notes.md, each a fresh registration in the guest.
 * `guest` is the name lab/guest/init.sh knows; one scenario may send several bundles.
 */
export interface LabScenario {
  name: string;
  /**
   * `tracefs`: kprobe_events on pipe_read; `module`: the lab module (lab/module/krtfix.c);
   * `bpftrace`: Debian's bpftrace on the module's gate, in a boot whose initramfs holds the tools.
   */
  kind: 'tracefs' | 'module' | 'bpftrace';
  /** Possible CPUs of the boot it needs (`-smp`). */
  smp: number;
  guest: string;
  bundles: string[];
  about: string;
}

export const LAB_SCENARIOS: readonly LabScenario[] = [
  { name: 'constrained', kind: 'tracefs', smp: 2, guest: 'constrained', bundles: ['constrained'], about: 'r2: return probe, three calls held at the gate, then released' },
  { name: 'adequate', kind: 'tracefs', smp: 2, guest: 'adequate', bundles: ['adequate'], about: 'the same with r8:' },
  { name: 'stopped', kind: 'tracefs', smp: 2, guest: 'stopped', bundles: ['stopped'], about: 'r8:, capture stopped (tracing_on 0) while gated, released after' },
  { name: 'default-smp2', kind: 'tracefs', smp: 2, guest: 'default', bundles: ['default-smp2'], about: 'r: without a number, 2 possible CPUs' },
  { name: 'default-smp8', kind: 'tracefs', smp: 8, guest: 'default', bundles: ['default-smp8'], about: 'r: without a number, 8 possible CPUs' },
  {
    name: 'failures',
    kind: 'tracefs',
    smp: 2,
    guest: 'failures',
    bundles: ['fail-missing-symbol', 'fail-blacklisted', 'fail-r0', 'fail-r9999'],
    about: 'rejected registrations: missing symbol, blacklisted do_int3, r0:, r9999:',
  },
  {
    name: 'fprobe',
    kind: 'tracefs',
    smp: 2,
    guest: 'fprobe',
    bundles: ['fprobe-f2', 'fprobe-default'],
    about: 'the overlap fixture through an fprobe exit event (f2:/f: ...%return in dynamic_events)',
  },
  ...(
    [
      ['mod-constrained', 'maxactive=2, four calls held at the gate: the third and fourth find no instance'],
      ['mod-adequate', 'maxactive=8, four calls held, released'],
      ['mod-default', 'maxactive=0 (the kernel default), four calls held: the effective pool read back'],
      ['mod-filtering', 'maxactive=8, the entry handler rejects the calls tagged skip (two of six)'],
      ['mod-filter-overflow', 'maxactive=2, one call filtered, four more: filtered and missed counted apart'],
      ['mod-recursion', 'maxactive=2, one task nests the target three deep'],
      ['mod-reenter', 'maxactive=8, the entry handler calls a helper that reaches the probed target'],
      ['mod-stopped', 'maxactive=8, three calls held, end snapshot taken before the release'],
      ['mod-reload', 'maxactive=2, the module reloaded between the start and end snapshots'],
      ['mod-maxactive-4097', 'maxactive=4097, one past the tracefs cap of 4096 (the C API sets none), four calls'],
      ['mod-data-size-4097', 'data_size=4097, past KRETPROBE_MAX_DATA_SIZE (4096): refused with E2BIG where the limit exists'],
      ['mod-blacklisted', 'the kretprobe on do_int3 (NOKPROBE_SYMBOL): refused'],
      ['mod-missing-symbol', 'the kretprobe on a symbol kallsyms does not have: refused'],
    ] as const
  ).map(([name, about]): LabScenario => ({ name, kind: 'module', smp: 2, guest: name, bundles: [name], about })),
  {
    name: 'bt-kretprobe',
    kind: 'bpftrace',
    smp: 2,
    guest: 'bt-kretprobe',
    bundles: ['bt-kretprobe'],
    about: `bpftrace kretprobe:krtfix_target with 12 callers held at the gate (more than the default pool), bpftool link/prog show while held`,
  },
  {
    name: 'bt-fexit',
    kind: 'bpftrace',
    smp: 2,
    guest: 'bt-fexit',
    bundles: ['bt-fexit'],
    about: 'bpftrace fexit:vfs_write (writes to krtfix/call only) under the same 12 held callers: a BPF trampoline, no instance pool',
  },
  {
    name: 'bt-multi',
    kind: 'bpftrace',
    smp: 2,
    guest: 'bt-multi',
    bundles: ['bt-multi'],
    about: 'bpftrace kretprobe:krtfix_* (two targets) under the same 12 held callers: a kprobe_multi link where the kernel has CONFIG_FPROBE',
  },
];

/** The module's traceable functions `kretprobe:krtfix_*` matches (krtfix_target, krtfix_helper). */
export const BT_MULTI_FUNCS = 2;

/** Callers the bpftrace scenario holds at the gate at once (BT_CALLS in lab/guest/init.sh). */
export const BT_CALLS = 12;

/** What the kernel is expected to show for one bundle (kernel-notes.md, observed on 6.12 and 6.1). */
export interface LabExpectation {
  verdict: VerdictId;
  /** Expected rules are left to the reference cases' `expected:` blocks. */
  returnHits?: number;
  returnMisses?: number;
  entryHits?: number;
  entries?: number;
  returns?: number;
  /** Effective maxactive read back from kprobe_events. */
  maxactive?: number;
  /** The error_log reason of a rejected registration. */
  errorReason?: string;
  /** The registration is rejected (implied by errorReason). */
  rejected?: boolean;
  /** The errno name register_kretprobe returned (module scenarios), as the module's log line says. */
  errno?: string;
  /** The module's own counters at the end snapshot (lab/module/krtfix.c debugfs `counters`). */
  module?: ModuleCounters;
  /** Rules that must fire (besides the verdict). */
  rules?: string[];
  /**
   * A bpftrace bundle: calls held at once (the module's truth), the returns bpftrace's kretprobe
   * saw (the default pool), and the link bpftool shows on krtfix_target: none (a perf event
   * attached by ioctl), a link without a `missed` field, or one whose missed is the true count.
   */
  bpftrace?: {
    calls: number;
    /** Undefined: not fixed on this kernel (see recursionIdentity). */
    returns: number | undefined;
    /** `Attaching N probes...`, when the expectation pins it. */
    attached?: number;
    /**
     * fexit: every held caller's return either ran the program or was skipped as a recursion
     * miss (`bpftool prog show` after the release): returns + recursion_misses = calls.
     */
    recursionIdentity?: boolean;
    /** The link on the target: none, or its type (`perf_event`, `kprobe_multi`, `tracing`) and `missed` (absent: no such field). */
    link: 'none' | { type: string; missed: number | undefined };
  };
  /** Case fields that vary by nature for this bundle on this kernel, besides drift.ts's own. */
  varying?: Array<{ path: string; why: string }>;
  /** Module probe records (probe.jsonl) of this registration: entry, return, filtered. */
  records?: { entry: number; return: number; filtered: number };
}

/** The lab module's counters the lab asserts (names as its debugfs `counters` file prints them). */
export interface ModuleCounters {
  nmissed: number;
  kp_nmissed: number;
  maxactive: number;
  calls: number;
  entries: number;
  returns: number;
  filtered: number;
}

/** What the lab knows of a kernel before booting it: enough to say what each scenario must show. */
export interface KernelTraits {
  /** Upstream version, [major, minor, patch]. */
  version: [number, number, number];
  /** CONFIG_PREEMPTION=y in the kernel's config; undefined when there is no config. */
  preemption: boolean | undefined;
  /** CONFIG_FPROBE_EVENTS=y: tracefs `f:` events (dynamic_events), 6.5 and later. */
  fprobeEvents: boolean | undefined;
  /** CONFIG_FPROBE=y: the fprobe API, which kprobe_multi BPF links are built on (5.18 and later). */
  fprobe?: boolean | undefined;
  /**
   * The preemption model it boots with (CONFIG_PREEMPT_NONE/VOLUNTARY/PREEMPT/LAZY): with `full`
   * or `lazy` kernel code, a BPF program included, can be preempted at any point.
   */
  preemptMode?: 'none' | 'voluntary' | 'full' | 'lazy' | undefined;
  /** The bpftrace the set-up put beside this kernel ([major, minor, patch]), if any. */
  bpftrace?: [number, number, number] | undefined;
}

const atLeast = (v: [number, number, number], w: [number, number, number]): boolean =>
  v[0] !== w[0] ? v[0] > w[0] : v[1] !== w[1] ? v[1] > w[1] : v[2] >= w[2];

/**
 * The pool a kretprobe gets for maxactive <= 0 (kernel-history.md §2): max(10, 2 x possible CPUs)
 * from 6.2 (and the 6.1.3 / 6.0.17 stable releases) or on a preemptible kernel, else the number of
 * possible CPUs. This is the lab's expectation, written down before the boot; the boot checks it.
 */
export function expectedDefaultMaxactive(k: KernelTraits, cpus: number): number | undefined {
  const v = k.version;
  const fixed = atLeast(v, [6, 2, 0]) || (v[0] === 6 && v[1] === 1 && v[2] >= 3) || (v[0] === 6 && v[1] === 0 && v[2] >= 17);
  if (fixed || k.preemption === true) return Math.max(10, 2 * cpus);
  if (k.preemption === false) return cpus;
  return undefined;
}

/** One module round: `calls` gated calls of depth 1 (or one call of `depth`), `filtered` tagged. */
function moduleRound(opts: { maxactive: number; calls: number; filtered?: number; depth?: number; firstFiltered?: boolean; held?: boolean; reenter?: boolean }): Omit<LabExpectation, 'verdict'> {
  const depth = opts.depth ?? 1;
  const instances = opts.calls * depth;
  const filtered = opts.filtered ?? 0;
  // Filtered calls take an instance and give it straight back; the rest hold theirs until the
  // release. A call that finds the pool empty is missed before the entry handler runs.
  const admitted = Math.min(instances - filtered, opts.maxactive);
  const missed = instances - filtered - admitted;
  const returns = opts.held ? 0 : admitted;
  return {
    maxactive: opts.maxactive,
    module: {
      nmissed: missed,
      kp_nmissed: opts.reenter ? admitted : 0,
      maxactive: opts.maxactive,
      calls: opts.calls,
      entries: admitted + filtered,
      returns,
      filtered,
    },
    records: { entry: admitted, return: returns, filtered },
  };
}

/**
 * What one bundle must show on one kernel. Where kernels differ the difference is the
 * expectation: mod-default follows `expectedDefaultMaxactive`, so 5.10 (not preemptible in
 * Debian's config, before the 6.2 change) misses where 6.x does not.
 */
export function expectationFor(bundle: string, k: KernelTraits, cpus = 2): LabExpectation | undefined {
  const fixed = LAB_EXPECTED[bundle];
  if (bundle === 'default-smp2' || bundle === 'default-smp8') {
    // `r:` gets the same default as register_kretprobe's maxactive <= 0.
    const eff = expectedDefaultMaxactive(k, cpus);
    if (eff === undefined) return undefined;
    if (eff >= 3) return { ...fixed, verdict: 'fully-observed', maxactive: eff };
    return { verdict: 'capacity-missed', maxactive: eff, returnHits: eff, returnMisses: 3 - eff, entryHits: 3, entries: 3, returns: eff };
  }
  if (fixed) return fixed;
  if (bundle === 'bt-kretprobe' || bundle === 'bt-fexit' || bundle === 'bt-multi') return bpftraceExpectation(bundle, k, cpus);
  if (bundle === 'fprobe-f2' || bundle === 'fprobe-default') {
    // kernel-history.md §4: fprobe exits had a rethook pool (fN:, default 2 x possible CPUs per
    // function) until 6.13; from 6.14 they run on the function-graph shadow stack, no pool, and
    // a maxactive number is rejected.
    // No tracefs file shows an fprobe's miss count, but the pooled f2: run holds three verified
    // callers at the gate against a pool of two: the third found no free node, a pool miss by
    // construction (issue 21, class c), so the missing return is capacity-missed without a counter.
    if (k.fprobeEvents !== true) return { verdict: 'setup-failure', rejected: true };
    const pooled = !atLeast(k.version, [6, 14, 0]);
    if (bundle === 'fprobe-f2') {
      if (!pooled) return { verdict: 'setup-failure', rejected: true, errorReason: 'Invalid maxactive number' };
      return { verdict: 'capacity-missed', maxactive: 2, entryHits: 3, entries: 3, returns: 2 };
    }
    // No counter is read, but every gated call has its entry and its return: a miss of any counter
    // would be another call's (a pool of 4 on 6.12, none from 6.14).
    return { verdict: 'fully-observed', entryHits: 3, entries: 3, returns: 3 };
  }
  switch (bundle) {
    case 'mod-constrained':
      return { verdict: 'capacity-missed', rules: ['counters/nmissed-rose'], ...moduleRound({ maxactive: 2, calls: 4 }) };
    case 'mod-adequate':
      return { verdict: 'fully-observed', ...moduleRound({ maxactive: 8, calls: 4 }) };
    case 'mod-default': {
      const eff = expectedDefaultMaxactive(k, cpus);
      if (eff === undefined) return undefined;
      const r = moduleRound({ maxactive: eff, calls: 4 });
      return { verdict: (r.module?.nmissed ?? 0) > 0 ? 'capacity-missed' : 'fully-observed', ...r };
    }
    case 'mod-filtering':
      return { verdict: 'filtered-by-design', rules: ['interpret/filtered-by-entry-handler'], ...moduleRound({ maxactive: 8, calls: 6, filtered: 2 }) };
    case 'mod-filter-overflow':
      return { verdict: 'capacity-missed', ...moduleRound({ maxactive: 2, calls: 5, filtered: 1 }) };
    case 'mod-recursion':
      return { verdict: 'capacity-missed', ...moduleRound({ maxactive: 2, calls: 1, depth: 3 }) };
    case 'mod-reenter':
      // The entry handler's own call into the target is the one re-entered (kp.nmissed, kernel-facts.md
      // §4); each of the three gated calls has its entry and its return record, so the misses are
      // of those nested calls, none of the test's: nothing of the test is missing.
      return { verdict: 'fully-observed', rules: ['counters/kprobe-nmissed-other-calls'], ...moduleRound({ maxactive: 8, calls: 3, reenter: true }) };
    case 'mod-stopped':
      return { verdict: 'still-in-flight', ...moduleRound({ maxactive: 8, calls: 3, held: true }) };
    case 'mod-maxactive-4097':
      // kernel-facts.md §1: register_kretprobe sets no upper limit (4096 is tracefs's cap only).
      return { verdict: 'fully-observed', ...moduleRound({ maxactive: 4097, calls: 4 }) };
    case 'mod-data-size-4097':
      // kernel-history.md: -E2BIG for data_size > 4096 from 5.16 and the stable 5.15.x. Observed:
      // Debian's 5.10.223 refuses it too (the limit reached the 5.10 stable series), so every
      // kernel of the lab refuses it; the model's first guess (5.10 accepts) was wrong.
      return { verdict: 'setup-failure', rejected: true, errno: 'E2BIG' };
    case 'mod-blacklisted':
      // check_kprobe_address_safe: a NOKPROBE_SYMBOL is refused with -EINVAL (kernel-facts.md §1).
      return { verdict: 'setup-failure', rejected: true, errno: 'EINVAL' };
    case 'mod-missing-symbol':
      // kprobe_lookup_name finds nothing: -ENOENT (kernel-facts.md §1).
      return { verdict: 'setup-failure', rejected: true, errno: 'ENOENT' };
    case 'mod-reload':
      // The second registration's round; the start snapshot is from the first one, so no delta:
      // the misses of this round cannot be counted from the snapshots. The gate still held three
      // verified callers against a pool of two, so one was missed (issue 21, class c).
      return { verdict: 'capacity-missed', rules: ['counters/epoch-changed'], ...moduleRound({ maxactive: 2, calls: 3 }) };
    default:
      return undefined;
  }
}

/**
 * What a bpftrace bundle must show (issue 22), from the release model in src/kernel/history.ts
 * (bpfReturnPool, hasChange): the returns the tracer sees with BT_CALLS callers held at once are
 * min(calls, pool), the link bpftool shows and its `missed`. The verdict is the paste's.
 */
/** A pool below the fixture's BT_CALLS callers, all held at once: pool misses, counted or not. */
const poolVerdict = (pool: number | null | undefined): VerdictId => (typeof pool === 'number' && BT_CALLS > pool ? 'capacity-missed' : 'insufficient-evidence');

function bpftraceExpectation(bundle: string, k: KernelTraits, cpus: number): LabExpectation | undefined {
  if (k.bpftrace === undefined) return undefined;
  const release = k.version.join('.');
  const seen = (pool: number | null | undefined): number | undefined => (pool === undefined ? undefined : pool === null ? BT_CALLS : Math.min(BT_CALLS, pool));
  if (bundle === 'bt-kretprobe') {
    // Observed: Debian's bpftrace 0.17 (bookworm) and 0.23 (trixie) attach a single kretprobe
    // with perf_event_open and an ioctl, no BPF link, so bpftool shows no `missed` on any release
    // (the first model, a libbpf perf link from 0.20, was wrong). With no counter at all the
    // paste cannot tell a miss from a call that never came back.
    const pool = bpfReturnPool('perf-kretprobe', release, { preemption: k.preemption, possibleCpus: cpus });
    const returns = seen(pool);
    if (returns === undefined || pool === undefined || pool === null) return undefined;
    // With no counter the paste alone cannot tell a miss from a call that never came back; with
    // the fixture's own count of its calls (all held at once, verified) beside it, more callers
    // than the default pool are pool misses, counted or not (issue 21, class c).
    return { verdict: poolVerdict(pool), rules: BT_CALLS > pool ? ['counters/nmissed-rose', 'capacity/pool-below-estimated-overlap'] : [], bpftrace: { calls: BT_CALLS, returns, attached: 1, link: 'none' } };
  }
  if (bundle === 'bt-fexit') {
    // A BPF trampoline: no instance pool, and the tracing link has no miss field
    // (bpf_link_info.tracing has none). But the program runs with migration, not preemption,
    // disabled (__bpf_prog_enter_recur): on a kernel that preempts kernel code (7.3: PREEMPT_LAZY)
    // a run preempted inside the program makes another return on that CPU skip it, counted only
    // as the program's recursion_misses. Observed on 7.3.4: 12 of 12 on an idle host, 6 of 12 at
    // load 8. So there the identity returns + recursion_misses = calls is the assertion and the
    // returns in the case vary; without involuntary kernel preemption every return is seen.
    const returns = seen(bpfReturnPool('fexit', release, {}));
    if (returns === undefined || k.preemptMode === undefined) return undefined;
    const preempts = k.preemptMode === 'full' || k.preemptMode === 'lazy';
    return {
      verdict: 'insufficient-evidence',
      bpftrace: { calls: BT_CALLS, returns: preempts ? undefined : returns, recursionIdentity: true, attached: 1, link: { type: 'tracing', missed: undefined } },
      ...(preempts ? { varying: [{ path: 'ledger.returns', why: 'fexit runs skipped as recursion misses under kernel preemption: how many depends on scheduling' }] } : {}),
    };
  }
  // bt-multi: a wildcard over BT_MULTI_FUNCS functions. With CONFIG_FPROBE bpftrace makes one
  // kprobe_multi link (fprobe's pool, or none from 6.14); without, one perf kretprobe per function.
  if (k.fprobe === undefined) return undefined;
  if (!k.fprobe) {
    const pool = bpfReturnPool('perf-kretprobe', release, { preemption: k.preemption, possibleCpus: cpus });
    const returns = seen(pool);
    if (returns === undefined || pool === undefined) return undefined;
    return { verdict: poolVerdict(pool), bpftrace: { calls: BT_CALLS, returns, attached: BT_MULTI_FUNCS, link: 'none' } };
  }
  const pool = bpfReturnPool('kprobe-multi', release, { possibleCpus: cpus, functions: BT_MULTI_FUNCS });
  const returns = seen(pool);
  const missedField = hasChange(release, 'bpfLinkMissed');
  if (returns === undefined || missedField === undefined) return undefined;
  const missed = missedField ? BT_CALLS - returns : undefined;
  // The paste has the link's missed at one instant only (no start, no epoch), so the count decides
  // nothing; the link's pool (functions x 2 x CPUs, bpftool's func_cnt) against the fixture's
  // callers does. From 6.14 there is no pool, and with returns counted but no entries the paste
  // leaves the rest open.
  return { verdict: poolVerdict(pool ?? undefined), bpftrace: { calls: BT_CALLS, returns, attached: 1, link: { type: 'kprobe_multi', missed } } };
}

export const LAB_EXPECTED: Readonly<Record<string, LabExpectation>> = {
  constrained: { verdict: 'capacity-missed', returnHits: 2, returnMisses: 1, entryHits: 3, entries: 3, returns: 2, maxactive: 2 },
  adequate: { verdict: 'fully-observed', returnHits: 3, returnMisses: 0, entryHits: 3, entries: 3, returns: 3, maxactive: 8 },
  // Counters keep counting while the ring buffer is off: three returns counted, none recorded.
  stopped: { verdict: 'still-in-flight', returnHits: 3, returnMisses: 0, entryHits: 3, entries: 3, returns: 0, maxactive: 8 },
  'default-smp2': { verdict: 'fully-observed', returnHits: 3, returnMisses: 0, entryHits: 3, entries: 3, returns: 3, maxactive: 10 },
  'default-smp8': { verdict: 'fully-observed', returnHits: 3, returnMisses: 0, entryHits: 3, entries: 3, returns: 3, maxactive: 16 },
  'fail-missing-symbol': { verdict: 'setup-failure', errorReason: 'Invalid probed address or symbol' },
  'fail-blacklisted': { verdict: 'setup-failure', errorReason: 'Failed to register probe event' },
  'fail-r0': { verdict: 'setup-failure', errorReason: 'Invalid maxactive number' },
  'fail-r9999': { verdict: 'setup-failure', errorReason: 'Maxactive is too big' },
};

/** Scenarios by name, in catalogue order; unknown names are reported by the caller. */
export function selectScenarios(names: string[] | undefined): { selected: LabScenario[]; unknown: string[] } {
  if (!names || names.length === 0) return { selected: [...LAB_SCENARIOS], unknown: [] };
  const unknown = names.filter((n) => !LAB_SCENARIOS.some((s) => s.name === n));
  return { selected: LAB_SCENARIOS.filter((s) => names.includes(s.name)), unknown };
}

/**
 * The scenarios a kernel of `arch` runs: every one on amd64 (absent: the host's architecture);
 * the module scenarios only on arm64 (issue 22: a second architecture, the article's fixture
 * exactly, within the CI's time budget; its tracefs and bpftrace rows are not part of the lab).
 */
export function scenariosForArch<S extends Pick<LabScenario, 'kind'>>(scenarios: readonly S[], arch: 'amd64' | 'arm64' | undefined): S[] {
  return arch === 'arm64' ? scenarios.filter((s) => s.kind === 'module') : [...scenarios];
}

/**
 * One boot per CPU count: scenarios that share `-smp` share a boot (tracefs and module alike);
 * the bpftrace scenarios get a boot of their own, whose initramfs carries the tools (200 MB+).
 */
export function planBoots(scenarios: LabScenario[]): Array<{ smp: number; tools: boolean; scenarios: LabScenario[] }> {
  const byKey = new Map<string, { smp: number; tools: boolean; scenarios: LabScenario[] }>();
  for (const s of scenarios) {
    const tools = s.kind === 'bpftrace';
    const key = `${s.smp}/${tools}`;
    const boot = byKey.get(key) ?? { smp: s.smp, tools, scenarios: [] };
    boot.scenarios.push(s);
    byKey.set(key, boot);
  }
  return [...byKey.values()];
}
