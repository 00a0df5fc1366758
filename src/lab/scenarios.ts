import type { VerdictId } from '../case/schema.js';

/**
 * The lab's scenarios: the article's controlled overlap fixture ("Propose a controlled overlap
 * fixture") and the registration facts of kernel-notes.md, each a fresh registration in the guest.
 * `guest` is the name lab/guest/init.sh knows; one scenario may send several bundles.
 */
export interface LabScenario {
  name: string;
  /** Possible CPUs of the boot it needs (`-smp`). */
  smp: number;
  guest: string;
  bundles: string[];
  about: string;
}

export const LAB_SCENARIOS: readonly LabScenario[] = [
  { name: 'constrained', smp: 2, guest: 'constrained', bundles: ['constrained'], about: 'r2: return probe, three calls held at the gate, then released' },
  { name: 'adequate', smp: 2, guest: 'adequate', bundles: ['adequate'], about: 'the same with r8:' },
  { name: 'stopped', smp: 2, guest: 'stopped', bundles: ['stopped'], about: 'r8:, capture stopped (tracing_on 0) while gated, released after' },
  { name: 'default-smp2', smp: 2, guest: 'default', bundles: ['default-smp2'], about: 'r: without a number, 2 possible CPUs' },
  { name: 'default-smp8', smp: 8, guest: 'default', bundles: ['default-smp8'], about: 'r: without a number, 8 possible CPUs' },
  {
    name: 'failures',
    smp: 2,
    guest: 'failures',
    bundles: ['fail-missing-symbol', 'fail-blacklisted', 'fail-r0', 'fail-r9999'],
    about: 'rejected registrations: missing symbol, blacklisted do_int3, r0:, r9999:',
  },
];

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

/** One boot per CPU count: scenarios that share `-smp` share a boot. */
export function planBoots(scenarios: LabScenario[]): Array<{ smp: number; scenarios: LabScenario[] }> {
  const bySmp = new Map<number, LabScenario[]>();
  for (const s of scenarios) bySmp.set(s.smp, [...(bySmp.get(s.smp) ?? []), s]);
  return [...bySmp.entries()].map(([smp, list]) => ({ smp, scenarios: list }));
}
