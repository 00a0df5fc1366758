import { describe, expect, it } from 'vitest';
import { parseCase } from '../../src/case/parse.js';
import { caseFacts } from '../../src/facts/facts.js';

const facts = (yaml: string) => caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data);
const value = (yaml: string, name: string) => facts(yaml).values.get(name);
const needs = (yaml: string, name: string) => facts(yaml).needs.get(name);

describe('derived facts', () => {
  it.each([
    ['a count', 'kernel: { release: 6.12.95, possible_cpus: 2 }', 10],
    ['a cpulist is a population count, not max+1', 'kernel: { release: 6.12.95, possible_cpus: "0-3,8-11" }', 16],
    ['many CPUs', 'kernel: { release: 6.12.95, possible_cpus: "0-31" }', 64],
    ['5.15 without preemption: the CPU count', 'kernel: { release: 5.15.30, preemption: false, possible_cpus: 2 }', 2],
    ['5.15 with preemption', 'kernel: { release: 5.15.30, preemption: true, possible_cpus: 2 }', 10],
    ['6.1.3 has the 6.2 default (stable backport)', 'kernel: { release: 6.1.3, preemption: false, possible_cpus: 2 }', 10],
    ['6.1.2 does not', 'kernel: { release: 6.1.2, preemption: false, possible_cpus: 2 }', 2],
  ])('default maxactive from %s', (_, yaml, expected) => {
    expect(value(yaml, 'capacity.default_maxactive')).toBe(expected);
  });

  it.each([
    ['a vendor build below 6.2 without the preemption model', 'kernel: { release: 5.15.0-91-generic, possible_cpus: 2 }'],
    ['an upstream 5.15 without the preemption model', 'kernel: { release: 5.15.30, possible_cpus: 2 }'],
    ['no release', 'kernel: { possible_cpus: 2 }'],
  ])('default maxactive stays unknown for %s', (_, yaml) => {
    expect(value(yaml, 'capacity.default_maxactive')).toBeUndefined();
  });

  it.each([
    ['5.17 sums the column', '5.17.0', true],
    ['5.10.94 has the stable backport', '5.10.94', true],
    ['5.10.93 does not', '5.10.93', false],
    ['5.4.174 has the stable backport ([PATCH 5.4 253/320], 5.4.174-rc1)', '5.4.174', true],
    ['5.4.173 does not', '5.4.173', false],
    ['5.16.3 has it', '5.16.3', true],
    ['5.15.16 does not', '5.15.16', false],
    ['a vendor 5.15 build', '5.15.0-91-generic', undefined],
    ['4.19 never got it', '4.19.300', false],
    ['a vendor build above 5.17', '6.1.0-50-amd64', true],
  ])('kprobe_profile miss column includes pool misses: %s', (_, release, expected) => {
    expect(value(`kernel: { release: ${release} }`, 'kernel.profile_sums_pool_misses')).toBe(expected);
  });

  it.each([
    ['C API, nonpositive request', 'module', 0, 2, 10],
    ['C API, positive request', 'module', 5, 2, 5],
    ['tracefs r8', 'tracefs', 8, 2, 8],
    ['bpftrace cannot choose', 'bpftrace', 0, 8, 16],
  ])('effective maxactive: %s', (_, iface, requested, cpus, expected) => {
    // A BPF tool's return probe is a perf kretprobe only when said (an unsaid attach may be a trampoline).
    const attach = iface === 'bpftrace' ? ', bpf_attach: perf-kretprobe' : '';
    expect(value(`kernel: { release: 6.12.95, possible_cpus: ${cpus} }\nprobe: { interface: ${iface}${attach}, maxactive: { requested: ${requested} } }`, 'capacity.effective_maxactive')).toBe(expected);
  });

  it.each([
    ['tracefs r0', 'tracefs', 0, true],
    ['tracefs r4097', 'tracefs', 4097, true],
    ['tracefs r4096', 'tracefs', 4096, false],
    ['C API 0 means default', 'module', 0, false],
  ])('request rejected: %s', (_, iface, requested, expected) => {
    expect(value(`probe: { interface: ${iface}, maxactive: { requested: ${requested} } }`, 'capacity.request_rejected')).toBe(expected);
  });

  it('a read-back effective value wins over the computed one', () => {
    expect(value('kernel: { possible_cpus: 2 }\nprobe: { interface: tracefs, maxactive: { effective: 10 } }', 'capacity.effective_maxactive')).toBe(10);
  });

  const MOD = 'probe: { interface: module, registration: { epoch: a } }\ncounters: { source: module-field, ';
  it('a delta within the registration epoch is the difference', () => {
    expect(value(`${MOD}start: { epoch: a, nmissed: 1, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 4, kprobe_nmissed: 0 } }`, 'counters.delta.nmissed')).toBe(3);
  });

  it('a delta across epochs is unknown and never asks for a known field', () => {
    const y = `${MOD}start: { epoch: a, nmissed: 40 }, end: { epoch: b, nmissed: 0 } }`;
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
    // Nothing known is asked for again (the split's own inputs, such as the demand, may be listed:
    // which of them still matters is for the completion semantics, not the needs closure).
    const f = facts(y);
    expect((f.needs.get('counters.delta.nmissed') ?? []).filter((n) => f.values.has(n) || /^counters\.(start|end)\.(epoch|nmissed)$/.test(n))).toEqual([]);
    expect(value(y, 'counters.delta_valid')).toBe(false);
  });

  it.each([
    ['an epoch that is not the registration', 'probe: { interface: module, registration: { epoch: b } }\ncounters: { source: module-field, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 2 } }', false],
    ['the entry event line', 'probe: { interface: tracefs, event: g/ret, registration: { epoch: a } }\ncounters: { source: kprobe_profile, event: g/ret_entry, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 2 } }', false],
    ['kprobe_profile for a bpftrace probe', 'probe: { interface: bpftrace, registration: { epoch: a } }\ncounters: { source: kprobe_profile, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 2 } }', false],
    ['the return event line', 'probe: { interface: tracefs, event: g/ret, registration: { epoch: a } }\ncounters: { source: kprobe_profile, event: ret, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 2 } }', true],
  ])('counter delta validity: %s', (_, yaml, expected) => {
    expect(value(yaml, 'counters.delta_valid')).toBe(expected);
  });

  it.each([
    ['a module without its kprobe_nmissed pair', `${MOD}start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 2 } }`, undefined],
    ['a module with both pairs level', `${MOD}start: { epoch: a, nmissed: 2, kprobe_nmissed: 1 }, end: { epoch: a, nmissed: 2, kprobe_nmissed: 1 } }`, false],
    ['kprobe_profile without its hits pair', 'counters: { source: kprobe_profile, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 0 } }', undefined],
    ['kprobe_profile with both pairs', 'counters: { source: kprobe_profile, start: { epoch: a, nmissed: 0, hits: 1 }, end: { epoch: a, nmissed: 0, hits: 4 } }', false],
    // A fresh registration's counts start at 0 (register_kretprobe, register_kprobe): an unsigned
    // count cannot end below 0, so the end left out cannot show a fall (issue 20, silent 3).
    ['a module whose kprobe_nmissed started at 0, its end unread', `${MOD}start: { epoch: a, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 99 } }`, false],
    ['kprobe_profile whose hits started at 0, their end unread', 'counters: { source: kprobe_profile, start: { epoch: a, nmissed: 0, hits: 0 }, end: { epoch: a, nmissed: 3 } }', false],
    ['a module whose kprobe_nmissed started above 0, its end unread', `${MOD}start: { epoch: a, nmissed: 0, kprobe_nmissed: 1 }, end: { epoch: a, nmissed: 99 } }`, undefined],
  ])('a missing counter pair is not "did not go down" (issue 20, class 5): %s', (_, y, expected) => {
    expect(value(y, 'counters.went_down')).toBe(expected);
  });

  it('a counter that went down under one label is a reset: no delta', () => {
    const y = `${MOD}start: { epoch: a, nmissed: 12 }, end: { epoch: a, nmissed: 3 } }`;
    expect(value(y, 'counters.went_down')).toBe(true);
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
  });

  it('unknown stays unknown: a missing end snapshot leaves the delta undecided, naming the field', () => {
    const y = `${MOD}start: { epoch: a, nmissed: 0 } }`;
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
    expect(needs(y, 'counters.delta.nmissed')).toContain('counters.end.nmissed');
  });

  it('a level summed miss column proves the kprobe part level too; a rising one cannot be split', () => {
    const T = 'kernel: { release: 6.12.95 }\nprobe: { interface: tracefs, registration: { epoch: a } }\ncounters: { source: kprobe_profile, ';
    expect(value(`${T}start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 2 } }`, 'counters.delta.kprobe_nmissed')).toBe(0);
    expect(value(`${T}start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 3 } }`, 'counters.delta.kprobe_nmissed')).toBeUndefined();
    // Before 5.17 the column of a return event is the kprobe's count alone.
    expect(value(`${T.replace('6.12.95', '5.10.20')}start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 3 } }`, 'counters.delta.kprobe_nmissed')).toBe(1);
    expect(value(`${T.replace('6.12.95', '5.10.20')}start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 3 } }`, 'counters.delta.nmissed')).toBeUndefined();
  });

  it('filtered is 0 when the entry handler cannot filter, unknown when it might', () => {
    expect(value('probe: { entry_handler: { present: true, can_filter: false } }', 'accounting.filtered')).toBe(0);
    expect(value('probe: { entry_handler: { present: true } }', 'accounting.filtered')).toBeUndefined();
  });

  it('admitted calls come from entry events less misses and filtered calls when entries are not recorded', () => {
    const y = 'kernel: { release: 6.12.95 }\nprobe: { interface: tracefs, event: kfix/gate, registration: { epoch: a }, entry_handler: { present: false } }\ncounters: { source: kprobe_profile, event: kfix/gate, start: { epoch: a, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 1, kprobe_nmissed: 0 } }\nledger: { entry_events: 3, returns: 2 }';
    expect(value(y, 'accounting.accepted')).toBe(2);
    expect(value(y, 'accounting.open_at_stop')).toBe(0);
  });

  // On 6.12 the profile's miss column is rp->nmissed + kp.nmissed (kernel-facts.md §4). A pool miss
  // is a call the entry probe saw; a kprobe-level miss skips every handler at that address, the
  // entry probe's too. With the split unknown the rise is either, so 2 and 3 accepted calls are
  // both completions, and entry records filled in later could take a figure back.
  it('with a summed miss column whose split is unknown, the entry probe gives no accepted count', () => {
    const y = 'kernel: { release: 6.12.95 }\nprobe: { interface: tracefs, event: kfix/gate, registration: { epoch: a }, entry_handler: { present: false } }\ncounters: { source: kprobe_profile, event: kfix/gate, start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\nledger: { entry_events: 3, returns: 2 }';
    expect(value(y, 'accounting.accepted')).toBeUndefined();
    expect(value(`${y.replace('returns: 2', 'returns: 2, entries: 3')}`, 'accounting.accepted')).toBe(3);
  });

  it.each([
    ['not drained: open calls are in flight', false, 2, 0],
    ['drained: open calls are unexplained', true, 0, 2],
  ])('open calls at stop, %s', (_, quiesced, inFlight, unexplained) => {
    const y = `probe: { interface: module }\nledger: { entries: 5, returns: 3, workload_quiesced: ${quiesced}, completed_without_return: 0 }`;
    expect(value(y, 'accounting.in_flight_at_stop')).toBe(inFlight);
    expect(value(y, 'accounting.unexplained')).toBe(unexplained);
  });

  it('open calls with an unknown drain state are undecided, naming ledger.workload_quiesced', () => {
    const y = 'ledger: { entries: 5, returns: 3 }';
    expect(value(y, 'accounting.in_flight_at_stop')).toBeUndefined();
    expect(needs(y, 'accounting.in_flight_at_stop')).toContain('ledger.workload_quiesced');
  });

  it('the identity balances when every call sits in one bucket', () => {
    const y = 'probe: { interface: module, registration: { epoch: a }, entry_handler: { present: false } }\ncounters: { source: module-field, start: { epoch: a, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 1, kprobe_nmissed: 0 } }\nledger: { eligible: 3, entries: 2, returns: 2, workload_quiesced: true }';
    const f = facts(y);
    expect(['returned', 'capacity_missed', 'not_covered', 'sum'].map((k) => f.values.get(`accounting.${k}`))).toEqual([2, 1, 0, 3]);
    expect(f.values.get('accounting.balanced')).toBe(true);
  });

  it('explicit unknown and null read as unknown, never as false or zero', () => {
    const f = facts('probe: { armed: unknown }\nledger: { filtered: null }');
    expect(f.values.has('probe.armed')).toBe(false);
    expect(f.values.has('ledger.filtered')).toBe(false);
  });

  it('a stated in-flight figure that contradicts entries - returns is flagged, not taken', () => {
    const y = 'ledger: { entries: 3, returns: 2, in_flight_at_stop: 0 }';
    expect(value(y, 'accounting.open_contradiction')).toBe(true);
    expect(value(y, 'accounting.open_at_stop')).toBe(1);
  });

  it('calls the entry event saw are not calls without any record', () => {
    const y = 'ledger: { eligible: 4, entry_events: 4, returns: 3 }';
    expect(value(y, 'accounting.no_evidence')).toBe(0);
  });

  it('records prove a registration whose result is unknown', () => {
    expect(value('ledger: { entries: 2 }', 'probe.registered')).toBe(true);
    expect(value('probe: { registration: { result: EINVAL } }\nledger: { entries: 2 }', 'probe.registered')).toBe(false);
    expect(value('ledger: { entries: 0 }', 'probe.registered')).toBeUndefined();
  });

  it('records prove a probe was armed', () => {
    expect(value('ledger: { entries: 2 }', 'probe.was_armed')).toBe(true);
    expect(value('ledger: { entries: 0 }', 'probe.was_armed')).toBeUndefined();
  });
});

// Struct kretprobe fields exist for every kretprobe, whichever interface built it (a bpftrace
// probe on unregister_kretprobe reads them, bpftrace#1035); an fprobe has none.
describe('struct kretprobe fields as the counter source', () => {
  it.each([
    ['module', true],
    ['tracefs', true],
    ['bpftrace, bpf_attach: perf-kretprobe', true],
    // Unsaid, the program may sit on a trampoline, which has no struct kretprobe (issue 20).
    ['bpftrace', undefined],
    ['other, bpf_attach: fexit', false],
    ['fprobe', false],
  ])('fit a %s return probe: %s', (iface, expected) => {
    expect(value(`probe: { interface: ${iface} }\ncounters: { source: module-field }`, 'counters.of_return_probe')).toBe(expected);
  });
});
