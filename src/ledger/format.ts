import { formatInputError } from '../errors.js';
import { CLASS_NAMES, IDENTITY_TERMS, type Bound, type HighWater } from './ledger.js';
import type { LedgerReport } from './read.js';

/** Human durations: ns, µs, ms or s with 3 significant digits. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return '-';
  const a = Math.abs(ns);
  if (a < 1e3) return `${ns} ns`;
  if (a < 1e6) return `${(ns / 1e3).toPrecision(3)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toPrecision(3)} ms`;
  return `${(ns / 1e9).toPrecision(4)} s`;
}

/** A timestamp as the kernel prints it: seconds.micro(nano)seconds (exact from decimal text or a bigint past 2^53). */
export function formatStamp(ns: number | bigint | string): string {
  if (typeof ns !== 'number') {
    const t = BigInt(ns);
    return `${t / 1_000_000_000n}.${String(t % 1_000_000_000n).padStart(9, '0')}`;
  }
  const s = Math.floor(ns / 1e9);
  const frac = String(ns - s * 1e9).padStart(9, '0');
  return `${s}.${frac}`;
}

/** A time of the result exactly: the number, or past 2^53 its exact value (LedgerResult.exactNs) as a bigint. */
function exactTime(r: LedgerReport['result'], name: string, ns: number): number | bigint {
  const e = r.exactNs?.[name];
  return e === undefined ? ns : BigInt(e);
}

/**
 * A time for the case, which holds whole numbers up to 2^53 (its schema's integers are a double's
 * exact ones): past that, undefined, so the field is removed rather than written rounded.
 */
function caseTime(r: LedgerReport['result'], name: string, ns: number): number | undefined {
  return r.exactNs?.[name] === undefined || Number.isSafeInteger(ns) ? ns : undefined;
}

export interface LedgerView {
  report: LedgerReport;
  opsName: string | undefined;
  traceName: string;
  effectiveMaxactive: { value: number; from: string } | undefined;
}

/** Warnings about the coverage of the duration distribution (seed: "Report coverage alongside latency"). */
export function coverageWarnings(view: LedgerView): string[] {
  const r = view.report.result;
  const out: string[] = [];
  const id = r.identity;
  const delta = r.counters.nmissedDelta;
  if (delta !== undefined && delta > 0) {
    const m = id?.bounds.capacity_missed;
    const ops = m === undefined ? '' : `; ${showBound(m)} eligible operation(s) can be put down to it`;
    out.push(`the return probe missed calls (nmissed rose by ${delta}${ops}): the percentiles come from admitted calls only and can be biased toward shorter or less concurrent calls`);
  } else if (delta === undefined) {
    out.push('the miss-counter delta is unknown: whether capacity misses biased the distribution cannot be said (give --case with counters, or --nmissed-delta)');
  }
  const eff = view.effectiveMaxactive?.value;
  if (eff !== undefined && r.highWater.value >= eff) {
    out.push(`the admitted high-water mark (${r.highWater.value}) reached the effective maxactive (${eff}): the pool was full, so longer, overlapping calls are the ones most likely missing`);
  } else if (eff !== undefined && r.demand !== undefined && r.demand.value > eff) {
    out.push(`demand (${r.demand.value} calls entered at once, from entry events) exceeded the effective maxactive (${eff}): calls beyond the pool were missed`);
  }
  const incomplete = incompleteCalls(view.report);
  if (incomplete > 0) out.push(`${incomplete} call(s) have no return inside the window: the longest calls are missing from the distribution`);
  return out;
}

/**
 * Eligible calls with no return inside the window once capacity misses are set apart: in flight
 * at stop plus unexplained. Without the miss delta (entry events), every unreturned call counts.
 */
function incompleteCalls(report: LedgerReport): number {
  const r = report.result;
  const id = r.identity;
  const c = r.ops?.classification;
  if (c === undefined) return 0;
  if (id !== undefined && id.in_flight_at_stop !== null && id.unexplained !== null) return id.in_flight_at_stop + id.unexplained;
  return c.in_flight_at_stop + c.completed_without_return;
}

/** What the duration distribution covers (seed: "Report coverage alongside latency"); undefined without an ops ledger. */
export interface LatencyCoverage {
  eligible: number;
  /** Calls that got an instance: entry records, or entry events less capacity misses (unknown without the miss delta). */
  accepted: number | null;
  capacity_missed: number | null;
  filtered: number;
  incomplete: number;
}

export function latencyCoverage(report: LedgerReport): LatencyCoverage | undefined {
  const r = report.result;
  const ops = r.ops;
  if (ops === undefined) return undefined;
  const id = r.identity;
  const missed = id?.capacity_missed ?? null;
  const accepted = r.semantics === 'instance' ? ops.withEntry : missed === null ? null : ops.withEntry - missed;
  return { eligible: ops.eligible, accepted, capacity_missed: missed, filtered: ops.classification.filtered, incomplete: incompleteCalls(report) };
}

/** A bound as text: `7` when exact, `3..7` or `3..?` otherwise. */
export function showBound(b: Bound): string {
  if (b.exact) return String(b.lo);
  return `${b.lo}..${b.hi ?? '?'}`;
}

function showMark(h: HighWater): string {
  return h.exact ? `${h.value} (exact)` : `${h.value}..${h.upper ?? '?'} (a floor; ceiling from ${h.upperFrom})`;
}

/**
 * Which figures of the report are exact and which are bounds (names as in the JSON). Exact:
 * what the records determine; bounds: a figure whose true value lies in [lo, hi].
 */
export function figureKinds(report: LedgerReport): { exact: string[]; bounds: string[] } {
  const r = report.result;
  const exact: string[] = [];
  const bounds: string[] = [];
  // A figure a contradiction touches is a bound whatever its own count says.
  const touched = (r.contradictions ?? []).flatMap((c) => c.affects);
  const put = (name: string, isExact: boolean): void => {
    (isExact && !touched.some((a) => a === name || name.startsWith(`${a}.`)) ? exact : bounds).push(name);
  };
  put('high_water', r.highWater.exact);
  if (r.demand !== undefined) put('demand', r.demand.exact);
  if (r.ops !== undefined) {
    put('ops.eligible', true);
    for (const k of CLASS_NAMES) put(`ops.classification.${k}`, r.ops.classificationBounds[k].exact);
  }
  if (r.identity !== undefined) for (const t of IDENTITY_TERMS) put(`identity.${t}`, r.identity.bounds[t].exact);
  // Durations pair returns with the entry on top of the task's stack: nested calls without ids are a guess.
  if (r.durations !== undefined) put('durations', r.pairing.ambiguous === 0);
  return { exact, bounds };
}

/** The plain-text report of `kretprobe-triage ledger`. Pure. */
export function formatLedgerText(view: LedgerView): string {
  const { report } = view;
  const r = report.result;
  const lines: string[] = [];
  const fmt = report.format ?? 'unknown format';
  lines.push(`ledger: ${view.opsName ?? '(no ops ledger)'} × ${view.traceName} (${fmt}, ${report.lines.trace} lines; ${r.records.entries} entries, ${r.records.returns} returns, ${r.records.filtered} filtered, ${r.records.counters} counter records)`);
  lines.push(`entry records mean: ${r.semantics === 'instance' ? 'an accepted instance (entry handler ran)' : 'a separate entry event (fires also for calls the return probe missed)'}`);
  const ops = r.ops;
  if (ops !== undefined) {
    const c = ops.classification;
    const cb = ops.classificationBounds;
    const n = (k: keyof typeof c): string => (cb[k].exact ? String(c[k]) : `${c[k]} (${showBound(cb[k])})`);
    lines.push('');
    lines.push(`operations: ${ops.total} read, ${ops.eligible} eligible${ops.ineligible > 0 ? `, ${ops.ineligible} not reaching the target${ops.ineligibleWithEvidence > 0 ? ` (${ops.ineligibleWithEvidence} of them have probe records anyway)` : ''}` : ''}${ops.outsideWindow > 0 ? `, ${ops.outsideWindow} outside the capture window` : ''}`);
    lines.push(`  returned                    ${n('returned')}`);
    lines.push(`  in flight at capture stop   ${n('in_flight_at_stop')}   (an entry without return, the operation not done at stop)`);
    lines.push(`  completed without return    ${n('completed_without_return')}   (entry recorded, the ledger saw the operation finish, no return record)`);
    lines.push(`  filtered                    ${n('filtered')}`);
    lines.push(`  no probe evidence           ${n('no_probe_evidence')}`);
    if (ops.uncertain > 0) lines.push(`  ${ops.uncertain} operation(s) are uncertain: a record of their task fell where two of its operations meet within the stamp's resolution (${r.pairing.ambiguousOpMatches} such records); their classes are given as lo..hi`);
    lines.push(`  foreign probe records       ${r.pairing.foreign}   (match no operation: the observer's own pipeline, or other callers)`);
    if (ops.reachesTargetUnknown > 0) lines.push(`  note: ${ops.reachesTargetUnknown} operation(s) lack "reaches_target" and were counted as eligible`);
    const id = r.identity;
    if (id !== undefined) {
      const v = (t: (typeof IDENTITY_TERMS)[number]): string => showBound(id.bounds[t]);
      lines.push('');
      // The verdict engine derives the identity from the case; this is the ledger's own view of its counts.
      lines.push('ledger summary of the accounting terms (docs/case-format.md#the-accounting-identity; lo..hi where the records leave the split open — the verdict derives the identity from the case):');
      lines.push(`  eligible ${id.eligible} = returned ${v('returned')} + filtered ${v('filtered')} + in_flight_at_stop ${v('in_flight_at_stop')} + capacity_missed ${v('capacity_missed')} + not_covered ${v('not_covered')} + unexplained ${v('unexplained')}`);
      const state = id.balanced === true ? 'balanced (every term exact)' : id.balanced === false ? 'DOES NOT BALANCE' : id.consistent === false ? 'CANNOT BALANCE: the bounds exclude eligible' : 'balance not determined: some terms are only bounds';
      lines.push(`  ${state}; nmissed delta ${r.counters.nmissedDelta ?? 'unknown'} (${r.counters.source})`);
      if (!id.bounds.capacity_missed.exact && r.counters.nmissedDelta !== undefined) {
        lines.push(`  note: the miss counter says how many calls were missed, not which: it also counts nested, ineligible and foreign calls${r.semantics === 'event' ? ', and trace text cannot tell a filtered call from a missed one' : ''}`);
      }
    }
  }
  const p = r.pairing;
  lines.push('');
  lines.push(`pairing: ${p.identity}; by instance id ${p.byInstance}, by task stack ${p.byTask}, ambiguous (nested without ids) ${p.ambiguous}`);
  lines.push(`  returns without entry ${p.returnsWithoutEntry}, entries without return ${p.entriesWithoutReturn}${p.closedByCompletion > 0 ? ` (${p.closedByCompletion} closed when their operation completed)` : ''}, duplicate instance ids ${p.duplicateInstances}, out-of-order records ${p.unsortedRecords}${p.ambiguousOpMatches > 0 ? `, ambiguous operation matches ${p.ambiguousOpMatches}` : ''}`);
  lines.push('');
  const hw = r.highWater;
  const where = (h: HighWater, name: string): string => (h.atNs === undefined ? '' : ` first at ${formatStamp(exactTime(r, name, h.atNs))} s (${view.traceName}:${h.line})`);
  const eff = view.effectiveMaxactive;
  lines.push(`in flight: admitted instances outstanding at once ${showMark(hw)}${where(hw, 'highWaterAtNs')}; effective maxactive ${eff === undefined ? 'unknown' : `${eff.value} (${eff.from})`}`);
  if (r.semantics === 'event') lines.push('  admitted counts calls whose return was seen; an entry event alone may be a miss');
  if (r.demand !== undefined) lines.push(`  demand (calls entered at once, from entry events, admitted or missed) ${showMark(r.demand)}${where(r.demand, 'demandAtNs')}`);
  lines.push('');
  const d = r.durations;
  const from = r.durationsFrom === 'eligible-operations' ? 'admitted pairs of eligible operations' : 'all admitted pairs';
  if (d === undefined) lines.push(`durations: none (no ${from})`);
  else {
    lines.push(`durations of ${from}: n=${d.count}, p50 ${formatNs(d.p50Ns)}, p90 ${formatNs(d.p90Ns)}, p99 ${formatNs(d.p99Ns)}, max ${formatNs(d.maxNs)} (percentiles within ±${(d.relativeError * 100).toFixed(2)}%)`);
  }
  const id = r.identity;
  const c = ops?.classification;
  if (ops !== undefined && c !== undefined) {
    const m = id?.bounds.capacity_missed;
    const accepted = r.semantics === 'instance' ? String(ops.withEntry) : m === undefined ? 'unknown' : showBound({ lo: ops.withEntry - (m.hi ?? ops.withEntry), hi: ops.withEntry - m.lo, exact: m.exact });
    lines.push(`  coverage: eligible ${ops.eligible}, accepted ${accepted}, capacity misses ${m === undefined ? 'unknown' : showBound(m)}, filtered ${c.filtered}, incomplete ${incompleteCalls(report)}`);
  } else {
    lines.push(`  coverage: no ops ledger, so eligible calls are unknown; capacity misses ${r.counters.nmissedDelta ?? 'unknown'}`);
  }
  for (const w of coverageWarnings(view)) lines.push(`  warning: ${w}`);
  const kinds = figureKinds(report);
  if (r.contradictions !== undefined) {
    lines.push('');
    lines.push(`CONTRADICTIONS: ${r.contradictions.length} (the figures they touch are bounds, not exact)`);
    for (const c of r.contradictions) lines.push(`  ${c.id}: ${c.detail}; touches ${c.affects.join(', ')}`);
  }
  lines.push('');
  lines.push(`exact: ${kinds.exact.join(', ') || 'none'}`);
  lines.push(`bounds: ${kinds.bounds.join(', ') || 'none'}`);
  if (report.notes.length > 0 || report.problems.count > 0) {
    lines.push('');
    lines.push(`input warnings: ${report.problems.count}`);
    for (const n of report.notes) lines.push(`  ${n}`);
    for (const pr of report.problems.first) lines.push(`  ${formatInputError({ file: pr.file, line: pr.line }, pr.expected, pr.got)}`);
    if (report.problems.count > report.problems.first.length) lines.push(`  ... and ${report.problems.count - report.problems.first.length} more`);
  }
  return `${lines.join('\n')}\n`;
}

/** The JSON report: the same numbers, stable field names. Pure. */
export function ledgerJson(view: LedgerView): Record<string, unknown> {
  const { report } = view;
  return {
    ops: view.opsName ?? null,
    trace: view.traceName,
    format: report.format ?? null,
    lines: report.lines,
    ...report.result,
    effective_maxactive: view.effectiveMaxactive ?? null,
    coverage: latencyCoverage(report) ?? null,
    coverage_warnings: coverageWarnings(view),
    figures: figureKinds(report),
    other_events: report.otherEvents,
    lost: report.lost,
    notes: report.notes,
    problems: { count: report.problems.count, first: report.problems.first },
  };
}

/**
 * The case fields this ledger fills in, as dotted paths (case-format.md names; only values the
 * ledger actually measured — an unknown stays absent).
 */
export function caseUpdates(report: LedgerReport): Record<string, unknown> {
  const r = report.result;
  const u: Record<string, unknown> = {};
  // A floor when not exact: every rule that reads it asks "at least".
  u['concurrency.observed_high_water'] = r.highWater.value;
  if (r.highWater.atNs !== undefined) u['concurrency.observed_high_water_at_ns'] = caseTime(r, 'highWaterAtNs', r.highWater.atNs);
  if (r.demand !== undefined) {
    u['concurrency.observed_demand_high_water'] = r.demand.value;
    if (r.demand.atNs !== undefined) u['concurrency.observed_demand_high_water_at_ns'] = caseTime(r, 'demandAtNs', r.demand.atNs);
  }
  if (r.pairing.byInstance + r.pairing.byTask > 0) u['ledger.identity'] = r.pairing.identity;
  // What the records contradict, for the verdict's contradiction findings; a rerun without any clears it.
  u['ledger.contradictions'] = r.contradictions === undefined ? undefined : r.contradictions.map((c) => c.id);
  u['ledger.ambiguous_pairs'] = r.pairing.ambiguous;
  u['ledger.returns_without_entry'] = r.pairing.returnsWithoutEntry;
  // Only the kernel's trace text marks what its ring buffer overwrote; elsewhere a zero would be a
  // guess. A marker without a count leaves the loss unknown (cleared, as a rerun must).
  if (report.format === 'trace-text' || report.lost.markers > 0) u['ledger.lost_events'] = report.lost.events ?? undefined;
  const ops = r.ops;
  if (ops !== undefined) {
    const c = ops.classification;
    u['ledger.eligible'] = ops.eligible;
    if (r.semantics === 'instance') u['ledger.entries'] = ops.withEntry;
    else u['ledger.entry_events'] = ops.withEntry;
    u['ledger.returns'] = c.returned;
    u['ledger.filtered'] = c.filtered;
    const inFlight = r.identity?.in_flight_at_stop;
    if (inFlight !== null && inFlight !== undefined) u['ledger.in_flight_at_stop'] = inFlight;
    u['ledger.no_probe_evidence'] = c.no_probe_evidence;
    u['ledger.completed_without_return'] = c.completed_without_return;
    u['ledger.foreign_records'] = r.pairing.foreign;
  }
  const d = r.durations;
  if (d !== undefined) {
    u['latency.reported'] = true;
    u['latency.from'] = 'admitted';
    u['latency.coverage_reported'] = true;
    u['latency.count'] = d.count;
    u['latency.p50_ns'] = d.p50Ns;
    u['latency.p90_ns'] = d.p90Ns;
    u['latency.p99_ns'] = d.p99Ns;
    u['latency.max_ns'] = d.maxNs;
  }
  return u;
}

/** One line naming the contradictions of a run (the ledger command's stderr, and its exit 1). */
export function contradictionLine(report: LedgerReport): string | undefined {
  const c = report.result.contradictions;
  if (c === undefined) return undefined;
  return `ledger: ${c.length} contradiction(s) in the records: ${c.map((x) => `${x.id} (${x.detail})`).join('; ')}; the figures they touch are given as bounds`;
}
