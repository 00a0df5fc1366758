import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from '../cli/helpers.js';

/**
 * Issue 25's silent wrong answers, each a reference input (test/fixtures/ledger/truths/) with its
 * truth worked out by hand in the comment above its test, run through the CLI: exit code, stderr
 * (one line when there is one), the truth, and the input files unchanged.
 */
const FIX = path.join(ROOT, 'test/fixtures/ledger/truths');
const fx = (name: string) => path.join(FIX, name);

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-ledger-truths-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function sha(file: string): Promise<string> {
  return createHash('sha256').update(await fs.readFile(file)).digest('hex');
}

/** Run `ledger` over fixtures, checking that they are left as they were. */
async function ledger(args: string[]) {
  const files = args.filter((a) => a.startsWith(FIX));
  const before = await Promise.all(files.map(sha));
  const r = cli(['ledger', ...args]);
  expect(await Promise.all(files.map(sha))).toEqual(before);
  return r;
}

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('1. stamps past 2^53 ns (uptime over 104 days) stay exact', () => {
  // Two cat tasks enter pipe_read at 9,100,000.995828 and .995900 s and return at 9,100,001.000001
  // and .000003 s; each inside its operation. Truth: 2 returned, balanced, both calls open at once
  // first at the second entry, durations 4,173 µs and 4,103 µs.
  it('reads ftrace stamps of 9,100,000 s without refusing or dropping a record', async () => {
    const r = await ledger(['--ops', fx('uptime-105d.ops.jsonl'), '--trace', fx('uptime-105d.trace.txt'), '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.ops.classification).toEqual({ returned: 2, in_flight_at_stop: 0, completed_without_return: 0, filtered: 0, no_probe_evidence: 0 });
    expect(out.identity.balanced).toBe(true);
    expect(out.high_water).toMatchObject({ value: 2, exact: true, line: 2 });
    expect(out.durations).toMatchObject({ count: 2, min_ns: 4_103_000, max_ns: 4_173_000 });
    expect(out.exact_ns).toEqual({
      first_ns: '9100000995828000',
      last_ns: '9100001000003000',
      stop_ns: '9100001000003000',
      high_water_at_ns: '9100000995900000',
      demand_at_ns: '9100000995900000',
    });
  });

  // probe.jsonl and ops.jsonl at 18,000,000,000.123456789 s (570 years, near the u64 end): one call of
  // 1 ns inside its operation. Truth: returned 1, duration 1 ns, the entry time exact to the ns.
  it('reads 20-digit ts_ns, submit_ns and --capture-stop-ns exactly', async () => {
    const r = await ledger(['--ops', fx('uptime-570y.ops.jsonl'), '--trace', fx('uptime-570y.probe.jsonl'), '--capture-stop-ns', '18000000000123456999', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.ops.classification.returned).toBe(1);
    expect(out.durations).toMatchObject({ count: 1, max_ns: 1 });
    expect(out.exact_ns).toMatchObject({ first_ns: '18000000000123456789', last_ns: '18000000000123456790', stop_ns: '18000000000123456999' });
  });

  // The case's integers stop at 2^53: the peak's time is left out rather than written rounded (a
  // stale one removed), the counts go in.
  it('writes the counts into the case and leaves out a peak time it cannot hold', async () => {
    const c = path.join(dir, 'long.yaml');
    await fs.writeFile(c, 'format: kretprobe-case/v1\nid: long-uptime\nconcurrency:\n  observed_high_water_at_ns: 12\n');
    const r = await ledger(['--ops', fx('uptime-105d.ops.jsonl'), '--trace', fx('uptime-105d.trace.txt'), '--case', c]);
    expect(r.code).toBe(0);
    const text = await fs.readFile(c, 'utf8');
    expect(text).toMatch(/observed_high_water: 2\n/);
    expect(text).toMatch(/returns: 2\n/);
    expect(text).not.toMatch(/_at_ns/);
  });

  it('refuses, in one line, a record further from the first than the time line holds, rather than drop it', async () => {
    const t = path.join(dir, 'far.jsonl');
    await fs.writeFile(t, '{"ev":"entry","inst":"a","task":1,"ts_ns":1000}\n{"ev":"return","inst":"a","task":1,"ts_ns":18000000000123456790}\n');
    const r = await ledger(['--trace', t]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/far\.jsonl:2: expected "ts_ns": times within 92 days after the first/);
  });
});

describe('2. an operation submitted after the last record is outside the window', () => {
  // Operation a (task 1) is submitted at 1.000005 s and gets its entry at 1.000010 and return at
  // 1.000020 s, the last record. Operation late (task 2) is submitted at 1.000040 s, after the
  // last record, which is the default capture stop. Truth: 1 eligible operation, returned; late is
  // outside the window, not an operation without probe evidence.
  it.each([['late.trace.txt'], ['late.probe.jsonl']])('does not count it as no probe evidence (%s)', async (trace) => {
    const r = await ledger(['--ops', fx('late.ops.jsonl'), '--trace', fx(trace), '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.ops).toMatchObject({ total: 2, eligible: 1, outside_window: 1 });
    expect(out.ops.classification).toMatchObject({ returned: 1, no_probe_evidence: 0 });
  });

  it('keeps a fully observed case fully observed through ledger --case and audit', async () => {
    const c = path.join(dir, 'late.yaml');
    await fs.copyFile(fx('late.case.yaml'), c);
    const r = await ledger(['--ops', fx('late.ops.jsonl'), '--trace', fx('late.probe.jsonl'), '--case', c]);
    expect(r.code).toBe(0);
    const a = cli(['audit', c, '--format', 'json']);
    expect(a.code).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ verdict: 'fully-observed' });
  });
});

describe('3. another function\'s return never closes a call', () => {
  // Three operations; tasks 1 and 2 enter pipe_read (gate_entry) and return (gate); task 3 enters
  // pipe_read and never returns, but a return probe on vfs_write (r_vfs_write) fires on task 3.
  // Truth: returned 2, task 3's call open (in flight at stop: its operation never completed).
  it('refuses, in one line, a trace with several return events when none is named', async () => {
    const r = await ledger(['--ops', fx('other-return.ops.jsonl'), '--trace', fx('other-return.trace.txt')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(oneLine(r.stderr)).toMatch(/other-return\.trace\.txt:6: expected the records of one probed function.*--entry-event and --return-event.*; got return event "r_vfs_write" besides "gate" \(line 4\)/);
  });

  it('gives the truth when the events are named', async () => {
    const r = await ledger(['--ops', fx('other-return.ops.jsonl'), '--trace', fx('other-return.trace.txt'), '--entry-event', 'gate_entry', '--return-event', 'gate', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ops.classification).toMatchObject({ returned: 2, in_flight_at_stop: 1 });
    expect(out.identity.balanced).not.toBe(true);
    expect(out.other_events).toBe(1);
  });

  it('refuses an entry of another function under one event name shape', async () => {
    const t = path.join(dir, 'two-funcs.txt');
    await fs.writeFile(t, [
      '             cat-1     [001] .....     1.000010: p_pipe_read: (pipe_read+0x4/0x470)',
      '             cat-1     [001] .....     1.000015: r_pipe_read: (ksys_write+0x8f/0xf0 <- vfs_write) arg1=0',
    ].join('\n') + '\n');
    const r = await ledger(['--trace', t]);
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toMatch(/two-funcs\.txt:2: .*got a return of "vfs_write" besides "pipe_read" \(line 1\)/);
  });
});

describe('4. impossible figures are contradictions, never exact', () => {
  const run = async (args: string[], id: string) => {
    const r = await ledger([...args, '--format', 'json']);
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toMatch(new RegExp(`^ledger: 1 contradiction\\(s\\) in the records: ${id} `));
    const out = JSON.parse(r.stdout);
    expect(out.contradictions.map((c: { id: string }) => c.id)).toEqual([id]);
    return out;
  };

  // Three instance records open at once (1,200 ns) with maxactive 2: the pool cannot have held
  // three. Truth: a contradiction; the admitted mark is no exact figure.
  it('an admitted peak above --maxactive', async () => {
    const out = await run(['--ops', fx('above-maxactive.ops.jsonl'), '--trace', fx('above-maxactive.probe.jsonl'), '--maxactive', '2'], 'admitted-above-maxactive');
    expect(out.high_water).toMatchObject({ value: 3, exact: false, upper: null });
    expect(out.figures.bounds).toContain('high_water');
  });

  // Two operations; a returns, b's entry event has no return and b completes. The miss counter
  // rose by 50, but with entry events a missed call shows an entry without return: only one does.
  // Truth: the counter and the records disagree; nothing may be balanced on the counter.
  it('an nmissed delta of 50 with one unreturned entry', async () => {
    const out = await run(['--ops', fx('nmissed50.ops.jsonl'), '--trace', fx('nmissed50.trace.txt'), '--nmissed-delta', '50'], 'nmissed-exceeds-unreturned');
    expect(out.identity.balanced).not.toBe(true);
    expect(out.identity.bounds.capacity_missed).toMatchObject({ lo: 0, hi: 1, exact: false });
    expect(out.figures.exact).not.toContain('identity.capacity_missed');
  });

  // Task 2's entry (4.000005 s) comes after task 1's return (4.000020 s). Truth: out of order;
  // no class is exact.
  it('records going backwards in time', async () => {
    const out = await run(['--ops', fx('backwards.ops.jsonl'), '--trace', fx('backwards.trace.txt')], 'records-out-of-order');
    expect(out.identity.balanced).toBeNull();
    for (const k of ['returned', 'no_probe_evidence']) expect(out.ops.classification_bounds[k]).toMatchObject({ lo: 0, hi: 2, exact: false });
    expect(out.figures.exact).not.toContain('durations');
  });

  // Two operations share the id x while both are open; each gets an entry and a return naming x.
  // Truth: both returned; the ledger cannot tell which records are whose, so 1 returned + 1 without
  // evidence is only one possibility: each class is 0..2.
  it('duplicate operation ids', async () => {
    const out = await run(['--ops', fx('dup-ids.ops.jsonl'), '--trace', fx('dup-ids.probe.jsonl')], 'duplicate-operation-ids');
    expect(out.ops.classification_bounds.returned).toMatchObject({ lo: 0, hi: 2, exact: false });
    expect(out.ops.classification_bounds.no_probe_evidence).toMatchObject({ lo: 0, hi: 2, exact: false });
    expect(out.identity.balanced).not.toBe(true);
  });

  it('hands the contradiction to the case, and a clean rerun clears it', async () => {
    const c = path.join(dir, 'contra.yaml');
    await fs.writeFile(c, 'format: kretprobe-case/v1\nid: contra\n');
    const r = await ledger(['--ops', fx('dup-ids.ops.jsonl'), '--trace', fx('dup-ids.probe.jsonl'), '--case', c]);
    expect(r.code).toBe(1);
    expect(await fs.readFile(c, 'utf8')).toMatch(/contradictions:\n\s+- duplicate-operation-ids\n/);
    expect(cli(['audit', c, '--format', 'json']).stderr).toBe('');
    const again = await ledger(['--ops', fx('late.ops.jsonl'), '--trace', fx('late.probe.jsonl'), '--case', c]);
    expect(again.code).toBe(0);
    expect(await fs.readFile(c, 'utf8')).not.toMatch(/contradictions/);
  });
});
