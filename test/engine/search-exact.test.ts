import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { domainOf } from '../../src/engine/domains.js';
import { caseFacts } from '../../src/facts/facts.js';
import { evaluateCase, loadCase, loadRules, parseCase, type Rules } from '../../src/index.js';

let rules: Rules;
const root = path.resolve(import.meta.dirname, '../..');
beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
});
const judge = (yaml: string) => evaluateCase(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml'), rules);

// What a triage session had saved from cases/lab/6.12/mod-reload.yaml when it stopped: no epoch
// label is stated, the module's rp->nmissed reads 1 at both ends, and one of three calls left
// no record. The full case says the counters straddle a reload (mod-reload-1, mod-reload-2) and
// is capacity-missed, so that completion must stay possible.
const RELOAD_PARTIAL = `probe: { target: krtfix_target, interface: module, registration: { result: ok }, armed: true, maxactive: { effective: 2 }, bpf_attach: unknown, entry_handler: { present: true, can_filter: false } }
concurrency: { recursion_depth: 1, observed_high_water: 2, observed_demand_high_water: unknown }
counters: { source: module-field, start: { nmissed: 1, kprobe_nmissed: 0 }, end: { nmissed: 1, kprobe_nmissed: 0 } }
ledger: { eligible: 3, entries: 2 }
`;

describe('the completion search answers exactly where it used to run out', () => {
  it('unstated epochs may differ: a level counter does not exclude pool misses across a reload', async () => {
    const v = await judge(RELOAD_PARTIAL);
    expect(v.exact).not.toBe(false);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'observer-gap']));
    expect(v.decides.filter((f) => f.endsWith('.epoch')).length).toBeGreaterThan(0);
  });

  it('the same counters stated in one epoch exclude them', async () => {
    const v = await judge(RELOAD_PARTIAL.replace('start: { nmissed', 'start: { epoch: r, nmissed').replace('end: { nmissed', 'end: { epoch: r, nmissed').replace('result: ok }', 'result: ok, epoch: r }'));
    expect(v.possible).not.toContain('capacity-missed');
  });

  it.each(['cases/exact/c1-summed-rise-unsplit.yaml', 'cases/soundness/c02-entry-events-have-records.yaml'])('%s is searched to the end', async (file) => {
    const c = await loadCase(path.join(root, file));
    const v = await evaluateCase(c.data, rules);
    expect(v.verdict).toBe(c.data.expected?.verdict);
    expect(v.exact).not.toBe(false);
  });
});

// Issue 20, class 4: kprobe_profile holds the return event's line and a separate entry event's. A
// partial case quoting one line's columns (0 misses, 3 hits: either line could read so) without
// naming its event, and one call without a return record.
const PROFILE_PARTIAL = `kernel: { release: 6.12.95+deb12-amd64, arch: x86_64, possible_cpus: 2 }
probe: { interface: tracefs, target: pipe_read, registration: { result: ok, epoch: r }, armed: true, maxactive: { requested: 8, effective: 8 }, entry_handler: { present: false, can_filter: false }, handler: { may_sleep: false, blocking_locks: false, does_io: false, heavy_printk: false, bounded_storage: true } }
coverage: { blacklisted: false, inlined_call_sites: none, clones: [], unusual_return: false }
concurrency: { target_sleeps: true, recursion_depth: 1 }
counters: { source: kprobe_profile, start: { epoch: r, nmissed: 0, hits: 0 }, end: { epoch: r, nmissed: 0, hits: 3 } }
ledger: { eligible: 3, identity: task-and-depth, entry_events: 3, returns: 2, filtered: 0, workload_quiesced: false, completed_without_return: 0, lost_events: 0, foreign_records: 0 }
`;
const named = (probeEvent: string | undefined, countersEvent: string | undefined, yaml = PROFILE_PARTIAL) =>
  yaml.replace('target: pipe_read,', probeEvent ? `target: pipe_read, event: ${probeEvent},` : 'target: pipe_read,').replace('source: kprobe_profile,', countersEvent ? `source: kprobe_profile, event: ${countersEvent},` : 'source: kprobe_profile,');

describe('the counters line and the return event (issue 20, class 4)', () => {
  it('unstated names may differ: the line may be the entry event\'s, so a level column excludes nothing', async () => {
    // With one shared label for both unstated names every completion bound the line to the return
    // event, and this was a definite still-in-flight.
    const v = await judge(PROFILE_PARTIAL);
    expect(v.exact).not.toBe(false);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'still-in-flight']));
    // Neither name alone splits the answer (with one stated, the other may still be the same or
    // another), so the ranking need not list both; the two together decide (the rows below), and
    // the next step must name at least one of them.
    expect(v.decides.filter((f) => f === 'probe.event' || f === 'counters.event').length).toBeGreaterThan(0);
  });

  it.each([
    ['the return event alone named', 'kfix/gate', undefined],
    ['the line alone named', undefined, 'kfix/gate'],
  ])('%s: the other may still be another event', async (_, p, c) => {
    const v = await judge(named(p, c));
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toContain('capacity-missed');
  });

  it.each([
    ['the same event', 'kfix/gate', 'kfix/gate'],
    ['the line by its name without the group', 'kfix/gate', 'gate'],
  ])('both named, %s: the counters are the return event\'s', async (_, p, c) => {
    const v = await judge(named(p, c));
    expect([v.verdict, v.possible]).toEqual(['still-in-flight', ['still-in-flight']]);
  });

  it('both named, another event: the counters are not the return probe\'s', async () => {
    const v = await judge(named('kfix/gate', 'kfix/gate_entry'));
    expect(v.findings.map((f) => f.rule)).toContain('counters/not-return-probe-counter');
    expect(v.possible).toContain('capacity-missed');
  });

  it('a line that counted fewer hits than the entry event fired is not its line: no completion unbinds it', async () => {
    const yaml = PROFILE_PARTIAL.replace('nmissed: 0, hits: 3 }', 'nmissed: 0, hits: 2 }');
    const known = caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data).values;
    expect(known.get('counters.of_return_probe')).toBe(true);
    expect(domainOf('counters.event', known)).toEqual(['other-event']);
    expect(domainOf('probe.event', known)).toEqual(['other-event']);
    // With the return event named, the unstated line takes its name.
    const one = caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${named('kfix/gate', undefined, yaml)}`, 't.yaml').data).values;
    expect(domainOf('counters.event', one)).toEqual(['kfix/gate']);
    const unbound = caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${PROFILE_PARTIAL}`, 't.yaml').data).values;
    expect(domainOf('counters.event', unbound)).toEqual(['other-event', 'other-event-2']);
  });
});

// A case the oracle generated from c5-missing-pair-reset (test/oracle): an entry probe's count
// (ledger.entry_events) is unknown, and one value of it (11, one hit more than the ledger's 10
// entries) makes the case observer-gap where 10 leaves fully-observed possible. Ranking `decides`
// ran out on that field and, since the fold does not list it (only a constraint reads it), dropped
// it while calling the list exact. A field ranking did not judge is kept, and the list marked a
// superset.
const ENTRY_EVENTS_UNKNOWN = `kernel: {release: 6.12.95+deb12-amd64, arch: x86_64, possible_cpus: 4, preemption: true}
probe: {interface: module, target: mydrv_submit, registration: {result: ok, epoch: load-2}, armed: true, maxactive: {requested: 16, effective: 16}, entry_handler: {present: true, can_filter: false}, handler: {may_sleep: false, blocking_locks: false, does_io: false, heavy_printk: false, bounded_storage: true}, event: other-event}
coverage: {blacklisted: false, inlined_call_sites: none, clones: [], unusual_return: false}
counters: {source: module-field, start: {epoch: load-2, nmissed: 2, hits: 3, recursion_misses: 17, kprobe_nmissed: 17}, end: {epoch: load-2, nmissed: 2, recursion_misses: 0, hits: 3}, event: other-event}
ledger: {eligible: 10, identity: instance-data, entries: 10, returns: 10, filtered: 0, workload_quiesced: true, completed_without_return: 0, foreign_records: 0, lost_events: 0, buffer_overruns: 4, returns_without_entry: 3, printk_dropped: 3, in_flight_at_stop: 0, no_probe_evidence: 3}
concurrency: {observed_demand_high_water: 2, recursion_depth: 17, observed_high_water: 5}
fixture: {gated: true}
`;

describe('decides keeps what ranking could not judge', () => {
  it('an unjudged field the fold does not list stays in decides, and the list says it is a superset', async () => {
    const v = await judge(ENTRY_EVENTS_UNKNOWN);
    expect(v.possible).toEqual(['observer-gap', 'fully-observed']);
    // The field does split the answer: one of its values decides the case.
    const split = await judge(ENTRY_EVENTS_UNKNOWN.replace('no_probe_evidence: 3}', 'no_probe_evidence: 3, entry_events: 11}'));
    expect(split.verdict).toBe('observer-gap');
    expect(v.decides).toEqual(expect.arrayContaining(['counters.end.kprobe_nmissed', 'ledger.entry_events']));
    expect(v.decidesExact).toBe(false);
  });
});
