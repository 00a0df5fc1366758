/**
 * The ledger's figures against the generator's ground truth: every figure the ledger calls exact
 * must equal the truth, and every bound it reports must contain it. Shared by the property tests
 * and `npm run bench:ledger`.
 */
import type { Bound, HighWater, LedgerResult } from '../src/ledger/ledger.js';
import type { FormTruth } from './gen-trace.js';

export interface TruthCheck {
  /** Figures checked as exact / as bounds. */
  exact: number;
  bounds: number;
  /** One line per figure that is wrong (an exact figure off, or a bound missing the truth). */
  wrong: string[];
}

export function checkTruth(r: LedgerResult, want: FormTruth, opts: { demand: boolean }): TruthCheck {
  const out: TruthCheck = { exact: 0, bounds: 0, wrong: [] };
  const bound = (name: string, b: Bound, truth: number): void => {
    if (b.exact) {
      out.exact++;
      if (b.lo !== truth) out.wrong.push(`${name}: exact ${b.lo}, truth ${truth}`);
    } else {
      out.bounds++;
      if (truth < b.lo || (b.hi !== null && truth > b.hi)) out.wrong.push(`${name}: bounds ${b.lo}..${b.hi ?? '?'} miss truth ${truth}`);
    }
  };
  const mark = (name: string, h: HighWater | undefined, truth: number): void => {
    if (h === undefined) {
      out.wrong.push(`${name}: not reported`);
      return;
    }
    bound(name, { lo: h.value, hi: h.exact ? h.value : h.upper, exact: h.exact }, truth);
  };
  const ops = r.ops;
  if (ops === undefined) {
    out.wrong.push('ops: not reported');
    return out;
  }
  bound('eligible', { lo: ops.eligible, hi: ops.eligible, exact: true }, want.eligible);
  for (const k of ['returned', 'in_flight_at_stop', 'completed_without_return', 'filtered', 'no_probe_evidence'] as const) {
    bound(k, ops.classificationBounds[k], want[k]);
  }
  mark('admitted high-water', r.highWater, want.high_water);
  if (opts.demand) mark('demand high-water', r.demand, want.demand_high_water);
  if (r.identity !== undefined) bound('identity capacity_missed', r.identity.bounds.capacity_missed, want.capacity_missed);
  return out;
}
