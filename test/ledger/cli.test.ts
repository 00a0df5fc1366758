import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, ROOT } from '../cli/helpers.js';

const FIX = path.join(ROOT, 'test/fixtures/ledger');
const ENTRY = (pid: number, ts: string) => `             cat-${pid}     [001] .....     ${ts}: gate_entry: (pipe_read+0x4/0x470)`;
const RET = (pid: number, ts: string) => `             cat-${pid}     [001] .....     ${ts}: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0`;

let dir: string;
const f = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-ledger-cli-'));
  const files: Record<string, string> = {
    'garbage.txt': 'hello\nworld\n',
    'truncated.txt': `${ENTRY(1, '1.000001')}\n${RET(1, '1.000005')}\n             cat-1     [001] .....     1.00`,
    'unsorted.txt': `${ENTRY(1, '1.000001')}\n${RET(1, '1.000005')}\n${ENTRY(2, '0.500000')}\n${RET(2, '1.000009')}\n`,
    'dup.jsonl': [
      '{"ev":"entry","inst":"a","task":1,"ts_ns":10}',
      '{"ev":"entry","inst":"a","task":2,"ts_ns":20}',
      '{"ev":"return","inst":"a","task":2,"ts_ns":30}',
    ].join('\n'),
    'orphan.jsonl': [
      '{"ev":"return","inst":"z","task":3,"ts_ns":5}',
      '{"ev":"entry","inst":"a","task":1,"ts_ns":10}',
      '{"ev":"return","inst":"a","task":1,"ts_ns":30}',
    ].join('\n'),
    'bad-ops.jsonl': 'not json\n{"op": 1}\n',
    'ops.jsonl': '{"op":"r1","task":1,"submit_ns":1000000000,"done_ns":1000006000,"reaches_target":true}\n',
    'case.yaml': '# a hand-written case\nformat: kretprobe-case/v1\nid: cli-ledger\nkernel: { release: 6.12.95 }\nprobe:\n  interface: tracefs   # made with r2:\n  registration: { epoch: reg-1 }\n  entry_handler: { present: false }\n  maxactive: { requested: 2, effective: 2 }\nconcurrency: { observed_demand_high_water: 3 }\ncounters:\n  source: kprobe_profile\n  start: { epoch: reg-1, nmissed: 0 }\n  end: { epoch: reg-1, nmissed: 1 }\n',
  };
  for (const [name, text] of Object.entries(files)) await fs.writeFile(f(name), text);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function oneLineError(stderr: string): string {
  const lines = stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('ledger bad input from the CLI', () => {
  it.each([
    ['a missing trace file', ['--trace', 'no/such/trace.txt'], /no\/such\/trace\.txt: expected .*; got no such file/],
    ['a trace with no readable line', ['--trace', '$garbage.txt'], /garbage\.txt:1: expected .*; got "hello"/],
    ['an ops file with no readable line', ['--ops', '$bad-ops.jsonl', '--trace', `${FIX}/fixture-r2.trace.txt`], /bad-ops\.jsonl:1: expected a JSON object/],
    ['ops on stdin', ['--ops', '-', '--trace', `${FIX}/fixture-r2.trace.txt`], /--ops: a file/],
    ['a negative miss delta', ['--trace', `${FIX}/fixture-r2.trace.txt`, '--nmissed-delta', '-1'], /--nmissed-delta: an integer ≥ 0/],
  ])('exits 2 with one line for %s', (_name, args, want) => {
    const r = cli(['ledger', ...args.map((a) => (a.startsWith('$') ? f(a.slice(1)) : a))]);
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(want);
  });

  it('exits 2 on a huge stdin without a newline, in bounded memory', () => {
    const r = cli(['ledger', '--trace', '-'], { input: 'x'.repeat(20 * 1024 * 1024) });
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(/<stdin>:1: expected a line of at most 65536 characters/);
  });

  it('reports a truncated last line with its number and keeps the rest', () => {
    const r = cli(['ledger', '--trace', f('truncated.txt'), '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.pairing.by_task).toBe(1);
    expect(out.problems.first[0]).toMatchObject({ line: 3 });
    expect(out.problems.first[0].got).toMatch(/truncated/);
  });

  it('warns about out-of-order timestamps at the first such line', () => {
    const r = cli(['ledger', '--trace', f('unsorted.txt'), '--format', 'json']);
    // A contradiction of the records (issue 25): flagged with exit 1, the report written.
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.pairing.unsorted_records).toBe(1);
    expect(out.problems.first[0]).toMatchObject({ line: 3 });
  });

  it('warns about an instance id reused while open', () => {
    const r = cli(['ledger', '--trace', f('dup.jsonl'), '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.pairing.duplicate_instances).toBe(1);
    expect(out.problems.first[0]).toMatchObject({ line: 2 });
  });

  it('reads the trace from stdin', () => {
    const stamp = (us: number) => `1.${String(us).padStart(6, '0')}`;
    const text = Array.from({ length: 2000 }, (_, i) => `${ENTRY(1, stamp(10 * i + 1))}\n${RET(1, stamp(10 * i + 5))}\n`).join('');
    const r = cli(['ledger', '--trace', '-', '--format', 'json'], { input: text });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).pairing.by_task).toBe(2000);
  });
});

describe('ledger --case', () => {
  it('writes ledger, concurrency and latency into the case and keeps its comments', async () => {
    const r = cli(['ledger', '--ops', `${FIX}/fixture-r2.ops.jsonl`, '--trace', `${FIX}/fixture-r2.trace.txt`, '--case', f('case.yaml'), '--capture-stop-ns', '6200000000']);
    expect(r.code).toBe(0);
    const text = await fs.readFile(f('case.yaml'), 'utf8');
    expect(text).toContain('# made with r2:');
    const c = parse(text);
    expect(c.ledger).toMatchObject({ eligible: 3, identity: 'task-and-depth', entry_events: 3, returns: 2, in_flight_at_stop: 0, completed_without_return: 1, no_probe_evidence: 0, foreign_records: 0, returns_without_entry: 0, lost_events: 0 });
    // r2: two admitted instances (the pool), three calls entered (demand), kept apart.
    expect(c.concurrency).toMatchObject({ observed_high_water: 2, observed_demand_high_water: 3, observed_demand_high_water_at_ns: 4010550000 });
    expect(c.latency).toMatchObject({ reported: true, from: 'admitted', coverage_reported: true, count: 2 });
    // The case's counters gave the miss delta (a summed 6.12 column, split by the demand of 3 on a
    // pool of 2, issue 20 class 1): the identity closes.
    expect(r.stdout).toMatch(/capacity_missed 1 .*\n.*balanced/);
  });

  // The `trace` file's header counts what the ring buffer overwrote before the read (v6.12
  // kernel/trace/trace.c print_event_info); the ledger read it as nothing lost.
  it('reads the trace header\'s overwritten entries as lost events, and a marker without a count as unknown', async () => {
    const header = '# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/9   #P:2\n#\n';
    await fs.writeFile(f('hdr.txt'), `${header}${ENTRY(7, '1.000001')}\n${RET(7, '1.000005')}\n`);
    await fs.writeFile(f('case-hdr.yaml'), 'format: kretprobe-case/v1\nid: cli-ledger-header\n');
    let r = cli(['ledger', '--trace', f('hdr.txt'), '--case', f('case-hdr.yaml'), '--format', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).lost).toEqual({ markers: 0, events: 7, overwritten: 7 });
    expect(parse(await fs.readFile(f('case-hdr.yaml'), 'utf8')).ledger.lost_events).toBe(7);

    // Then a read the writer overtook: the loss is unknown, and the case's figure is cleared.
    await fs.writeFile(f('hdr.txt'), `${header}${ENTRY(7, '1.000001')}\nCPU:1 [LOST EVENTS]\n${RET(7, '1.000005')}\n`);
    r = cli(['ledger', '--trace', f('hdr.txt'), '--case', f('case-hdr.yaml'), '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.lost).toEqual({ markers: 1, events: null, overwritten: 7 });
    expect(out.problems.count).toBe(0);
    expect(out.notes.join('\n')).toMatch(/lost an unknown number of events \(1 marker, 1 without a count; the header: 7 overwritten\)/);
    expect(parse(await fs.readFile(f('case-hdr.yaml'), 'utf8')).ledger).not.toHaveProperty('lost_events');
  });

  it('records returns without entry from probe.jsonl and leaves lost events unknown there', async () => {
    await fs.writeFile(f('case-jsonl.yaml'), 'format: kretprobe-case/v1\nid: cli-ledger-jsonl\n');
    const r = cli(['ledger', '--trace', f('orphan.jsonl'), '--case', f('case-jsonl.yaml')]);
    expect(r.code).toBe(0);
    const c = parse(await fs.readFile(f('case-jsonl.yaml'), 'utf8'));
    expect(c.ledger.returns_without_entry).toBe(1);
    expect(c.ledger).not.toHaveProperty('lost_events');
    expect(c.concurrency).toMatchObject({ observed_high_water: 1, observed_high_water_at_ns: 10 });
  });
});

describe('capacity', () => {
  it('recommends from the caller model and says the r2 pool is short', () => {
    const r = cli(['capacity', '--workers', '3', '--target-sleeps', 'yes', '--possible-cpus', '0-1', '--requested', '2', '--interface', 'tracefs', '--recursion-depth', '2', '--other-callers', '1', '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.effective).toMatchObject({ kind: 'value', value: 2 });
    expect(out.estimate.value).toBe(6);
    expect(out.recommended.value).toBe(7);
    expect(out.sufficient).toBe(false);
  });

  it('uses the kernel default for a module that asks for 0', () => {
    const r = cli(['capacity', '--workers', '4', '--target-sleeps', 'no', '--possible-cpus', '0-3,8-11', '--requested', '0', '--interface', 'module', '--format', 'json']);
    const out = JSON.parse(r.stdout);
    expect(out.effective).toMatchObject({ kind: 'value', value: 16 });
    expect(out.sufficient).toBe(true);
  });

  it('exits 2 without an interface', () => {
    const r = cli(['capacity', '--workers', '3']);
    expect(r.code).toBe(2);
    expect(oneLineError(r.stderr)).toMatch(/expected --interface/);
  });
});
