import { BASE_BY_NAME, type FactValue } from '../facts/facts.js';
import { lineBoundWithoutNames } from '../facts/counters.js';
import { parseRelease } from '../kernel/history.js';

/**
 * The values a completion may give an unknown case field: the world space behind "every
 * consistent completion" (DESIGN.md). Small and finite, per field: an enumerated field's values,
 * both booleans, and for a count the schema's boundary (0), its first step (1), the case's own
 * counts and the gaps between its ledger counts, each with its neighbours (so an equality or an
 * order with a known figure can hold or fail either way, and the identity can balance). Free text takes the case's own labels and one other. Unknown is never a
 * value: a completion knows everything.
 *
 * This is part of the semantics, not of the engine's machinery: the verdict's search
 * (src/verdict/worlds.ts) and the oracle in test/oracle/ both enumerate these domains.
 */

/** Kernels the model places differently (before/after 5.17, 6.2, 6.7, 6.14; a vendor ABI). */
const RELEASES = ['5.4.0-150-generic', '5.10.20', '5.15.17', '6.1.90', '6.12.95', '6.15.2', '4.18.0-348.el8.x86_64'];

/** Durations and timestamps are named `…_ns`; every other number of a case is a count. */
const isTime = (name: string) => name.endsWith('_ns');

/**
 * The numbers a field may take in this case's completions, ascending: the case's own numbers
 * of the same unit only. A count is compared with counts and constants, never with a duration
 * (no rule or derivation reads a count against a `_ns` figure), so a timestamp among a count's
 * values would only multiply the completions without adding a world that differs.
 */
function numbers(known: ReadonlyMap<string, FactValue>, min: number, time: boolean): number[] {
  const out = new Set<number>([min, min + 1]);
  const own: number[] = [];
  const ledger: number[] = [];
  for (const [name, v] of known) {
    if (typeof v !== 'number' || !Number.isFinite(v) || isTime(name) !== time) continue;
    own.push(v);
    if (name.startsWith('ledger.')) ledger.push(v);
  }
  // The gap between two of the ledger's counts is the term that balances the accounting identity
  // (eligible less entries: the calls filtered or missed), so it is a value of its own.
  for (const a of ledger) for (const b of ledger) if (a > b) own.push(a - b);
  for (const x of own) for (const n of [x - 1, x, x + 1]) if (n >= min) out.add(n);
  return [...out].sort((a, b) => a - b);
}

function labels(known: ReadonlyMap<string, FactValue>, names: readonly string[], other: string): string[] {
  const own = names.map((n) => known.get(n)).filter((v): v is string => typeof v === 'string');
  return [...new Set([...own, other])];
}

/**
 * Labels of fields the derivations compare with each other (the three epochs): the case's own,
 * and one fresh label for each of those fields it leaves unknown, so every pattern of equal and
 * different labels is some completion's. One shared "other" label made every unknown pair equal:
 * two unstated epochs read as one registration, so a level counter across a reload excluded pool
 * misses (issue 20: a definite verdict never rests on an unknown fact). The return event's name and
 * the counters' line are compared the same way (issue 20, class 4).
 */
function comparedLabels(known: ReadonlyMap<string, FactValue>, names: readonly string[], other: string): string[] {
  const own = names.map((n) => known.get(n)).filter((v): v is string => typeof v === 'string');
  const fresh = names.filter((n) => typeof known.get(n) !== 'string').map((_, i) => (i === 0 ? other : `${other}-${i + 1}`));
  return [...new Set([...own, ...fresh])];
}

/** The domain of one case field, given the facts the case knows (base and derived). */
export function domainOf(field: string, known: ReadonlyMap<string, FactValue>): FactValue[] {
  const f = BASE_BY_NAME.get(field);
  if (!f) return [];
  // A case is about the return probe this format describes unless it says `probe.kind: entry`
  // (src/facts/capacity.ts isEntryProbe): an unstated kind is no other world to search. The kind
  // is asked while the pool is still an answer (rules/questions/scope.yaml, while_possible).
  if (field === 'probe.kind') return [];
  // An entry probe has no pool to size and nothing returns through it: the only consistent
  // completion leaves its pool unset and its return side empty (constraints/entry-probe-has-no-pool).
  if (known.get('probe.kind') === 'entry') {
    if (field === 'probe.maxactive.requested' || field === 'probe.maxactive.effective' || field === 'probe.bpf_attach' || field === 'probe.bpf_functions') return [];
    if (field === 'ledger.returns' || field === 'ledger.in_flight_at_stop') return [0];
  }
  // bpftrace sets no maxactive (kernel-facts.md §9: hard-coded 0), and a kretprobe made through
  // perf_event_open cannot ask for one: the request is no field a completion can fill there, as the
  // pool read for it is the kernel default (src/facts/capacity.ts outcome).
  if (field === 'probe.maxactive.requested' && (known.get('probe.interface') === 'bpftrace' || known.get('probe.bpf_attach') === 'perf-kretprobe')) return [];
  // How a BPF program sits on the return means nothing for an interface that is no BPF program
  // (src/facts/capacity.ts bpfAttach reads it for bpftrace, a BPF link or another tool only).
  if (field === 'probe.bpf_attach' || field === 'probe.bpf_functions') {
    const iface = known.get('probe.interface');
    if (iface !== undefined && iface !== 'bpftrace' && iface !== 'bpf-link' && iface !== 'other') return [];
  }
  if (f.values) return [...f.values];
  // An experiment nobody reported bounds nothing (capacity.overlap_experiment is false without
  // one), as an unknown date does not: no completion needs to run it. "true" would be consistent
  // only where the pool could be short (constraints/overlap-experiment-*), and there pool misses
  // are already possible or undecided without it, so no definite verdict depends on it.
  if (field === 'concurrency.loss_follows_overlap') return [];
  // The same for a probe said to have gone silent until it was registered again
  // (capacity.pool_drained is false without it, constraints/pool-drained-*).
  if (field === 'concurrency.loss_until_reregistration') return [];
  // Likewise a probe program nobody said keeps only the workload's calls: with it unknown its
  // records may be any call's, the wider world; "true" only takes worlds away
  // (constraints/lost-records-were-eligible) or says what a short count already can.
  if (field === 'ledger.records_only_eligible') return [];
  // A removal nobody reported bounds nothing either (coverage.target_removed is false without one):
  // a completion that names one only adds a refused registration, which the registration result
  // already offers, or contradicts a registered probe (constraints/removed-target-not-registered).
  if (field === 'coverage.removed_in') return [];
  if (f.type === 'boolean') return [true, false];
  if (f.type === 'list') return [[], ['x.isra.0']];
  if (field.endsWith('.epoch')) return comparedLabels(known, ['probe.registration.epoch', 'counters.start.epoch', 'counters.end.epoch'], 'epoch-other');
  switch (field) {
    case 'probe.event':
    case 'counters.event': {
      // The counters' line may be another event's wherever the case's own evidence leaves it open
      // (issue 20, class 4): each unstated name gets a label of its own. Where the evidence binds
      // an unnamed line (src/facts/counters.ts lineBoundWithoutNames), the unstated name takes the
      // other's: a completion that unbound it would contradict what the derivation reads.
      const names = ['probe.event', 'counters.event'];
      if (known.get('counters.source') !== undefined && lineBoundWithoutNames(Object.fromEntries(known)) === true) return labels(known, names, 'other-event').slice(0, 1);
      return comparedLabels(known, names, 'other-event');
    }
    case 'kernel.observed_by':
      // An unknown date bounds nothing: a late enough one is always possible, and with it every
      // release keeps its own answer. No completion needs to pick one.
      return [];
    case 'probe.registration.result':
      return ['ok', 'EINVAL'];
    case 'probe.target':
      return ['f', 'f.cold'];
    case 'kernel.version': {
      // A release that pins an upstream point release (6.12.95+deb12-amd64) is what the kernel
      // model reads (kernel.upstream_release); the version can then change nothing.
      const release = known.get('kernel.release');
      if (typeof release === 'string' && parseRelease(release)?.patch !== undefined) return [];
      return labels(known, ['kernel.release', 'kernel.version'], RELEASES[0]!).concat(RELEASES.slice(1));
    }
    case 'kernel.release':
      return labels(known, ['kernel.release', 'kernel.version'], RELEASES[0]!).concat(RELEASES.slice(1));
    case 'kernel.possible_cpus':
      return [...new Set([1, 2, 4, 8, ...[known.get('kernel.possible_cpu_count')].filter((v): v is number => typeof v === 'number')])];
    case 'probe.maxactive.requested':
      return numbers(known, -1, false);
    case 'ledger.entry_events': {
      // A separate entry probe counts every call that reached the return probe: the accepted,
      // the rejected and the pool-missed ones (docs/case-format.md, the accounting identity). So a
      // ledger count plus a counted miss rise is a value of its own, as a gap is for the others
      // (20 entries and 4 pool misses: 24 hits, the one figure that fits both).
      const counts = numbers(known, 0, false);
      const ledger = [...known].filter(([n, v]) => n.startsWith('ledger.') && typeof v === 'number' && Number.isFinite(v)).map(([, v]) => v as number);
      const rises = [...known].filter(([n, v]) => n.startsWith('counters.delta.') && typeof v === 'number' && v > 0).map(([, v]) => v as number);
      for (const a of ledger) for (const b of rises) counts.push(a + b);
      return [...new Set(counts)].sort((a, b) => a - b);
    }
  }
  if (f.type === 'number') return numbers(known, 0, isTime(field));
  return labels(known, [field], 'other');
}
