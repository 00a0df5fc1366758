import { describe, expect, it } from 'vitest';
import { parseCase } from '../../src/case/parse.js';
import { domainOf } from '../../src/engine/domains.js';
import { caseFacts } from '../../src/facts/facts.js';

// Issue 21: probe.kind: entry (a kprobe) takes no instance from a pool (kernel-facts.md §2) and
// counts only kp.nmissed (§4); nothing returns through it. One owner (src/facts/capacity.ts
// isEntryProbe) and every derivation that reads it; the same case without the kind is the return
// probe the format describes, and keeps its old facts.
const facts = (yaml: string) => caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data).values;
const BASE = 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\n';

describe('an entry probe in the facts', () => {
  it.each([
    // [fact, entry probe's value, the same case read as a return probe]
    ['probe.is_entry', true, false],
    ['capacity.has_pool', false, true],
    ['capacity.effective_maxactive', undefined, 10],
    ['capacity.pool_short', false, undefined],
    ['counters.pool_missed', false, undefined],
    ['counters.column_is_sum', false, true],
    ['counters.delta.nmissed', 0, undefined],
    ['counters.delta.kprobe_nmissed', 5, undefined],
    ['counters.delta.missed_total', 5, 5],
    ['accounting.open_at_stop', 0, undefined],
    ['accounting.in_flight_at_stop', 0, undefined],
    ['accounting.unexplained', 0, undefined],
    ['accounting.filtered', 0, undefined],
    ['accounting.returned', 97, undefined],
  ])('%s', (fact, entry, ret) => {
    const yaml = `${BASE}probe: { interface: bpf-link, target: ip_rcv, KIND registration: { result: ok, epoch: e } }\ncounters: { source: bpf-link, start: { epoch: e, nmissed: 0 }, end: { epoch: e, nmissed: 5 } }\nledger: { eligible: 100, entries: 97 }\n`;
    expect([fact, facts(yaml.replace('KIND', 'kind: entry,')).get(fact)]).toEqual([fact, entry]);
    // The return side is a kprobe perf link's kretprobe (its attach said: unsaid, it may be a trampoline).
    expect([fact, facts(yaml.replace('KIND', 'bpf_attach: perf-kretprobe,')).get(fact)]).toEqual([fact, ret]);
  });

  it('an entry probe read through a module\'s fields: kp.nmissed is its one miss figure, no pool part', () => {
    const v = facts(`${BASE}probe: { interface: module, kind: entry, registration: { result: ok, epoch: e } }\ncounters: { source: module-field, start: { epoch: e, kprobe_nmissed: 1 }, end: { epoch: e, kprobe_nmissed: 4 } }\n`);
    expect(v.get('counters.delta.column')).toBe(3);
    expect(v.get('counters.delta.nmissed')).toBe(0);
    expect(v.get('counters.delta.kprobe_nmissed')).toBe(3);
    expect(v.get('counters.pool_missed')).toBe(false);
  });

  it('a stated in-flight figure of an entry probe contradicts it (nothing of it stays open)', () => {
    expect(facts(`${BASE}probe: { kind: entry }\nledger: { in_flight_at_stop: 2 }\n`).get('accounting.open_contradiction')).toBe(true);
    expect(facts(`${BASE}probe: { kind: entry }\nledger: { in_flight_at_stop: 0 }\n`).get('accounting.open_contradiction')).toBe(false);
  });

  it('completions never invent a kind, and give an entry probe no pool and no return side', () => {
    const entry = facts(`${BASE}probe: { kind: entry }\n`);
    const ret = facts(BASE);
    expect(domainOf('probe.kind', ret)).toEqual([]);
    expect(domainOf('probe.maxactive.requested', entry)).toEqual([]);
    expect(domainOf('probe.maxactive.effective', entry)).toEqual([]);
    expect(domainOf('probe.bpf_attach', entry)).toEqual([]);
    expect(domainOf('ledger.returns', entry)).toEqual([0]);
    expect(domainOf('ledger.in_flight_at_stop', entry)).toEqual([0]);
    expect(domainOf('probe.maxactive.requested', ret).length).toBeGreaterThan(0);
  });
});

describe("interpret/entry-probe-calls-unrecorded says only the counts the case has", () => {
  it.each([
    ['i21e-entry-probe-lost-eligible-records', /Records lost: at least 52\./, /Operations with no record/],
    ['i21e-entry-probe-independent-record', /Operations with no record: 3\./, /Records lost/],
  ])('%s', async (name, has, hasNot) => {
    const { loadRules, evaluateCase, loadCase } = await import('../../src/index.js');
    const v = await evaluateCase(await loadCase(`${import.meta.dirname}/../../cases/exact/${name}.yaml`), await loadRules(`${import.meta.dirname}/../../rules`));
    const f = v.findings.find((x) => x.rule === 'interpret/entry-probe-calls-unrecorded');
    expect(f?.explanation).toMatch(has);
    expect(f?.explanation).not.toMatch(hasNot);
    expect(f?.explanation).not.toMatch(/\bunknown\b/);
  });
});
