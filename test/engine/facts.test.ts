import { describe, expect, it } from 'vitest';
import { parseCase } from '../../src/case/parse.js';
import { caseFacts } from '../../src/facts/facts.js';

const facts = (yaml: string) => caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data);
const value = (yaml: string, name: string) => facts(yaml).values.get(name);
const needs = (yaml: string, name: string) => facts(yaml).needs.get(name);

describe('derived facts', () => {
  it.each([
    ['a count', 'kernel: { possible_cpus: 2 }', 10],
    ['a cpulist is a population count, not max+1', 'kernel: { possible_cpus: "0-3,8-11" }', 16],
    ['many CPUs', 'kernel: { possible_cpus: "0-31" }', 64],
  ])('default maxactive from %s', (_, yaml, expected) => {
    expect(value(yaml, 'capacity.default_maxactive')).toBe(expected);
  });

  it.each([
    ['C API, nonpositive request', 'module', 0, 2, 10],
    ['C API, positive request', 'module', 5, 2, 5],
    ['tracefs r8', 'tracefs', 8, 2, 8],
    ['bpftrace cannot choose', 'bpftrace', 0, 8, 16],
  ])('effective maxactive: %s', (_, iface, requested, cpus, expected) => {
    expect(value(`kernel: { possible_cpus: ${cpus} }\nprobe: { interface: ${iface}, maxactive: { requested: ${requested} } }`, 'capacity.effective_maxactive')).toBe(expected);
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

  it('a delta within one epoch is the difference', () => {
    expect(value('counters: { start: { epoch: a, nmissed: 1 }, end: { epoch: a, nmissed: 4 } }', 'counters.delta.nmissed')).toBe(3);
  });

  it('a delta across epochs is unknown and asks for a start snapshot in the end epoch', () => {
    const y = 'counters: { start: { epoch: a, nmissed: 40 }, end: { epoch: b, nmissed: 0 } }';
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
    expect(needs(y, 'counters.delta.nmissed')).toEqual(['counters.start.nmissed']);
    expect(value(y, 'counters.delta_valid')).toBe(false);
  });

  it('a counter that went down under one label is a reset: no delta', () => {
    const y = 'counters: { start: { epoch: a, nmissed: 12 }, end: { epoch: a, nmissed: 3 } }';
    expect(value(y, 'counters.went_down')).toBe(true);
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
  });

  it('unknown stays unknown: a missing end snapshot leaves the delta undecided, naming the field', () => {
    const y = 'counters: { start: { epoch: a, nmissed: 0 } }';
    expect(value(y, 'counters.delta.nmissed')).toBeUndefined();
    expect(needs(y, 'counters.delta.nmissed')).toContain('counters.end.nmissed');
  });

  it('a level summed miss column proves the kprobe part level too; a rising one cannot be split', () => {
    expect(value('counters: { source: kprobe_profile, start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 2 } }', 'counters.delta.kprobe_nmissed')).toBe(0);
    expect(value('counters: { source: kprobe_profile, start: { epoch: a, nmissed: 2 }, end: { epoch: a, nmissed: 3 } }', 'counters.delta.kprobe_nmissed')).toBeUndefined();
  });

  it('filtered is 0 when the entry handler cannot filter, unknown when it might', () => {
    expect(value('probe: { entry_handler: { present: true, can_filter: false } }', 'accounting.filtered')).toBe(0);
    expect(value('probe: { entry_handler: { present: true } }', 'accounting.filtered')).toBeUndefined();
  });

  it('admitted calls come from entry events less misses and filtered calls when entries are not recorded', () => {
    const y = 'probe: { entry_handler: { present: false } }\ncounters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\nledger: { entry_events: 3, returns: 2 }';
    expect(value(y, 'accounting.accepted')).toBe(2);
    expect(value(y, 'accounting.open_at_stop')).toBe(0);
  });

  it.each([
    ['not drained: open calls are in flight', false, 2, 0],
    ['drained: open calls are unexplained', true, 0, 2],
  ])('open calls at stop, %s', (_, quiesced, inFlight, unexplained) => {
    const y = `ledger: { entries: 5, returns: 3, workload_quiesced: ${quiesced} }`;
    expect(value(y, 'accounting.in_flight_at_stop')).toBe(inFlight);
    expect(value(y, 'accounting.unexplained')).toBe(unexplained);
  });

  it('open calls with an unknown drain state are undecided, naming ledger.workload_quiesced', () => {
    const y = 'ledger: { entries: 5, returns: 3 }';
    expect(value(y, 'accounting.in_flight_at_stop')).toBeUndefined();
    expect(needs(y, 'accounting.in_flight_at_stop')).toContain('ledger.workload_quiesced');
  });

  it('the identity balances when every call sits in one bucket', () => {
    const y = 'probe: { entry_handler: { present: false } }\ncounters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\nledger: { eligible: 3, entries: 2, returns: 2, workload_quiesced: true }';
    const f = facts(y);
    expect(['returned', 'capacity_missed', 'not_covered', 'sum'].map((k) => f.values.get(`accounting.${k}`))).toEqual([2, 1, 0, 3]);
    expect(f.values.get('accounting.balanced')).toBe(true);
  });

  it('explicit unknown and null read as unknown, never as false or zero', () => {
    const f = facts('probe: { armed: unknown }\nledger: { filtered: null }');
    expect(f.values.has('probe.armed')).toBe(false);
    expect(f.values.has('ledger.filtered')).toBe(false);
  });

  it('records prove a probe was armed', () => {
    expect(value('ledger: { entries: 2 }', 'probe.was_armed')).toBe(true);
    expect(value('ledger: { entries: 0 }', 'probe.was_armed')).toBeUndefined();
  });
});
