import fc from 'fast-check';
import type { Case } from '../../src/case/schema.js';
import { getPath, setPath } from '../../src/dotted.js';
import { BASE_FACTS, caseFacts } from '../../src/facts/facts.js';
import { FIRED } from '../../src/facts/trust.js';

/**
 * Completions of a case's unknown fields, for the soundness property. A completion gives every
 * unknown case field a value the schema allows, except where the contract itself ties a field
 * to another (documented below): those are completed consistently, because a completion that
 * contradicts the case's own statements is not a possible world, only a different case.
 *
 *  - A counter pair the case leaves out entirely (say hits for a module) grows or stays level
 *    within one epoch label (kernel-facts.md §2: only a new registration resets a counter); a
 *    pair with one side known is completed freely, so a reset can show.
 *  - A summary the records already determine (in flight at stop = accepted - returns; entry
 *    records = the accepted calls the entry events give; returns = accepted - a stated in-flight
 *    figure) is completed with that value: a
 *    contradicting one is flagged by ledger/in-flight-contradicts-records (cases/soundness/c02-*).
 *  - Entry events = accepted + calls without an instance + filtered (DESIGN.md) when those are
 *    known. A probe not registered or not armed records nothing, and records prove both, as do
 *    return hits and a miss-counter rise (a miss is only counted when the probe hit); calls the
 *    entry handler rejected prove a handler that can reject.
 *  - `counters.*` are by definition the return probe's counters (case-format.md): a completion
 *    names `counters.event` and `probe.event` alike; a case that names them differently is
 *    judged on that (cases/soundness/c03-entry-event-line.yaml).
 */

const PAIRS = ['nmissed', 'kprobe_nmissed', 'hits'];
const RELEASES = ['6.12.95+deb12-amd64', '6.1.90', '5.10.20', '5.15.17', '5.4.0-150-generic', '6.15.2', '4.18.0-348.el8.x86_64'];

function pool(name: string, c: Case): fc.Arbitrary<unknown> | undefined {
  const f = BASE_FACTS.find((x) => x.name === name)!;
  if (f.values) return fc.constantFrom(...f.values);
  if (name.endsWith('.epoch')) {
    const labels = ['probe.registration.epoch', 'counters.start.epoch', 'counters.end.epoch'].map((p) => getPath(c, p)).filter((v): v is string => typeof v === 'string' && v !== 'unknown');
    return fc.constantFrom(...new Set([...labels, 'epoch-x']));
  }
  switch (name) {
    // kernel.release and kernel.version name one kernel: a completion of one agrees with the other.
    case 'kernel.release': {
      const v = getPath(c, 'kernel.version');
      if (typeof v === 'string' && v !== 'unknown') {
        const [major, minor] = v.split('.');
        return fc.constantFrom(v, `${major}.${minor}.0-1-amd64`);
      }
      return fc.constantFrom(...RELEASES);
    }
    case 'kernel.version': {
      const r = getPath(c, 'kernel.release');
      const m = typeof r === 'string' ? /^(\d+)\.(\d+)(?:\.(\d+))?(.*)$/.exec(r) : null;
      if (!m) return fc.constantFrom('5.10.20', '5.10.223', '6.1.2', '6.1.140', '6.12.95');
      // A release that pins its point release (6.12.95+deb12) is that version; an ABI name (6.1.0-37) is some point release of its line.
      if (m[3] !== undefined && !/^-\d/.test(m[4] ?? '')) return fc.constant(`${m[1]}.${m[2]}.${m[3]}`);
      return fc.constantFrom(...[1, 2, 3, 17, 94, 140, 223].map((p) => `${m[1]}.${m[2]}.${p}`));
    }
    case 'kernel.possible_cpus': return fc.integer({ min: 1, max: 16 });
    case 'probe.registration.result': return fc.constantFrom('ok', 'EINVAL', 'ENOENT');
    // A request the interface refuses cannot go with a registration the case says succeeded.
    case 'probe.maxactive.requested': return getPath(c, 'probe.registration.result') === 'ok' && getPath(c, 'probe.interface') === 'tracefs' ? fc.integer({ min: 1, max: 40 }) : fc.integer({ min: -1, max: 40 });
    case 'probe.target': return fc.constantFrom('f', 'f.cold');
    case 'coverage.clones': return fc.constantFrom([], ['f.isra.0']);
    case 'probe.event': case 'counters.event': return undefined; // completed together, below
  }
  if (f.type === 'number') return fc.integer({ min: 0, max: 60 });
  if (f.type === 'boolean') return fc.boolean();
  if (f.type === 'list') return fc.constant([]);
  return fc.constantFrom('x', 'y');
}

/** The case fields a completion fills: every base fact the case leaves unknown. */
export function unknownFields(c: Case): string[] {
  const f = caseFacts(c);
  return BASE_FACTS.map((b) => b.name).filter((n) => !f.values.has(n));
}

/** An arbitrary completion of `c` (a new object; `c` is not changed). */
export function completion(c: Case): fc.Arbitrary<Case> {
  const open = unknownFields(c);
  const free = open.filter((n) => !/^counters\.(start|end)\.(nmissed|kprobe_nmissed|hits)$/.test(n) && n !== 'probe.event' && n !== 'counters.event');
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const n of free) {
    const a = pool(n, c);
    if (a) parts[n] = a;
  }
  // A probe that was not registered or not armed records nothing; its records prove both.
  const result = getPath(c, 'probe.registration.result');
  const silent = (typeof result === 'string' && result !== 'ok' && result !== 'unknown') || getPath(c, 'probe.armed') === false;
  for (const k of PAIRS) {
    const s = `counters.start.${k}`;
    const e = `counters.end.${k}`;
    const sOpen = open.includes(s);
    const eOpen = open.includes(e);
    // A probe that never fired counts nothing: its pairs stay level.
    if (sOpen && eOpen) parts[`pair:${k}`] = fc.tuple(fc.integer({ min: 0, max: 40 }), silent ? fc.constant(0) : fc.integer({ min: 0, max: 20 }));
    else if (sOpen) parts[s] = fc.integer({ min: 0, max: 60 });
    else if (eOpen) parts[e] = fc.integer({ min: 0, max: 60 });
  }
  const nameOpen = open.includes('probe.event') || open.includes('counters.event');
  if (nameOpen) parts['names'] = fc.constantFrom('g/ev', 'ev');
  // Summary fields the records already determine are completed with the value they give.
  const facts = caseFacts(c);
  const accepted = facts.values.get('accounting.accepted') as number | undefined;
  const returns = facts.values.get('ledger.returns') as number | undefined;
  const tied: Record<string, number> = {};
  if (open.includes('ledger.in_flight_at_stop') && accepted !== undefined && returns !== undefined && accepted >= returns) tied['ledger.in_flight_at_stop'] = accepted - returns;
  if (open.includes('ledger.entries') && accepted !== undefined) tied['ledger.entries'] = accepted;
  // The same identity read the other way: a stated in-flight figure and the accepted calls give
  // the returns (accounting.open_at_stop reads the stated figure when returns are unknown).
  const stated = facts.values.get('ledger.in_flight_at_stop') as number | undefined;
  if (open.includes('ledger.returns') && accepted !== undefined && stated !== undefined && accepted >= stated) tied['ledger.returns'] = accepted - stated;
  // DESIGN.md: entry events = accepted + calls without an instance + filtered.
  const missed = facts.values.get('counters.delta.missed_total') as number | undefined;
  const filtered = facts.values.get('accounting.filtered') as number | undefined;
  if (open.includes('ledger.entry_events') && accepted !== undefined && missed !== undefined && filtered !== undefined) tied['ledger.entry_events'] = accepted + missed + filtered;
  if (silent) for (const k of ['ledger.entries', 'ledger.returns']) if (open.includes(k)) tied[k] = 0;
  // The probe's own records, return hits or a miss-counter rise within a valid delta prove it
  // fired (src/facts/trust.ts FIRED: a miss is only counted when the probe hit).
  const recorded = FIRED.some((k) => ((facts.values.get(k) as number | undefined) ?? 0) > 0);
  const proven: Record<string, unknown> = {};
  // Calls the entry handler rejected prove a handler that can reject (kernel-facts.md §3).
  const rejected = ((facts.values.get('ledger.filtered') as number | undefined) ?? 0) > 0;
  if (rejected && open.includes('probe.entry_handler.present')) proven['probe.entry_handler.present'] = true;
  if (rejected && open.includes('probe.entry_handler.can_filter')) proven['probe.entry_handler.can_filter'] = true;
  if (recorded && open.includes('probe.registration.result')) proven['probe.registration.result'] = 'ok';
  if (recorded && open.includes('probe.armed')) proven['probe.armed'] = true;
  for (const k of Object.keys(proven)) delete parts[k];
  for (const k of Object.keys(tied)) delete parts[k];
  return fc.record(parts).map((values) => {
    const out = structuredClone(c) as unknown as Record<string, unknown>;
    for (const [k, v] of Object.entries({ ...tied, ...proven })) setPath(out, k, v);
    for (const [k, v] of Object.entries(values)) {
      if (k.startsWith('pair:')) {
        const key = k.slice(5);
        const [start, rise] = v as [number, number];
        setPath(out, `counters.start.${key}`, start);
        setPath(out, `counters.end.${key}`, start + rise);
      } else if (k === 'names') {
        const known = (getPath(c, 'probe.event') ?? getPath(c, 'counters.event')) as string | undefined;
        const name = known && known !== 'unknown' ? known : (v as string);
        setPath(out, 'probe.event', name);
        setPath(out, 'counters.event', name);
      } else {
        setPath(out, k, v);
      }
    }
    return out as unknown as Case;
  });
}
