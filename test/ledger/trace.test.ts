import { describe, expect, it } from 'vitest';
import { addTraceLoss, fetchArgInteger, lostEventsOf, noTraceLoss, parseTraceLine, parseTraceText, stampToNs } from '../../src/evidence/trace.js';

// Lines as printed by real kernels (kernel-notes.md, kernel-facts.md §7–§8).
const ENTRY_612 = '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)';
const RETURN_612 = '             cat-147     [001] .....     6.138369: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0';
const RETURN_61 = '             cat-147     [001] .....     6.138369: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0x0';
const ENTRY_61 = '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x0/0x470)';
const FACTS_RETURN = '            bash-1234    [002] d..1.   123.456789: myretprobe: (__x64_sys_openat+0x55/0x80 <- do_sys_openat2) ret=0x3';
const PERF_RETURN = 'cat 147 [001] 6.138369: probe:vfs_read__return: (ffffffff811e6f30 <- ffffffff81240a0f) arg1=0xfffffffffffffff5';
const PERF_ENTRY = 'cat 147 [001] 3.995828: probe:vfs_read: (ffffffff811e6f30)';

describe('parseTraceLine on real kernel lines', () => {
  it.each([
    ['6.12 entry', ENTRY_612, { kind: 'entry', source: 'ftrace', event: 'gate_entry', comm: 'cat', pid: 147, cpu: 1, tsNs: 3_995_828_000, func: 'pipe_read', funcOffset: '+0x4/0x470' }],
    ['6.1 entry at +0x0', ENTRY_61, { kind: 'entry', func: 'pipe_read', funcOffset: '+0x0/0x470' }],
    ['6.12 return, decimal arg', RETURN_612, { kind: 'return', event: 'gate', tsNs: 6_138_369_000, func: 'pipe_read', caller: 'vfs_read+0x338/0x370', args: { arg1: '0' } }],
    ['6.1 return, hex arg', RETURN_61, { kind: 'return', func: 'pipe_read', caller: 'vfs_read+0x338/0x370', args: { arg1: '0x0' } }],
    ['facts §7 return with flags d..1.', FACTS_RETURN, { kind: 'return', comm: 'bash', pid: 1234, cpu: 2, tsNs: 123_456_789_000, func: 'do_sys_openat2', caller: '__x64_sys_openat+0x55/0x80', args: { ret: '0x3' } }],
    ['perf script return: function address first', PERF_RETURN, { kind: 'return', source: 'perf', event: 'probe:vfs_read__return', comm: 'cat', pid: 147, func: 'ffffffff811e6f30', caller: 'ffffffff81240a0f' }],
    ['perf script entry', PERF_ENTRY, { kind: 'entry', source: 'perf', func: 'ffffffff811e6f30' }],
  ])('%s', (_name, line, want) => {
    expect(parseTraceLine(line)).toMatchObject(want);
  });

  it('reads the tgid column and comms with dashes and spaces', () => {
    expect(parseTraceLine('  kworker/u4:2-xyz-88  (   80) [000] d..1.   10.000001: gate_entry: (pipe_read+0x4/0x470)')).toMatchObject({ comm: 'kworker/u4:2-xyz', pid: 88, tgid: 80, tsNs: 10_000_001_000 });
    expect(parseTraceLine('  my prog-12  [000] .....   1.5: gate_entry: (pipe_read+0x4/0x470)')).toMatchObject({ comm: 'my prog', pid: 12, tsNs: 1_500_000_000 });
  });

  it('reads perf pid/tid and --ns stamps', () => {
    expect(parseTraceLine('cat 100/147 [001] 6.138369123: probe:vfs_read: (ffffffff811e6f30)')).toMatchObject({ tgid: 100, pid: 147, tsNs: 6_138_369_123 });
  });

  it('uses the given event names and reports other events', () => {
    const opts = { entryEvent: 'kfix/gate_entry', returnEvent: 'kfix/gate' };
    expect(parseTraceLine(ENTRY_612, opts)).toMatchObject({ kind: 'entry' });
    expect(parseTraceLine(RETURN_612, opts)).toMatchObject({ kind: 'return' });
    expect(parseTraceLine(FACTS_RETURN, opts)).toMatchObject({ kind: 'other', event: 'myretprobe' });
    expect(parseTraceLine(ENTRY_612, { entryEvent: 'x', returnEvent: 'gate_entry' })).toMatchObject({ kind: 'problem' });
  });

  it.each([
    ['header', '# tracer: nop'],
    ['indented header', '#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION'],
    ['blank', '   '],
  ])('skips %s lines', (_n, line) => {
    expect(parseTraceLine(line)).toBeNull();
  });

  it.each([
    ['truncated', '             cat-147     [001] .....     6.138369: gate: (vfs_read+0x338/0x3'],
    ['no timestamp', '             cat-147     [001] .....  gate: (pipe_read+0x4/0x470)'],
    ['garbage', 'hello world'],
    ['no pid', '             cat     [001] .....     6.138369: gate: (pipe_read+0x4/0x470)'],
  ])('reports %s lines as problems', (_n, line) => {
    expect(parseTraceLine(line)).toMatchObject({ kind: 'problem' });
  });

  it('reads lost-event markers', () => {
    expect(parseTraceLine('CPU:1 [LOST 42 EVENTS]')).toEqual({ kind: 'lost', cpu: 1, count: 42 });
  });

  // The `trace` file's non-consuming iterator prints the marker without a count when the writer
  // overtook it (v6.12 kernel/trace/trace.c print_trace_line); it was read as a malformed line.
  it('reads a lost-event marker without a count as a loss of unknown size', () => {
    expect(parseTraceLine('CPU:3 [LOST EVENTS]')).toEqual({ kind: 'lost', cpu: 3, count: undefined });
  });

  // trace-cmd report prints the same ring-buffer loss its own way (trace-cmd.c show_data): a
  // report fed to the ledger read it as a malformed line and lost nothing.
  it('reads trace-cmd report\'s marker, with and without a count', () => {
    expect(parseTraceLine('CPU:7 [204600 EVENTS DROPPED]')).toEqual({ kind: 'lost', cpu: 7, count: 204600 });
    expect(parseTraceLine('CPU:2 [EVENTS DROPPED]')).toEqual({ kind: 'lost', cpu: 2, count: undefined });
    // Its header lines are its own, not malformed records.
    expect(parseTraceLine('version = 6')).toBeNull();
    expect(parseTraceLine('cpus=2')).toBeNull();
    expect(parseTraceLine('cpus=two')).toMatchObject({ kind: 'problem' });
  });

  // v6.12 kernel/trace/trace.c print_event_info: entries in the buffer / entries + overruns, CPUs online.
  it('reads the trace header: entries in the buffer, entries written, CPUs online', () => {
    expect(parseTraceLine('# entries-in-buffer/entries-written: 20642/31570   #P:4')).toEqual({ kind: 'header', inBuffer: 20642, written: 31570, onlineCpus: 4 });
    expect(parseTraceLine('# tracer: nop')).toBeNull();
    expect(parseTraceLine('#                              _-----=> irqs-off/BH-disabled')).toBeNull();
  });
});

describe('lostEventsOf: the one reading of a ring buffer\'s markers and header', () => {
  const of = (...lines: string[]) => {
    const loss = noTraceLoss();
    for (const l of lines) {
      const r = parseTraceLine(l);
      if (r?.kind === 'lost' || r?.kind === 'header') addTraceLoss(loss, r);
    }
    return lostEventsOf(loss);
  };
  it('sums the markers\' counts', () => expect(of('CPU:0 [LOST 3 EVENTS]', 'CPU:1 [LOST 4 EVENTS]')).toBe(7));
  it('reads the header\'s overwritten entries', () => expect(of('# entries-in-buffer/entries-written: 100/130   #P:2')).toBe(30));
  it('reads a header with nothing overwritten as nothing lost', () => expect(of('# entries-in-buffer/entries-written: 100/100   #P:2')).toBe(0));
  // Both count the same buffer's overruns: the header's total since the buffer was cleared holds a
  // consuming read's markers, so they are not added.
  it('takes the larger of markers and header, never their sum', () => {
    expect(of('# entries-in-buffer/entries-written: 100/130   #P:2', 'CPU:0 [LOST 12 EVENTS]')).toBe(30);
    expect(of('# entries-in-buffer/entries-written: 100/105   #P:2', 'CPU:0 [LOST 12 EVENTS]')).toBe(12);
  });
  it('is unknown when a marker gives no count, whatever else the text shows', () => {
    expect(of('# entries-in-buffer/entries-written: 100/100   #P:2', 'CPU:1 [LOST EVENTS]')).toBeUndefined();
    expect(of('CPU:0 [LOST 5 EVENTS]', 'CPU:1 [LOST EVENTS]')).toBeUndefined();
  });
});

describe('timestamps and values', () => {
  it.each([
    ['3.995828', 3_995_828_000],
    ['0.000001', 1_000],
    ['12345.1', 12_345_100_000_000],
    ['6.138369123', 6_138_369_123],
  ])('%s s → ns', (text, ns) => {
    expect(stampToNs(text)).toBe(ns);
  });
  it.each(['3', '.5', '3.', '3.1234567890', 'a.1'])('%s is not a stamp', (text) => {
    expect(stampToNs(text)).toBe(-1);
  });
  it.each([
    ['0x0', 0n],
    ['0', 0n],
    ['0xfffffffffffffff5', -11n],
    ['-11', -11n],
    ['abc', undefined],
  ])('fetch arg %s', (text, want) => {
    expect(fetchArgInteger(text)).toBe(want);
  });
});

describe('parseTraceText', () => {
  it('counts records and numbers problems', () => {
    const text = ['# tracer: nop', ENTRY_612, 'junk', RETURN_612, 'CPU:0 [LOST 3 EVENTS]', ''].join('\n');
    const r = parseTraceText(text);
    expect(r.records.map((x) => x.kind)).toEqual(['entry', 'return']);
    expect(r.problems).toEqual([expect.objectContaining({ line: 3 })]);
    expect(r.lost).toHaveLength(1);
  });

  it('keeps the header apart from the records', () => {
    const r = parseTraceText(['# tracer: nop', '#', '# entries-in-buffer/entries-written: 2/9   #P:2', '#', ENTRY_612, RETURN_612, ''].join('\n'));
    expect(r.headers).toEqual([{ kind: 'header', inBuffer: 2, written: 9, onlineCpus: 2 }]);
    expect(r.records).toHaveLength(2);
    expect(r.problems).toEqual([]);
  });
});
