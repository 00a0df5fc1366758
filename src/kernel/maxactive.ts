/**
 * How each interface turns a requested `maxactive` into the pool size the kernel uses.
 * Facts: kernel-facts.md §1 (register_kretprobe default), §6 (tracefs parsing and limit),
 * §9 (bpftrace / perf_event_open cannot choose), and the observations in kernel-notes.md.
 */

/** `KRETPROBE_MAXACTIVE_MAX` in kernel/trace/trace_kprobe.c: applies to tracefs `r<N>:` only. */
export const TRACEFS_MAXACTIVE_MAX = 4096;

/** v6.12 `register_kretprobe()`: a nonpositive maxactive becomes max(10, 2 × possible CPUs). */
export function defaultMaxactive(possibleCpus: number): number {
  return Math.max(10, 2 * possibleCpus);
}

export type ProbeInterface = 'module' | 'tracefs' | 'perf-probe' | 'bpftrace' | 'bpf-link' | 'fprobe' | 'other';

export type MaxactiveOutcome =
  | { kind: 'value'; value: number; rule: string }
  | { kind: 'rejected'; reason: string; rule: string }
  | { kind: 'unknown'; needs: string[]; rule: string };

/**
 * The effective pool size for a request through one interface. `requested` undefined means
 * "not given" (tracefs `r:` with no number, bpftrace, a module that leaves the field 0).
 */
export function effectiveMaxactive(
  iface: ProbeInterface,
  requested: number | undefined,
  possibleCpus: number | undefined,
): MaxactiveOutcome {
  return poolFor(iface, requested, possibleCpus === undefined ? undefined : defaultMaxactive(possibleCpus), possibleCpus);
}

/**
 * The same, with the default pool the kernel in question gives (the facts stage passes the
 * release-aware default of src/kernel/history.ts; `effectiveMaxactive` assumes v6.12).
 */
export function poolFor(
  iface: ProbeInterface,
  requested: number | undefined,
  defaultPool: number | undefined,
  possibleCpus: number | undefined,
): MaxactiveOutcome {
  const viaDefault = (rule: string): MaxactiveOutcome =>
    defaultPool === undefined
      ? { kind: 'unknown', needs: ['kernel.possible_cpus', 'kernel.release'], rule }
      : { kind: 'value', value: defaultPool, rule };
  switch (iface) {
    case 'tracefs':
      if (requested === undefined) return viaDefault('tracefs r: without a number uses the kernel default');
      if (requested <= 0) return { kind: 'rejected', reason: 'Invalid maxactive number', rule: 'tracefs rejects r0: (and any nonpositive MAXACTIVE)' };
      if (requested > TRACEFS_MAXACTIVE_MAX) return { kind: 'rejected', reason: 'Maxactive is too big', rule: `tracefs accepts at most ${TRACEFS_MAXACTIVE_MAX}` };
      return { kind: 'value', value: requested, rule: 'tracefs r<N>: uses N' };
    case 'module':
      if (requested === undefined || requested <= 0) return viaDefault('the C API replaces maxactive <= 0 with the kernel default');
      return { kind: 'value', value: requested, rule: 'the C API uses a positive maxactive as given' };
    case 'bpftrace':
    case 'perf-probe':
    case 'bpf-link':
      if (requested === undefined || requested <= 0) return viaDefault(`${iface} does not set maxactive, so the kernel default applies`);
      return { kind: 'value', value: requested, rule: `${iface} passes the requested maxactive` };
    case 'fprobe':
      // kernel-history.md §3: before 6.14 a rethook pool of nr_maxactive, else 2 x possible CPUs
      // per function with no floor of 10; from 6.14 no pool (the facts stage decides which).
      if (requested !== undefined && requested > 0) return { kind: 'value', value: requested, rule: 'fprobe fN: uses N (6.5-6.13)' };
      if (possibleCpus === undefined) return { kind: 'unknown', needs: ['kernel.possible_cpus'], rule: 'fprobe default: 2 x possible CPUs per function' };
      return { kind: 'value', value: 2 * possibleCpus, rule: 'fprobe default: 2 x possible CPUs per function, no floor of 10' };
    case 'other':
      if (requested !== undefined && requested > 0) return { kind: 'value', value: requested, rule: 'assumed to be used as given' };
      return { kind: 'unknown', needs: ['probe.maxactive.effective'], rule: 'an unknown interface: read the effective value back' };
  }
}
