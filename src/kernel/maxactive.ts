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

export type ProbeInterface = 'module' | 'tracefs' | 'perf-probe' | 'bpftrace' | 'bpf-link' | 'other';

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
  const viaDefault = (rule: string): MaxactiveOutcome =>
    possibleCpus === undefined
      ? { kind: 'unknown', needs: ['kernel.possible_cpus'], rule }
      : { kind: 'value', value: defaultMaxactive(possibleCpus), rule };
  switch (iface) {
    case 'tracefs':
      if (requested === undefined) return viaDefault('tracefs r: without a number uses the kernel default');
      if (requested <= 0) return { kind: 'rejected', reason: 'Invalid maxactive number', rule: 'tracefs rejects r0: (and any nonpositive MAXACTIVE)' };
      if (requested > TRACEFS_MAXACTIVE_MAX) return { kind: 'rejected', reason: 'Maxactive is too big', rule: `tracefs accepts at most ${TRACEFS_MAXACTIVE_MAX}` };
      return { kind: 'value', value: requested, rule: 'tracefs r<N>: uses N' };
    case 'module':
      if (requested === undefined || requested <= 0) return viaDefault('the C API replaces maxactive <= 0 with max(10, 2 x possible CPUs)');
      return { kind: 'value', value: requested, rule: 'the C API uses a positive maxactive as given' };
    case 'bpftrace':
    case 'perf-probe':
    case 'bpf-link':
      if (requested === undefined || requested <= 0) return viaDefault(`${iface} does not set maxactive, so the kernel default applies`);
      return { kind: 'value', value: requested, rule: `${iface} passes the requested maxactive` };
    case 'other':
      if (requested !== undefined && requested > 0) return { kind: 'value', value: requested, rule: 'assumed to be used as given' };
      return { kind: 'unknown', needs: ['probe.maxactive.effective'], rule: 'an unknown interface: read the effective value back' };
  }
}
