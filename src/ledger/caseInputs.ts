import type { Case } from '../case/schema.js';
import { countCpuList } from '../kernel/cpus.js';
import { effectiveMaxactive, type ProbeInterface } from '../kernel/maxactive.js';

/** What the ledger takes from a case: the miss-counter delta and the pool size, each with its reason. */
export interface CaseInputs {
  nmissedDelta: number | undefined;
  nmissedWhy: string;
  effectiveMaxactive: { value: number; from: string } | undefined;
  possibleCpus: number | undefined;
  /** The case says the return probe cannot reject calls (a tracefs event has no entry handler; a handler stated unable to filter). */
  noFiltering: boolean | undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Possible CPUs from a case value: a count or a cpulist. */
export function possibleCpusOf(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== 'unknown') return countCpuList(v);
  return undefined;
}

/** Read the ledger's inputs out of a validated case. Pure. */
export function caseInputs(c: Case): CaseInputs {
  const start = c.counters?.start;
  const end = c.counters?.end;
  let nmissedDelta: number | undefined;
  let nmissedWhy = 'the case has no counters.start/end nmissed';
  const s = num(start?.nmissed);
  const e = num(end?.nmissed);
  if (s !== undefined && e !== undefined) {
    const se = start?.epoch;
    const ee = end?.epoch;
    if (typeof se === 'string' && se !== 'unknown' && se === ee) {
      if (e >= s) {
        nmissedDelta = e - s;
        nmissedWhy = `counters.end.nmissed − counters.start.nmissed in epoch ${se}`;
      } else nmissedWhy = 'counters.end.nmissed is below start: the counter was reset';
    } else nmissedWhy = 'the counter snapshots are not from one known registration epoch';
  }
  const possibleCpus = possibleCpusOf(c.kernel?.possible_cpus);
  let eff: CaseInputs['effectiveMaxactive'];
  const given = num(c.probe?.maxactive?.effective);
  if (given !== undefined) eff = { value: given, from: 'probe.maxactive.effective' };
  else {
    const iface = c.probe?.interface;
    if (typeof iface === 'string' && iface !== 'unknown') {
      const out = effectiveMaxactive(iface as ProbeInterface, num(c.probe?.maxactive?.requested), possibleCpus);
      if (out.kind === 'value') eff = { value: out.value, from: out.rule };
    }
  }
  const handler = c.probe?.entry_handler;
  const noFiltering = c.probe?.interface === 'tracefs' || handler?.present === false || handler?.can_filter === false ? true : undefined;
  return { nmissedDelta, nmissedWhy, effectiveMaxactive: eff, possibleCpus, noFiltering };
}
