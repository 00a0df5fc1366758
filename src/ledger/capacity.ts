import { TRACEFS_MAXACTIVE_MAX, effectiveMaxactive, type MaxactiveOutcome, type ProbeInterface } from '../kernel/maxactive.js';

/**
 * The capacity model of the seed's "Separate in-flight calls from CPUs": estimate how many
 * admitted instances can be outstanding at once from the caller model, compare it with the
 * effective pool and the observed high-water mark, and recommend a size whose every unit is
 * traced to a caller — never a universal multiplier. Pure.
 */

/** Who can be inside the target at once. Undefined means unknown (never read as zero). */
export interface CallerModel {
  /** Tasks that may call the target at the same time. */
  workers?: number | undefined;
  /** File descriptors (or requests) in flight at once. */
  concurrentFds?: number | undefined;
  /** Places inside the target where a call can block. */
  blockingPoints?: number | undefined;
  /** Deepest nesting of the target within one task (1: no recursion). */
  recursionDepth?: number | undefined;
  targetSleeps?: boolean | undefined;
  /** Callers outside the test that share the pool: the capture pipeline, daemons, other tests. */
  otherCallers?: number | undefined;
}

export interface CapacityInput {
  model: CallerModel;
  possibleCpus?: number | undefined;
  iface: ProbeInterface;
  requested?: number | undefined;
  /** From a ledger, when one was given. */
  observed?: { value: number; lowerBound: boolean; fromEntryEvents: boolean } | undefined;
}

export interface CapacityResult {
  effective: MaxactiveOutcome;
  estimate: { value: number | undefined; reasoning: string[]; needs: string[] };
  observed: CapacityInput['observed'];
  recommended: {
    value: number | undefined;
    /** Each addend with the caller it stands for. */
    terms: Array<{ amount: number; why: string }>;
    reasoning: string[];
  };
  /** Does the effective pool cover the recommendation? */
  sufficient: boolean | undefined;
  notes: string[];
}

/** Estimate, compare and recommend. */
export function capacityModel(input: CapacityInput): CapacityResult {
  const m = input.model;
  const reasoning: string[] = [];
  const needs: string[] = [];
  const notes: string[] = [];

  // 1. Tasks that can be inside the target at the same time.
  let callers: number | undefined;
  if (m.workers !== undefined) {
    callers = m.workers;
    reasoning.push(`${m.workers} worker task(s) can each be inside the target`);
    if (m.concurrentFds !== undefined && m.concurrentFds > m.workers) {
      reasoning.push(`${m.concurrentFds} concurrent fds do not raise this: a task is inside at most one call per nesting level, whatever it has open`);
    } else if (m.concurrentFds !== undefined && m.concurrentFds < m.workers) {
      reasoning.push(`only ${m.concurrentFds} fds are in flight, but workers without one can still be inside (at another blocking point, or before the fd wait), so the worker count stands`);
    }
  } else if (m.concurrentFds !== undefined) {
    callers = m.concurrentFds;
    reasoning.push(`worker count unknown: assuming one caller task per in-flight fd (${m.concurrentFds})`);
    needs.push('concurrency.workers');
  } else {
    needs.push('concurrency.workers');
  }

  // 2. Sleeping decides whether CPUs bound anything.
  let sleeps = m.targetSleeps;
  if (sleeps === undefined && m.blockingPoints !== undefined && m.blockingPoints > 0) {
    sleeps = true;
    reasoning.push(`${m.blockingPoints} blocking point(s) in the target: it sleeps`);
  }
  if (sleeps === undefined) {
    needs.push('concurrency.target_sleeps');
    reasoning.push('whether the target sleeps is unknown: assumed it does (the larger overlap), since a sleeping call keeps its instance while off the CPU');
  } else if (sleeps) {
    reasoning.push('the target sleeps: a blocked call keeps its instance while off the CPU, so overlap is bounded by callers, not by CPUs');
    if (m.blockingPoints !== undefined && m.blockingPoints > 1) reasoning.push(`${m.blockingPoints} blocking points do not multiply it: a task waits at one point at a time`);
  } else {
    const cpus = input.possibleCpus;
    reasoning.push(
      `the target does not sleep: at most ${cpus ?? 'one per possible CPU'} call(s) run at once, but preemption can park a task mid-call with its instance held, so the bound stays the caller count`,
    );
  }
  if (input.possibleCpus !== undefined && callers !== undefined && callers > input.possibleCpus) {
    reasoning.push(`CPU count alone (${input.possibleCpus}) would under-size the pool: ${callers} callers can hold instances at once`);
  }

  // 3. Recursion multiplies outstanding instances per task.
  let depth = m.recursionDepth;
  if (depth === undefined) {
    depth = 1;
    needs.push('concurrency.recursion_depth');
    reasoning.push('recursion depth unknown: assumed 1 (a recursive target multiplies every term below)');
  } else if (depth > 1) {
    reasoning.push(`recursion depth ${depth}: each caller can hold ${depth} instances at once`);
  }
  const estimate = callers === undefined ? undefined : callers * Math.max(1, depth);
  if (estimate !== undefined) reasoning.push(`estimated maximum overlap: ${callers} × ${Math.max(1, depth)} = ${estimate}`);

  // 4. The recommendation: the estimate plus callers outside the model, or the observation if larger.
  const terms: Array<{ amount: number; why: string }> = [];
  const recReasoning: string[] = [];
  if (estimate !== undefined) terms.push({ amount: estimate, why: 'the caller model\'s maximum overlap' });
  if (m.otherCallers !== undefined && m.otherCallers > 0) terms.push({ amount: m.otherCallers, why: 'callers outside the test sharing the pool (capture pipeline, daemons)' });
  let value: number | undefined = estimate === undefined ? undefined : terms.reduce((s, t) => s + t.amount, 0);
  const obs = input.observed;
  const eff = effectiveMaxactive(input.iface, input.requested, input.possibleCpus);
  if (obs !== undefined) {
    const full = eff.kind === 'value' && obs.value >= eff.value;
    if (obs.fromEntryEvents) recReasoning.push(`observed demand of ${obs.value} calls entered at once${obs.lowerBound ? ' (a floor)' : ''} (an entry kprobe counts calls the return probe missed, so this is demand, not admitted instances)`);
    else recReasoning.push(`observed high-water mark ${obs.value} admitted instances${obs.lowerBound ? ' (a floor: the records leave some calls\' instances open to doubt, or calls were outstanding before capture)' : ''}`);
    if (full && !obs.fromEntryEvents) recReasoning.push(`the observation reached the effective pool (${eff.kind === 'value' ? eff.value : '?'}): it is censored by the pool and says only that demand is at least that high`);
    if (value !== undefined && obs.value > value) {
      recReasoning.push(`the observation exceeds the model (${obs.value} > ${value}): some callers are missing from the model; using the observation until the model explains it`);
      terms.push({ amount: obs.value - value, why: 'callers observed but not in the model' });
      value = obs.value;
    } else if (value === undefined) {
      recReasoning.push('no caller model: the observation alone is a floor for this workload, not a capacity model');
    }
  }
  if (m.otherCallers === undefined) recReasoning.push('other callers of the target (the capture pipeline itself, other tasks) are not in the model: count them with --other-callers');
  if (value !== undefined) recReasoning.push(`recommended maxactive ${value}: ${terms.map((t) => `${t.amount} (${t.why})`).join(' + ')}; no multiplier — each unit is a caller that can hold an instance`);

  // 5. Can the interface carry it?
  let sufficient: boolean | undefined;
  if (eff.kind === 'value' && value !== undefined) sufficient = eff.value >= value;
  if (value !== undefined) {
    if (input.iface === 'tracefs' && value > TRACEFS_MAXACTIVE_MAX) notes.push(`tracefs accepts at most r${TRACEFS_MAXACTIVE_MAX}: a kernel module (the C API sets no upper limit) is needed for ${value}`);
    if (input.iface === 'tracefs') notes.push(`write it as r${value}:GROUP/EVENT SYMBOL (r0: is rejected; leaving the number out gives the default)`);
    if ((input.iface === 'bpftrace' || input.iface === 'perf-probe') && sufficient === false) {
      notes.push(`${input.iface} may not let you choose maxactive (kernel-facts §9): if the default cannot be raised, make the return event through tracefs r${value}: or a module`);
    }
  }
  notes.push('raising maxactive repairs a measurement limitation; it does not change what the function does');
  return {
    effective: eff,
    estimate: { value: estimate, reasoning, needs },
    observed: obs,
    recommended: { value, terms, reasoning: recReasoning },
    sufficient,
    notes,
  };
}

/** The plain-text report of `kretprobe-triage capacity`. Pure. */
export function formatCapacityText(r: CapacityResult, iface: ProbeInterface, requested: number | undefined): string {
  const out: string[] = [];
  const e = r.effective;
  const req = requested === undefined ? 'not given' : String(requested);
  if (e.kind === 'value') out.push(`effective maxactive: ${e.value} (${iface}, requested ${req}: ${e.rule})`);
  else if (e.kind === 'rejected') out.push(`effective maxactive: none — ${iface} rejects requested ${req}: ${e.reason} (${e.rule})`);
  else out.push(`effective maxactive: unknown (${e.rule}; needs ${e.needs.join(', ')})`);
  out.push('');
  out.push(`estimated maximum overlap: ${r.estimate.value ?? 'unknown'}`);
  for (const line of r.estimate.reasoning) out.push(`  - ${line}`);
  if (r.estimate.needs.length > 0) out.push(`  needs: ${r.estimate.needs.join(', ')}`);
  out.push('');
  out.push(`observed high-water mark: ${r.observed === undefined ? 'none given (--trace/--ops, or a case with concurrency.observed_high_water)' : r.observed.value}`);
  out.push('');
  out.push(`recommended maxactive: ${r.recommended.value ?? 'unknown (no caller model)'}`);
  for (const line of r.recommended.reasoning) out.push(`  - ${line}`);
  if (r.sufficient !== undefined) out.push(`effective pool ${r.sufficient ? 'covers' : 'does NOT cover'} the recommendation`);
  for (const n of r.notes) out.push(`note: ${n}`);
  return `${out.join('\n')}\n`;
}
