import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCase } from '../../src/case/parse.js';
import { caseFacts } from '../../src/facts/facts.js';
import { evaluateCase, loadRules, type Rules } from '../../src/index.js';

// Issue 20: a derived fact whose input is unknown is unknown, unless every value of that input
// gives the same answer. Each expectation here is worked out by hand from the kernel facts the
// derivation cites, never from the code under test.

const root = path.resolve(import.meta.dirname, '../..');
const parse = (yaml: string) => parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data;
const value = (yaml: string, name: string) => caseFacts(parse(yaml)).values.get(name);

let rules: Rules;
beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
});

describe('an unstated tracefs maxactive', () => {
  const kernel = 'kernel: { release: 6.1.0-50-amd64, version: 6.1.176, possible_cpus: 2 }';
  it.each([
    // r: gives the default (10 here) and r2: gives 2: both are completions of an unstated request.
    ['no request and no read-back: no pool', 'probe: { interface: tracefs }', undefined],
    ['r8: is 8', 'probe: { interface: tracefs, maxactive: { requested: 8 } }', 8],
    ['the read-back wins', 'probe: { interface: tracefs, maxactive: { effective: 10 } }', 10],
    // The C API's 0 is "use the default", stated: max(10, 2 x 2 CPUs).
    ['a module asking 0 gets the default', 'probe: { interface: module, maxactive: { requested: 0 } }', 10],
    // rp.maxactive = 0 gives 10 here, rp.maxactive = 4 gives 4: an unstated one is no pool.
    ['a module with no stated request: no pool', 'probe: { interface: module }', undefined],
    // bpftrace's kretprobe sets none: the default, max(10, 2 x 2); with its attach unsaid, a
    // trampoline (no pool) and a kprobe_multi link (its own) are completions too.
    ['a bpftrace kretprobe sets none: the default', 'probe: { interface: bpftrace, bpf_attach: perf-kretprobe }', 10],
    ['bpftrace with the attach unsaid: no pool size', 'probe: { interface: bpftrace }', undefined],
  ])('%s', (_, probe, expected) => {
    expect(value(`${kernel}\n${probe}`, 'capacity.effective_maxactive')).toBe(expected);
  });

  // The lab-6-1-constrained session before the pool is asked: demand 3 and a miss-column rise.
  // With the default pool of 10 the rise reads as re-entry (observer-gap); with r2: it is pool misses.
  const partial = `${kernel}
probe: { interface: tracefs, target: pipe_read, event: kfix/gate, registration: { result: ok, epoch: reg-1 }, armed: true, entry_handler: { present: false } }
concurrency: { observed_high_water: 2, observed_demand_high_water: 3 }
counters: { source: kprobe_profile, event: kfix/gate, start: { epoch: reg-1, nmissed: 0, hits: 0 }, end: { epoch: reg-1, nmissed: 1, hits: 2 } }
ledger: { entry_events: 3, returns_without_entry: 0 }
`;
  it('leaves the verdict open between the pool and re-entry until the request is known', async () => {
    const v = await evaluateCase(parse(partial), rules);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'observer-gap']));
    // The pool's size splits it: the read-back wins over the request, so once the search is exact
    // (the entry events bound the entry records: constraints/entry-events-cover-pool-misses) the
    // read-back is the field whose values split it; the request alone no longer does.
    expect(v.decides.filter((f) => f.startsWith('probe.maxactive.'))).not.toEqual([]);
  });
  it('and r2: leaves one call of the three beyond the pool', () => {
    expect(value(partial.replace('armed: true,', 'armed: true, maxactive: { requested: 2 },'), 'capacity.pool_excess')).toBe(1);
    expect(value(partial, 'capacity.pool_excess')).toBeUndefined();
  });
});

describe('a kprobe_profile line with a separate entry event', () => {
  const base = (probeEvent: string, counters: string, hits: string) => `kernel: { release: 6.12.95, possible_cpus: 2 }
probe: { interface: tracefs${probeEvent} }
counters: { source: kprobe_profile${counters}, start: { epoch: reg-1, nmissed: 0, hits: 0 }, end: { epoch: reg-1, nmissed: 0, ${hits} } }
ledger: { entry_events: 3 }
`;
  it.each([
    // The entry line would also read 3 hits and 0 misses: either line fits the numbers.
    ['the return event named, the line not', ', event: kfix/gate', '', 'hits: 3', undefined],
    ['neither named: not bound either', '', '', 'hits: 3', undefined],
    // Each entry record is a hit of the entry event: a line with 2 hits against 3 records is not its line.
    ['fewer hits than entry records: not the entry line', '', '', 'hits: 2', true],
    ['the line named as the return event', ', event: kfix/gate', ', event: kfix/gate', 'hits: 3', true],
    ['the entry event named', ', event: kfix/gate', ', event: kfix/gate_entry', 'hits: 3', false],
  ])('%s', (_, probeEvent, counters, hits, expected) => {
    expect(value(base(probeEvent, counters, hits), 'counters.of_return_probe')).toBe(expected);
  });
});

describe('every eligible operation recorded', () => {
  const ledger = (l: string, depth = 'recursion_depth: 1') => `concurrency: { ${depth} }\nledger: { eligible: 20${l} }`;
  it.each([
    // s1 before its records are counted: 20 of 20 recorded, or 0 of 20, are both completions.
    ['records not counted yet', ledger(''), undefined],
    ['returns not counted yet', ledger(', entries: 20, foreign_records: 0'), undefined],
    ['every record the test\'s own', ledger(', entries: 20, returns: 20, foreign_records: 0'), true],
    // 19 entries cannot reach 20 whatever the foreign records are (they only take records away).
    ['an entry short, foreign records unknown', ledger(', entries: 19, returns: 20'), false],
    ['4 of 24 records foreign', ledger(', entries: 24, returns: 24, foreign_records: 4'), true],
    ['5 of 24 records foreign', ledger(', entries: 24, returns: 24, foreign_records: 5'), false],
    ['nesting unknown', ledger(', entries: 20, returns: 20, foreign_records: 0', 'workers: 2'), undefined],
    ['nested calls inflate the counts', ledger(', entries: 20, returns: 20, foreign_records: 0', 'recursion_depth: 2'), false],
  ])('%s', (_, yaml, expected) => {
    expect(value(yaml, 'bounds.every_eligible_recorded')).toBe(expected);
  });

  // The s1 session before the ledger questions: the pool-miss count rose by 4 within the
  // registration. Whether those were the test's calls depends on records not yet counted.
  const partial = `kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }
probe: { interface: module, target: mydrv_submit, registration: { result: ok, epoch: load-1 }, armed: true, entry_handler: { present: true, can_filter: false }, handler: { may_sleep: false, blocking_locks: false, does_io: false } }
concurrency: { recursion_depth: 1 }
counters: { source: module-field, start: { epoch: load-1, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: load-1, nmissed: 4, kprobe_nmissed: 0 } }
ledger: { eligible: 20 }
`;
  it('leaves a miss rise open until the records are counted', async () => {
    const v = await evaluateCase(parse(partial), rules);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'fully-observed']));
  });
  it('and 20 of 20 recorded makes the misses other callers\'', async () => {
    const v = await evaluateCase(parse(partial.replace('eligible: 20', 'eligible: 20, identity: instance-data, entries: 20, returns: 20, filtered: 0, workload_quiesced: true, lost_events: 0, foreign_records: 0')), rules);
    expect(v.verdict).toBe('fully-observed');
  });
});

describe('BPF recursion misses with only the end count', () => {
  it.each([
    // bpftool's recursion_misses counts since the program was loaded: 3 may all predate the test.
    ['end 3, start unknown', 'end: { recursion_misses: 3 }', undefined],
    ['end 0: none within the test, whatever the start', 'end: { recursion_misses: 0 }', 0],
    ['0 -> 3', 'start: { recursion_misses: 0 }, end: { recursion_misses: 3 }', 3],
    ['3 -> 3', 'start: { recursion_misses: 3 }, end: { recursion_misses: 3 }', 0],
  ])('%s', (_, snaps, expected) => {
    expect(value(`probe: { interface: bpf-link }\ncounters: { source: bpf-link, ${snaps} }`, 'counters.recursion_misses_seen')).toBe(expected);
  });
});

describe('return records complete', () => {
  // A perf probe reads its records through perf's per-CPU buffers: an overrun there loses records.
  const perf = (ledger: string) => `probe: { interface: perf-probe }\nledger: { ${ledger} }`;
  it.each([
    ['no lost events, overruns unknown', perf('lost_events: 0'), undefined],
    ['no lost events, no overruns', perf('lost_events: 0, buffer_overruns: 0'), true],
    ['an overrun', perf('lost_events: 0, buffer_overruns: 2'), false],
    // tracefs writes only to the trace ring buffer: a perf overrun is not a channel of its records.
    ['tracefs: overruns are not its channel', 'probe: { interface: tracefs }\nledger: { lost_events: 0 }', true],
  ])('%s', (_, yaml, expected) => {
    expect(value(yaml, 'ledger.return_records_complete')).toBe(expected);
  });
});
