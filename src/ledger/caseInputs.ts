import type { Case } from '../case/schema.js';
import { countCpuList } from '../kernel/cpus.js';
import { caseFacts } from '../facts/facts.js';

/** What the ledger takes from a case: the miss-counter delta and the pool size, each with its reason. */
export interface CaseInputs {
  nmissedDelta: number | undefined;
  nmissedWhy: string;
  effectiveMaxactive: { value: number; from: string } | undefined;
  possibleCpus: number | undefined;
  /** The case says the return probe cannot reject calls (a tracefs event has no entry handler; a handler stated unable to filter). */
  noFiltering: boolean | undefined;
}

/** Possible CPUs from a case value: a count or a cpulist. */
export function possibleCpusOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== 'unknown') return countCpuList(v);
  return undefined;
}

/**
 * Read the ledger's inputs out of a validated case. Pure. Counter validity, the split of a summed
 * miss figure and the pool (with the default per release, src/kernel/history.ts) are decided once,
 * by the derived facts (src/facts/): this reads counters.delta.nmissed and
 * capacity.effective_maxactive and never re-decides them (issue 20, decisions with two owners).
 */
export function caseInputs(c: Case): CaseInputs {
  const f = caseFacts(c).values;
  const delta = f.get('counters.delta.nmissed');
  const nmissedDelta = typeof delta === 'number' ? delta : undefined;
  let nmissedWhy: string;
  if (nmissedDelta !== undefined) nmissedWhy = `counters.delta.nmissed (pool misses within epoch ${String(f.get('counters.end.epoch'))})`;
  else if (f.get('counters.delta_valid') === false) nmissedWhy = f.get('counters.went_down') === true ? 'counters.end.nmissed is below start: the counter was reset' : 'the counter snapshots are not one valid delta of the return probe (epoch, line or source)';
  else if (f.get('counters.delta.column') !== undefined) nmissedWhy = 'the miss figure is a sum whose pool part the case does not split (counters.delta.nmissed unknown)';
  else nmissedWhy = 'the case has no counters.start/end nmissed';
  const pool = f.get('capacity.effective_maxactive');
  const readBack = f.get('probe.maxactive.effective');
  const effectiveMaxactive = typeof pool === 'number'
    ? { value: pool, from: typeof readBack === 'number' ? 'probe.maxactive.effective' : 'capacity.effective_maxactive (the interface and the default pool of this release)' }
    : undefined;
  const cpus = f.get('kernel.possible_cpu_count');
  const handler = c.probe?.entry_handler;
  const noFiltering = c.probe?.interface === 'tracefs' || handler?.present === false || handler?.can_filter === false ? true : undefined;
  return { nmissedDelta, nmissedWhy, effectiveMaxactive, possibleCpus: typeof cpus === 'number' ? cpus : undefined, noFiltering };
}
