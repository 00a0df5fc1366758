import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  parseBlacklist,
  parseBpftoolLinks,
  parseBpftoolLinksJson,
  parseCpuPossible,
  parseErrorLog,
  parseKallsyms,
  parseKernelConfig,
  parseKprobeEvents,
  parseKprobeProfile,
  parseKprobesList,
  parseProcVersion,
  parseUnameMachine,
  parseUnameRelease,
} from '../../src/evidence/index.js';
import type { LineProblem } from '../../src/errors.js';
import { caseFromSnapshots } from '../../src/evidence/bundle.js';
import { caseSchema } from '../../src/case/schema.js';

/** Every parser as "text in, items and problems out", with real lines to mutate. */
const PARSERS: Array<{ name: string; parse: (t: string) => { items: unknown[]; problems: LineProblem[] }; good: string[] }> = [
  { name: 'kprobe_events', parse: (t) => { const r = parseKprobeEvents(t); return { items: r.events, problems: r.problems }; }, good: ['r2:kfix/gate pipe_read arg1=$retval', 'p:kfix/gate_entry pipe_read', 'r10:kfix/gate pipe_read', 'p:x mymod:foo+0x10%return'] },
  { name: 'kprobe_profile', parse: (t) => { const r = parseKprobeProfile(t); return { items: r.rows, problems: r.problems }; }, good: ['  gate        2        1', '  gate_entry        3        0'] },
  { name: 'kprobes/list', parse: (t) => { const r = parseKprobesList(t); return { items: r.entries, problems: r.problems }; }, good: ['ffffffff9985f794  k  pipe_read+0x4    [FTRACE]', 'ffffffffc0a12010  r  my_func+0x0  mymod [DISABLED]'] },
  { name: 'kprobes/blacklist', parse: (t) => { const r = parseBlacklist(t); return { items: r.entries, problems: r.problems }; }, good: ['0xffffffff9a201030-0xffffffff9a201050\tasm_exc_divide_error'] },
  { name: 'kallsyms', parse: (t) => { const r = parseKallsyms(t, 'pipe_read'); return { items: [...r.symbols, ...r.padding], problems: r.problems }; }, good: ['ffffffff9985f790 t pipe_read', 'ffffffff9985f780 t __pfx_pipe_read', 'ffffffff99405470 t pipe_read.isra.0'] },
  { name: 'config', parse: (t) => { const r = parseKernelConfig(t); return { items: [...r.options.values()], problems: r.problems }; }, good: ['CONFIG_KPROBES=y', '# CONFIG_FPROBE is not set'] },
  { name: 'cpu/possible', parse: (t) => { const r = parseCpuPossible(t); return { items: r.count === undefined ? [] : [r.count], problems: r.problems }; }, good: ['0-3,8-11'] },
  { name: 'uname -r', parse: (t) => { const r = parseUnameRelease(t); return { items: r.release === undefined ? [] : [r.release], problems: r.problems }; }, good: ['6.12.95+deb12-amd64'] },
  { name: 'uname -m', parse: (t) => { const r = parseUnameMachine(t); return { items: r.arch === undefined ? [] : [r.arch], problems: r.problems }; }, good: ['x86_64'] },
  { name: '/proc/version', parse: (t) => { const r = parseProcVersion(t); return { items: r.release === undefined ? [] : [r.release], problems: r.problems }; }, good: ['Linux version 6.1.0-50-amd64 (x) (y) #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1'] },
  { name: 'error_log', parse: (t) => { const r = parseErrorLog(t); return { items: r.entries, problems: r.problems }; }, good: ['[   14.184300] trace_kprobe: error: Invalid probed address or symbol', '  Command: r:kfix/nosuch no_such_function_xyz', '                         ^'] },
  { name: 'bpftool plain', parse: (t) => { const r = parseBpftoolLinks(t); return { items: r.links, problems: r.problems }; }, good: ['5: perf_event  prog 82  ', '\tkretprobe ffffffff8a4b1c30 do_sys_openat2  missed 12  '] },
  { name: 'bpftool json', parse: (t) => { const r = parseBpftoolLinksJson(t); return { items: r.links, problems: r.problems }; }, good: ['[{"id":6,"type":"perf_event","retprobe":true,"func":"f","offset":0,"missed":1}]'] },
];

/** A line with one character changed, dropped or duplicated: the mutations a copy-paste makes. */
const mutatedLine = (good: string[]) =>
  fc.tuple(fc.constantFrom(...good), fc.nat(), fc.constantFrom('drop', 'dup', 'replace', 'cut'), fc.string({ minLength: 1, maxLength: 3 })).map(([line, at, how, ch]) => {
    const i = line.length === 0 ? 0 : at % line.length;
    switch (how) {
      case 'drop':
        return line.slice(0, i) + line.slice(i + 1);
      case 'dup':
        return line.slice(0, i) + line[i] + line.slice(i);
      case 'replace':
        return line.slice(0, i) + ch + line.slice(i + 1);
      default:
        return line.slice(0, i);
    }
  });

describe.each(PARSERS)('$name', ({ parse, good }) => {
  const lines = fc.array(fc.oneof(fc.constantFrom(...good), mutatedLine(good), fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 40 })), { maxLength: 12 });

  it('never throws, and every problem names a real line of the input', () => {
    fc.assert(
      fc.property(lines, (ls) => {
        const text = ls.join('\n');
        const { problems } = parse(text);
        const count = text === '' ? 0 : text.split('\n').length;
        for (const p of problems) {
          expect(Number.isInteger(p.line)).toBe(true);
          expect(p.line).toBeGreaterThanOrEqual(1);
          expect(p.line).toBeLessThanOrEqual(Math.max(count, 1));
          expect(p.expected.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a junk line among good ones is reported with its number, the good ones still read', () => {
    // Lines that stand alone: an error_log entry spans three lines, a bpftool detail needs its header, JSON is one document.
    const alone = good.filter((g) => !/^\s|^\[\s|^\[\{/.test(g) || g.startsWith('[   14'));
    if (alone.length === 0 || good.some((g) => g.startsWith('  Command')) || good.some((g) => g.startsWith('[{'))) return;
    fc.assert(
      fc.property(fc.constantFrom(...alone), fc.nat({ max: 3 }), (line, before) => {
        const junk = '\u0001?? not a kernel line ??';
        const rows = [...Array<string>(before).fill(line), junk, line];
        const { items, problems } = parse(rows.join('\n'));
        expect(problems.map((p) => p.line)).toContain(before + 1);
        expect(items.length).toBeGreaterThan(0);
      }),
      { numRuns: 50 },
    );
  });
});

describe('line-oriented parsers report every line they do not keep', () => {
  // For these, each non-blank line is either an item or a problem: nothing vanishes silently.
  const strict = [
    { name: 'kprobe_profile', comments: false, run: (t: string) => { const r = parseKprobeProfile(t); return r.rows.length + r.problems.length; }, good: ['  gate 2 1'] },
    { name: 'kprobes/list', comments: false, run: (t: string) => { const r = parseKprobesList(t); return r.entries.length + r.problems.length; }, good: ['ffffffff9985f794  r  pipe_read+0x4    [FTRACE]'] },
    { name: 'kprobes/blacklist', comments: false, run: (t: string) => { const r = parseBlacklist(t); return r.entries.length + r.problems.length; }, good: ['0xffffffff9a201030-0xffffffff9a201050\tdo_int3'] },
    { name: 'kprobe_events', comments: true, run: (t: string) => { const r = parseKprobeEvents(t); return r.events.length + r.problems.length; }, good: ['r2:kfix/gate pipe_read arg1=$retval'] },
  ];
  it.each(strict)('$name', ({ run, good, comments }) => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...good), mutatedLine(good), fc.string({ maxLength: 60 })), { maxLength: 10 }), (ls) => {
        const kept = ls.filter((l) => l.replace(/\r$/, '').trim() !== '' && !(comments && l.trim().startsWith('#')));
        // Only single-line strings: a generated "\n" would make more lines than ls has.
        fc.pre(ls.every((l) => !l.includes('\n')));
        expect(run(ls.join('\n'))).toBe(kept.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('caseFromSnapshots on arbitrary snapshot files', () => {
  const files = ['manifest', 'kprobe_events', 'kprobe_profile', 'kprobes_list', 'error_log', 'trace', 'uname_r', 'cpu_possible', 'kprobes_blacklist', 'kallsyms', 'events/kfix/gate/enable'];
  const real: Record<string, string[]> = {
    manifest: ['events=kfix/gate kfix/gate_entry\nsymbol=pipe_read\ntrace_lines=5000\nkprobes_blacklist_total=3\n'],
    kprobe_events: ['r2:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n'],
    kprobe_profile: ['  gate 2 1\n  gate_entry 3 0\n', '  gate 0 0\n'],
    kprobes_list: ['ffffffff9985f794  r  pipe_read+0x4    [FTRACE]\n'],
    error_log: ['[   14.184300] trace_kprobe: error: Invalid probed address or symbol\n  Command: r:kfix/gate pipe_read\n                       ^\n'],
    trace: ['             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)\n             cat-147     [001] .....     6.138369: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0\n'],
    uname_r: ['6.12.95+deb12-amd64\n'],
    cpu_possible: ['0-1\n'],
    kprobes_blacklist: ['0xffffffff9a201030-0xffffffff9a201050\tpipe_read\n'],
    kallsyms: ['ffffffff9985f790 t pipe_read\nffffffff99405470 t pipe_read.isra.0\n'],
    'events/kfix/gate/enable': ['1\n', '0\n'],
  };
  const snapshot = fc.dictionary(fc.constantFrom(...files), fc.string({ maxLength: 60 })).chain((junk) =>
    fc.record(Object.fromEntries(files.map((f) => [f, fc.option(fc.oneof(fc.constantFrom(...(real[f] ?? [''])), fc.constant(junk[f] ?? '')), { nil: undefined })]))),
  );

  it('never throws and always builds a schema-valid case with a citation per fact', () => {
    fc.assert(
      fc.property(fc.option(snapshot, { nil: undefined }), snapshot, (start, end) => {
        const clean = (s: Record<string, string | undefined> | undefined) =>
          s === undefined ? undefined : (Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as Record<string, string>);
        const { case: c } = caseFromSnapshots({ start: clean(start), end: clean(end) });
        const checked = caseSchema.safeParse(c);
        expect(checked.success ? 'valid' : checked.error.issues[0]).toBe('valid');
        const prov = (c.provenance ?? {}) as Record<string, string>;
        for (const key of Object.keys(prov)) expect(key).toMatch(/^(kernel|probe|coverage|counters|ledger)\./);
        const leaves: string[] = [];
        const walk = (o: unknown, at: string): void => {
          if (o && typeof o === 'object' && !Array.isArray(o)) for (const [k, v] of Object.entries(o)) walk(v, at ? `${at}.${k}` : k);
          else leaves.push(at);
        };
        for (const k of ['kernel', 'probe', 'coverage', 'counters', 'ledger']) if (k in c) walk(c[k], k);
        expect(leaves.filter((l) => !(l in prov))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
