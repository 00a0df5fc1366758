import { describe, expect, it } from 'vitest';
import { LedgerBuilder, type EntrySemantics, type LedgerResult } from '../../src/ledger/ledger.js';
import type { OpRecord, ProbeRecord } from '../../src/ledger/records.js';
import { LogHistogram } from '../../src/ledger/histogram.js';
import fc from 'fast-check';
import { INTERVAL, NONE, POINT, RetroSweep, SWEEP_PAGE_SHIFT } from '../../src/ledger/sweep.js';
import { KeyHeap } from '../../src/ledger/heap.js';

type R = [ev: ProbeRecord['ev'], ts: number, task: number, inst?: string, op?: string, resNs?: number];
type O = [op: string, task: number, submit: number, done: number | null, reaches?: boolean];

function run(records: R[], ops?: O[], opts: { semantics?: EntrySemantics; nmissedDelta?: number; stop?: number; maxactive?: number; noFiltering?: boolean } = {}): { r: LedgerResult; warnings: number[] } {
  const opRecs: OpRecord[] = (ops ?? []).map(([op, task, submitNs, doneNs, reaches], i) => ({ op, task, submitNs, doneNs, reachesTarget: reaches ?? true, line: i + 1 }));
  let i = 0;
  const warnings: number[] = [];
  const b = new LedgerBuilder({
    semantics: opts.semantics ?? 'instance',
    nextOp: ops === undefined ? undefined : () => opRecs[i++],
    nmissedDelta: opts.nmissedDelta,
    captureStopNs: opts.stop,
    maxactive: opts.maxactive,
    noFiltering: opts.noFiltering,
    warn: (_s, line) => warnings.push(line),
  });
  records.forEach(([ev, tsNs, task, inst, op, resNs], n) => b.add({ ev, tsNs, task, inst, op, line: n + 1, resNs }));
  return { r: b.finish(), warnings };
}

describe('pairing', () => {
  it.each<[string, R[], Partial<LedgerResult['pairing']>, number, number[]]>([
    // name, records, pairing, high-water, durations (sorted)
    ['recursion without ids nests by the task stack', [['entry', 10, 1], ['entry', 20, 1], ['return', 30, 1], ['return', 100, 1]], { byTask: 2, ambiguous: 1, identity: 'task-and-depth' }, 2, [10, 90]],
    ['repeated calls by one task pair in order', [['entry', 10, 1], ['return', 20, 1], ['entry', 30, 1], ['return', 70, 1]], { byTask: 2, ambiguous: 0 }, 1, [10, 40]],
    ['interleaved tasks pair per task', [['entry', 10, 1], ['entry', 15, 2], ['return', 20, 2], ['return', 50, 1]], { byTask: 2, ambiguous: 0 }, 2, [5, 40]],
    ['instance ids pair across tasks and out of LIFO order', [['entry', 10, 1, 'a'], ['entry', 12, 1, 'b'], ['return', 20, 1, 'a'], ['return', 40, 1, 'b']], { byInstance: 2, byTask: 0, identity: 'instance-data' }, 2, [10, 28]],
    ['a return without an entry started before capture', [['return', 10, 1], ['entry', 20, 1], ['return', 25, 1]], { returnsWithoutEntry: 1, byTask: 1 }, 1, [5]],
    ['an entry without a return stays open', [['entry', 10, 1], ['entry', 20, 2], ['return', 30, 2]], { entriesWithoutReturn: 1, byTask: 1 }, 2, [10]],
    ['a reused instance id while open counts as a duplicate', [['entry', 10, 1, 'a'], ['entry', 20, 2, 'a'], ['return', 30, 2, 'a']], { duplicateInstances: 1, byInstance: 1 }, 1, [10]],
    ['records without id or task cannot pair', [['entry', 10, -1], ['return', 20, -1]], { byTask: 0, byInstance: 0, identity: 'none' }, 0, []],
  ])('%s', (_name, records, pairing, hw, durations) => {
    const { r } = run(records);
    expect(r.pairing).toMatchObject(pairing);
    expect(r.highWater.value).toBe(hw);
    expect(r.durations?.count ?? 0).toBe(durations.length);
    if (durations.length > 0) {
      expect(r.durations!.minNs).toBe(durations[0]);
      expect(r.durations!.maxNs).toBe(durations[durations.length - 1]);
    }
  });

  it('flags a return-without-entry high-water mark as a floor', () => {
    expect(run([['return', 10, 1]]).r.highWater.lowerBound).toBe(true);
  });

  it('warns with the line of the first out-of-order record', () => {
    const { r, warnings } = run([['entry', 10, 1], ['return', 30, 1], ['entry', 20, 2], ['return', 40, 2]]);
    expect(r.pairing.unsortedRecords).toBe(1);
    expect(r.pairing.firstUnsortedLine).toBe(3);
    expect(warnings).toContain(3);
  });
});

describe('classification against the operation ledger', () => {
  const ops: O[] = [
    ['returned', 1, 0, 100],
    ['in-flight', 2, 0, null],
    ['filtered', 3, 0, 100],
    ['silent', 4, 0, 100],
    ['no-return', 5, 0, 100],
    ['elsewhere', 6, 0, 100, false],
  ];
  const records: R[] = [
    ['entry', 10, 1],
    ['entry', 11, 2, 'x'],
    ['filtered', 12, 3],
    ['entry', 13, 5],
    ['entry', 14, 99],
    ['return', 50, 1],
    ['return', 60, 99],
    ['entry', 200, 1],
  ];
  it('classifies each operation and counts foreign records', () => {
    const { r } = run(records, ops, { nmissedDelta: 1 });
    expect(r.ops?.classification).toEqual({ returned: 1, in_flight_at_stop: 1, completed_without_return: 1, filtered: 1, no_probe_evidence: 1 });
    expect(r.ops?.eligible).toBe(5);
    expect(r.ops?.ineligible).toBe(1);
    // task 99's call, and task 1's call after its operation was done
    expect(r.pairing.foreign).toBe(3);
    // The one miss may be the silent operation's, or task 99's, or a nested call's: a bound, not a fact.
    expect(r.identity).toMatchObject({ eligible: 5, returned: 1, filtered: 1, in_flight_at_stop: 1, capacity_missed: null, not_covered: null, unexplained: 1, balanced: null, consistent: true });
    expect(r.identity?.bounds.capacity_missed).toEqual({ lo: 0, hi: 1, exact: false });
    expect(r.identity?.bounds.not_covered).toEqual({ lo: 0, hi: 1, exact: false });
  });

  it('leaves capacity_missed unknown without a miss-counter delta', () => {
    const { r } = run(records, ops);
    expect(r.identity?.capacity_missed).toBeNull();
    expect(r.identity?.balanced).toBeNull();
  });

  it('binds by op id when records carry one', () => {
    const { r } = run([['entry', 10, 7, 'i', 'returned'], ['return', 20, 7, 'i']], [['returned', 1, 0, 100]]);
    expect(r.ops?.classification.returned).toBe(1);
    expect(r.pairing.foreign).toBe(0);
  });

  it('with entry events, splits unreturned calls into capacity misses and in-flight calls', () => {
    // The kernel-notes fixture: r2, three gated readers, two returns, nmissed 1.
    const fixture: O[] = [['r1', 147, 0, 5000], ['r2', 148, 0, 5001], ['r3', 149, 0, 5002]];
    const recs: R[] = [['entry', 10, 147], ['entry', 20, 148], ['entry', 30, 149], ['return', 4000, 147], ['return', 4001, 148]];
    const { r } = run(recs, fixture, { semantics: 'event', nmissedDelta: 1, stop: 6000 });
    // One unreturned entry and one miss: it was the miss, exactly.
    expect(r.identity).toMatchObject({ eligible: 3, returned: 2, capacity_missed: 1, in_flight_at_stop: 0, unexplained: 0, balanced: true });
    // Two instances admitted (the pool of 2), three calls entered: demand is not admitted instances.
    expect(r.highWater).toMatchObject({ value: 2, exact: true, atNs: 20 });
    expect(r.demand).toMatchObject({ value: 3, exact: true, atNs: 30 });
    // A tracefs return event: no entry handler, so no call was rejected on purpose.
    const stopped = run(recs.slice(0, 3), fixture.map(([a, b, c]) => [a, b, c, null] as O), { semantics: 'event', nmissedDelta: 0, noFiltering: true });
    // No miss: all three were admitted and still running at stop.
    expect(stopped.r.identity).toMatchObject({ returned: 0, in_flight_at_stop: 3, capacity_missed: 0, balanced: true });
    // The miss counter rose by 0, so each open entry held an instance, and without a recorded
    // return it was still inside the function at the stop: all three overlap, admitted and demand.
    // (The lab's four tracefs `stopped` runs: the ledger gave a floor of 1 here before.)
    expect(stopped.r.highWater).toMatchObject({ value: 3, upper: 3, exact: true, atNs: 30 });
    expect(stopped.r.demand).toMatchObject({ value: 3, upper: 3, exact: true, atNs: 30 });
    // Without the counter none is known to hold an instance (0..3), and each entry may have
    // ended unseen: demand counts it at its entry only (1..3).
    const blind = run(recs.slice(0, 3), fixture.map(([a, b, c]) => [a, b, c, null] as O), { semantics: 'event' });
    expect(blind.r.highWater).toMatchObject({ value: 0, upper: 3, exact: false });
    expect(blind.r.demand).toMatchObject({ value: 1, upper: 3, exact: false });
    // With a handler that may reject calls, a level counter does not say an open entry held an
    // instance (a rejected call holds none): the marks stay bounds.
    const mayFilter = run(recs.slice(0, 3), fixture.map(([a, b, c]) => [a, b, c, null] as O), { semantics: 'event', nmissedDelta: 0 });
    expect(mayFilter.r.highWater).toMatchObject({ value: 0, upper: 3, exact: false });
    const unknown = run(recs.slice(0, 3), fixture.map(([a, b, c]) => [a, b, c, null] as O), { semantics: 'event', nmissedDelta: 1 });
    // One of the three running at stop was missed, which one is unknown: in flight 2..3, never called a miss on its own.
    expect(unknown.r.identity?.bounds.in_flight_at_stop).toEqual({ lo: 2, hi: 3, exact: false });
    expect(unknown.r.identity).toMatchObject({ in_flight_at_stop: null, balanced: null, consistent: true });
  });
});

describe('trace text: entry events without instance ids', () => {
  // Task 1 runs op A [0, 5200] then op B from 5400 (0.2 µs later); B's first entry prints as µs 5.
  const ops: O[] = [['A', 1, 0, 5200], ['B', 1, 5400, 9000]];
  const recs = (res: number, bEntry: number): R[] => [
    ['entry', 1000, 1, undefined, undefined, res],
    ['return', 4000, 1, undefined, undefined, res],
    ['entry', bEntry, 1, undefined, undefined, res],
    ['return', 8000, 1, undefined, undefined, res],
  ];

  it('an entry stamped in the microsecond two operations share binds to neither with certainty: both classes become bounds', () => {
    const { r } = run(recs(1000, 5000), ops, { semantics: 'event', nmissedDelta: 0, stop: 10000 });
    expect(r.pairing.ambiguousOpMatches).toBe(1);
    expect(r.ops?.uncertain).toBe(2);
    // Truth: both returned. Bounds must contain it, and nothing may be called exact that is not.
    const cb = r.ops!.classificationBounds;
    expect(cb.returned.exact).toBe(false);
    expect(cb.returned.lo).toBeLessThanOrEqual(2);
    expect(cb.returned.hi).toBeGreaterThanOrEqual(2);
    expect(cb.no_probe_evidence.lo).toBe(0);
    expect(r.identity?.balanced).toBeNull();
  });

  it('the same records with nanosecond stamps bind exactly', () => {
    const { r } = run(recs(1, 5600), ops, { semantics: 'event', nmissedDelta: 0, stop: 10000 });
    expect(r.pairing.ambiguousOpMatches).toBe(0);
    expect(r.ops?.uncertain).toBe(0);
    expect(r.ops?.classification).toMatchObject({ returned: 2, no_probe_evidence: 0 });
    expect(r.ops?.classificationBounds.returned).toEqual({ lo: 2, hi: 2, exact: true });
  });

  it('a missed call raises demand, not admitted instances, and is not open after its operation completes', () => {
    // Pool of 1: task 1 holds it [10, 100]; task 2 enters at 20 and is missed; task 3 at 200 gets it.
    const o: O[] = [['p', 1, 0, 150], ['q', 2, 0, 150], ['s', 3, 190, 400]];
    const rr: R[] = [['entry', 10, 1], ['entry', 20, 2], ['return', 100, 1], ['entry', 200, 3], ['return', 300, 3]];
    const { r } = run(rr, o, { semantics: 'event', nmissedDelta: 1, stop: 500, maxactive: 1 });
    expect(r.highWater).toMatchObject({ value: 1, exact: true, atNs: 10 });
    expect(r.demand).toMatchObject({ value: 2, exact: true, atNs: 20 });
    expect(r.identity).toMatchObject({ capacity_missed: 1, unexplained: 0, in_flight_at_stop: 0, balanced: true });
  });

  it('without the miss counter, an unreturned entry leaves admitted instances a floor with maxactive as the ceiling', () => {
    const o: O[] = [['p', 1, 0, 150], ['q', 2, 0, 150]];
    const rr: R[] = [['entry', 10, 1], ['entry', 20, 2], ['return', 100, 1]];
    const { r } = run(rr, o, { semantics: 'event', stop: 500, maxactive: 4 });
    expect(r.highWater).toMatchObject({ value: 1, upper: 2, exact: false, lowerBound: true });
    expect(r.identity?.bounds.capacity_missed).toEqual({ lo: 0, hi: 1, exact: false });
    expect(r.identity?.bounds.unexplained).toEqual({ lo: 0, hi: 1, exact: false });
  });
});

describe('key heap', () => {
  it('pops by key, then tie, whatever the order of pushes and pops', () => {
    const step = fc.record({ key: fc.integer({ min: 0, max: 20 }), tie: fc.integer({ min: 0, max: 5 }), pop: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300, size: 'max' }), (steps) => {
        const h = new KeyHeap<[number, number]>();
        const ref: [number, number][] = [];
        for (const st of steps) {
          if (st.pop) {
            ref.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
            expect(h.pop()).toEqual(ref.shift());
          } else {
            h.push([st.key, st.tie], st.key, st.tie);
            ref.push([st.key, st.tie]);
          }
          expect(h.size).toBe(ref.length);
        }
      }),
    );
  });
});

describe('retroactive high-water sweep', () => {
  it('counts only what resolves as counted, and names the first point to reach the mark', () => {
    const s = new RetroSweep();
    const a = s.open(10, 1);
    const b = s.open(20, 2);
    const c = s.open(30, 3);
    s.close(b, NONE); // b was a miss
    s.close(a, INTERVAL);
    s.close(c, INTERVAL);
    // a covers 10..; c covers 30..: at 30 both are open, b does not count.
    expect([s.value, s.at, s.line]).toEqual([2, 30, 3]);
  });

  it('keeps the earliest of equal maxima', () => {
    const s = new RetroSweep();
    const a = s.open(10, 1);
    s.close(a, INTERVAL);
    const b = s.open(20, 2);
    s.close(b, INTERVAL);
    expect([s.value, s.at]).toEqual([1, 10]);
  });

  it('holds memory in the mark and the open calls, not in the length, while an old call stays open', () => {
    const s = new RetroSweep();
    const stuck = s.open(0, 1);
    for (let i = 1; i <= 100000; i++) s.close(s.open(i * 10, i + 1), INTERVAL);
    expect(s.held).toBeLessThan(200);
    s.close(stuck, INTERVAL);
    expect(s.value).toBe(2);
    expect(s.at).toBe(10);
  });

  it.each([1, 3, SWEEP_PAGE_SHIFT])('equals the definition on any order of opens and closes (also closes repeated, like the end of capture does), pages of 2^%i points', (pageShift) => {
    // A script: each step opens a call, or closes an open one as INTERVAL, POINT or NONE.
    // Mostly INTERVAL closes of recent calls while an old call stays open: many resolved points, so the pruning (and its ties) runs.
    const step = fc.record({ open: fc.boolean(), pick: fc.nat(), how: fc.constantFrom(INTERVAL, INTERVAL, INTERVAL, POINT, NONE), again: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 600, size: 'max' }), (steps) => {
        const s = new RetroSweep(pageShift);
        const calls: { h: number; at: number; open: number; close: number; how: number }[] = [];
        const open: number[] = [];
        let clock = 0;
        for (const st of steps) {
          clock++;
          if (st.open || open.length === 0) {
            calls.push({ h: s.open(clock * 10, clock), at: clock * 10, open: clock, close: Infinity, how: NONE });
            open.push(calls.length - 1);
          } else {
            const k = open.splice(open.length - 1 - (st.pick % Math.min(open.length, 3)), 1)[0]!;
            const c = calls[k]!;
            c.close = clock;
            c.how = st.how;
            s.close(c.h, st.how);
            // A second close of the same call changes nothing.
            if (st.again) s.close(c.h, INTERVAL);
          }
        }
        for (const k of open) {
          calls[k]!.close = clock + 1;
          s.close(calls[k]!.h, NONE);
        }
        // The definition: at each entry instant, the calls counted over it.
        let best = 0;
        let bestAt: number | undefined;
        let bestLine: number | undefined;
        for (const p of calls) {
          let v = 0;
          for (const c of calls) {
            if (c.how === INTERVAL && c.open <= p.open && c.close > p.open) v++;
            else if (c.how === POINT && c === p) v++;
          }
          if (v > best) {
            best = v;
            bestAt = p.at;
            bestLine = p.open;
          }
        }
        expect([s.value, s.at, s.line]).toEqual([best, bestAt, bestLine]);
      }),
      { numRuns: 60 },
    );
  });

  it('lets final points go while some call is always open (a chain of overlapping calls)', () => {
    const s = new RetroSweep();
    let prev = s.open(0, 1);
    let most = 0;
    for (let i = 1; i <= 200000; i++) {
      const next = s.open(i * 10, i + 1);
      s.close(prev, INTERVAL);
      prev = next;
      most = Math.max(most, s.held);
    }
    expect(most).toBeLessThan(5000);
    expect(s.value).toBe(2);
  });

  it('reuses its pages: memory follows the most points held, not the number of calls', () => {
    // Calls that never return (misses outside every operation) stay open to the end; between
    // them, short calls come and go. The points held grow with the stuck calls only.
    const s = new RetroSweep(4);
    const stuck: number[] = [];
    let clock = 0;
    const bytesAt: number[] = [];
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 50000; i++) {
        clock += 10;
        if (i % 5000 === 0 && round === 0) stuck.push(s.open(clock, clock));
        s.close(s.open(clock, clock), INTERVAL);
      }
      bytesAt.push(s.bytes);
    }
    // 10 stuck calls and a mark of 11: at most 2 x 10 + 11 + 1 points after a prune, twice that
    // (and 64) before one; pages of 16 points of 53 bytes, one more for the page being filled.
    const most = 2 * (2 * stuck.length + (stuck.length + 1) + 1) + 64;
    expect(s.held).toBeLessThanOrEqual(most);
    expect(s.bytes).toBeLessThanOrEqual((Math.ceil(most / 16) + 1) * 16 * 53);
    // Rounds 2 to 4 open 150,000 more calls and need no new page.
    expect(bytesAt[3]).toBe(bytesAt[0]);
    for (const k of stuck) s.close(k, INTERVAL);
    expect(s.value).toBe(stuck.length + 1);
  });
});

describe('duration histogram', () => {
  it('keeps quantiles within the stated relative error in fixed memory', () => {
    const h = new LogHistogram();
    const values: number[] = [];
    for (let i = 1; i <= 20000; i++) {
      const v = Math.round(1000 * Math.pow(1.0007, i));
      values.push(v);
      h.add(v);
    }
    values.sort((a, b) => a - b);
    const s = h.summary()!;
    for (const [q, got] of [[0.5, s.p50Ns], [0.9, s.p90Ns], [0.99, s.p99Ns]] as const) {
      const exact = values[Math.ceil(q * values.length) - 1]!;
      expect(Math.abs(got - exact) / exact).toBeLessThanOrEqual(s.relativeError + 1e-9);
    }
    expect(s.maxNs).toBe(values[values.length - 1]);
  });
});
