import { describe, expect, it } from 'vitest';
import {
  parseBlacklist,
  blacklistEntryFor,
  parseBpftoolLinks,
  parseBpftoolLinksJson,
  parseCpuPossible,
  parseErrorLog,
  errnoForReason,
  parseKallsyms,
  parseKernelConfig,
  parseKprobeEvents,
  parseKprobeEventLine,
  parseKprobeProfile,
  parseKprobesList,
  isArmed,
  parseProcVersion,
  parseUnameRelease,
  familyRole,
} from '../../src/evidence/index.js';
import { readArtifact } from '../../src/evidence/artifacts.js';
import { parseDynamicEvents, parseFprobeEventLine } from '../../src/evidence/kprobeEvents.js';

describe('kprobe_events', () => {
  it.each([
    ['6.12 read-back of r2 with $retval', 'r2:kfix/gate pipe_read arg1=$retval', { kind: 'r', maxactive: 2, group: 'kfix', event: 'gate', symbol: 'pipe_read', offset: 0 }],
    ['entry event on the same function', 'p:kfix/gate_entry pipe_read', { kind: 'p', maxactive: undefined, group: 'kfix', event: 'gate_entry', symbol: 'pipe_read' }],
    ['r: registered and read back as r10 (2 CPUs)', 'r10:kfix/gate pipe_read', { kind: 'r', maxactive: 10 }],
    ['r: written without a number', 'r:kfix/gate pipe_read', { kind: 'r', maxactive: undefined }],
    ['octal MAXACTIVE like kstrtouint base 0', 'r010:kfix/gate pipe_read', { maxactive: 8 }],
    ['hex MAXACTIVE', 'r0x10:kfix/gate pipe_read', { maxactive: 16 }],
    ['r0 parses (the kernel rejects it later)', 'r0:kfix/gate pipe_read', { maxactive: 0 }],
    ['kernel-facts read-back example', 'r16:kprobes/myretprobe do_sys_openat2 ret=$retval', { maxactive: 16, group: 'kprobes', event: 'myretprobe', symbol: 'do_sys_openat2' }],
    ['default group and event name', 'r do_sys_openat2', { group: 'kprobes', event: 'r_do_sys_openat2_0', groupDefaulted: true, eventDefaulted: true }],
    ['event without group', 'p:myprobe do_sys_open', { group: 'kprobes', event: 'myprobe', groupDefaulted: true, eventDefaulted: false }],
    ['group with default event', 'r:mygrp/ do_sys_open+4', { group: 'mygrp', event: 'r_do_sys_open_4', offset: 4 }],
    ['%return reads as a return probe', 'p:kfix/ret pipe_read%return', { kind: 'r', percentReturn: true, symbol: 'pipe_read' }],
    ['MOD:SYM+off with hex offset', 'p:m/x mymod:foo+0x10', { module: 'mymod', symbol: 'foo', offset: 16 }],
    ['default name keeps the module, sanitised', 'p mymod:foo.isra.0', { event: 'p_mymod_foo_isra_0_0', module: 'mymod', symbol: 'foo.isra.0' }],
    ['address probe', 'p:a/b 0xffffffff81000000', { address: '0xffffffff81000000', symbol: undefined }],
  ])('%s', (_name, line, expected) => {
    const { events, problems } = parseKprobeEvents(`${line}\n`);
    expect(problems).toEqual([]);
    expect(events).toHaveLength(1);
    const present = Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined));
    expect(events[0]).toMatchObject(present);
    // Absent means unknown/not given: the parser must not invent a value for it.
    for (const [k, v] of Object.entries(expected)) if (v === undefined) expect(events[0]).not.toHaveProperty(k);
  });

  it.each([
    ['fetch args with names and types', 'r:g/e f ret=$retval:u32 +0(%di):string', [{ name: 'ret', fetch: '$retval', type: 'u32' }, { fetch: '+0(%di)', type: 'string' }]],
    ['unnamed arg', 'p:g/e f %di', [{ fetch: '%di' }]],
    ['v6.10 $argN on a return probe', 'r:myevent2 vfs_open arg=$arg1', [{ name: 'arg', fetch: '$arg1' }]],
  ])('%s', (_name, line, args) => {
    const def = parseKprobeEventLine(line);
    expect(typeof def).not.toBe('string');
    expect((def as { args: unknown }).args).toEqual(args);
  });

  it.each([
    ['a digit after p', 'p2:kfix/x pipe_read'],
    ['junk after r', 'r2x:kfix/x pipe_read'],
    ['no probe point', 'r2:kfix/x'],
    ['%return on r', 'r:kfix/x pipe_read%return'],
    ['not a definition', 'hello world'],
    ['a bad offset', 'p:g/e f+zz'],
  ])('rejects %s with its line number', (_name, line) => {
    const { events, problems } = parseKprobeEvents(`p:ok/e f\n${line}\n`);
    expect(events).toHaveLength(1);
    expect(problems.map((p) => p.line)).toEqual([2]);
  });
});

describe('dynamic_events', () => {
  // kernel/trace/trace_fprobe.c trace_fprobe_show: f[MAXACTIVE]:GROUP/EVENT SYM[%return] ARGS; uprobes
  // (a path target) and eprobes share the file and are not this tool's.
  it('reads kprobe and fprobe lines and leaves other dynamic events alone', () => {
    const r = parseDynamicEvents([
      'r16:kfix/gate pipe_read arg1=$retval',
      'f2:kfix/fgate pipe_read%return arg1=$retval',
      'f:fprobes/vfs_read__entry vfs_read',
      'p:uprobes/p_bash_0x4245c0 /bin/bash:0x00000000004245c0',
      'e:eprobes/sys_open syscalls/sys_enter_openat',
      '',
    ].join('\n'));
    expect(r.problems).toEqual([]);
    expect(r.kprobes.map((d) => [d.kind, d.maxactive, `${d.group}/${d.event}`])).toEqual([['r', 16, 'kfix/gate']]);
    expect(r.fprobes.map((d) => [d.exit, d.maxactive, `${d.group}/${d.event}`, d.symbol])).toEqual([
      [true, 2, 'kfix/fgate', 'pipe_read'],
      [false, undefined, 'fprobes/vfs_read__entry', 'vfs_read'],
    ]);
  });
  it('takes the default group of a written line and refuses a maxactive on an entry event, by line', () => {
    expect(parseFprobeEventLine('f:myexit vfs_read%return')).toMatchObject({ group: 'fprobes', event: 'myexit', exit: true });
    const r = parseDynamicEvents('f4:fprobes/e vfs_read\n');
    expect(r.problems.map((p) => [p.line, p.expected])).toEqual([[1, 'no MAXACTIVE on an fprobe entry event (only an exit takes one)']]);
  });
});

describe('kprobe_profile', () => {
  it.each([
    ['kernel-notes gated r2', '  gate        2        1', { event: 'gate', hits: 2, misses: 1 }],
    ['kernel-facts wide format', '  myretprobe                                              1650              28', { event: 'myretprobe', hits: 1650, misses: 28 }],
    ['printf padding as the kernel writes it', `  ${'gate_entry'.padEnd(44)} ${'3'.padStart(15)} ${'0'.padStart(15)}`, { event: 'gate_entry', hits: 3, misses: 0 }],
  ])('%s', (_name, line, row) => {
    const r = parseKprobeProfile(`${line}\n`);
    expect(r.problems).toEqual([]);
    expect(r.rows[0]).toMatchObject({ line: 1, ...row });
  });

  it.each([
    ['a missing column', '  gate 2'],
    ['a negative count', '  gate -1 0'],
    ['a non-number', '  gate two 0'],
    ['a count past 2^53 (not rounded)', '  gate 18446744073709551615 0'],
  ])('reports %s instead of reading zero', (_name, line) => {
    const r = parseKprobeProfile(`  ok 1 0\n${line}\n`);
    expect(r.rows.map((x) => x.event)).toEqual(['ok']);
    expect(r.problems.map((p) => p.line)).toEqual([2]);
  });
});

describe('error_log', () => {
  const missing = '[   14.184300] trace_kprobe: error: Invalid probed address or symbol\n  Command: r:kfix/nosuch no_such_function_xyz\n                         ^\n';
  it('reads the missing-symbol entry of kernel-notes with its caret word', () => {
    const r = parseErrorLog(missing);
    expect(r.problems).toEqual([]);
    expect(r.entries).toEqual([
      { line: 1, timestamp: '14.184300', subsystem: 'trace_kprobe', reason: 'Invalid probed address or symbol', command: 'r:kfix/nosuch no_such_function_xyz', column: 14, word: 'no_such_function_xyz' },
    ]);
  });

  it('reads two entries and a caret at column 0', () => {
    const r = parseErrorLog(`${missing}[   15.000001] trace_kprobe: error: Invalid maxactive number\n  Command: r0:kfix/gate pipe_read\n           ^\n`);
    expect(r.entries.map((e) => [e.line, e.column, e.word])).toEqual([
      [1, 14, 'no_such_function_xyz'],
      [4, 0, 'r0:kfix/gate'],
    ]);
  });

  it('reports a stray line by number', () => {
    const r = parseErrorLog(`garbage\n${missing}`);
    expect(r.problems.map((p) => p.line)).toEqual([1]);
    expect(r.entries).toHaveLength(1);
  });

  // A command error_log quotes is one the kernel refused, often for its syntax: the probe it names
  // is read without the full grammar, so a refused entry probe's failure stays the entry probe's.
  it.each([
    ['a maxactive on an entry probe (BAD_MAXACT_TYPE)', 'Maxactive is not for kprobe', 'p5:myprobe vfs_read', { kind: 'entry', event: 'kprobes/myprobe', symbol: 'vfs_read' }],
    ['a return probe with a bad fetch argument', 'Invalid fetch argument', 'r:kfix/ret pipe_read $nosuch', { kind: 'return', event: 'kfix/ret', symbol: 'pipe_read' }],
    ['an fprobe exit, named in its own group', 'Maxactive is not for kprobe', 'f9:myfexit vfs_read%return', { kind: 'return', event: 'fprobes/myfexit', symbol: 'vfs_read' }],
    ['a perf-style %return on p:', 'Invalid probed address or symbol', 'p:kprobes/r_x no_such_fn%return', { kind: 'return', event: 'kprobes/r_x', symbol: 'no_such_fn' }],
  ])('binds the refused definition to its own probe: %s', (_n, reason, command, subject) => {
    const text = `[  512.123456] trace_kprobe: error: ${reason}\n  Command: ${command}\n             ^\n`;
    const r = readArtifact('error_log', text);
    const result = r.facts.find((f) => f.path === 'probe.registration.result');
    expect(result?.subject).toEqual(subject);
    expect(r.facts.filter((f) => f.path === 'probe.registration.reason').map((f) => f.subject)).toEqual([subject]);
  });

  // kernel/trace/trace_kprobe.c __trace_kprobe_create(): where the write is refused decides the errno.
  it.each([
    ['missing symbol on 6.12 (observed; validate_probe_symbol, parse_error)', 'Invalid probed address or symbol', {}, '6.12.95+deb12-amd64', 'EINVAL'],
    ['missing symbol on 5.4 (register_kretprobe returned -ENOENT)', 'Invalid probed address or symbol', {}, '5.4.0-150-generic', 'ENOENT'],
    ['missing symbol, release unknown: the errno is not decided', 'Invalid probed address or symbol', {}, undefined, undefined],
    ['missing symbol on a 6.1 stable tree (either, by point release)', 'Invalid probed address or symbol', {}, '6.1.0-50-amd64', undefined],
    ['a malformed +offset is refused while parsing', 'Invalid probed address or symbol', { word: 'vfs_read+0xzz' }, undefined, 'EINVAL'],
    ['blacklisted do_int3: any register errno but ENOENT/EILSEQ/ENOMEM/EEXIST', 'Failed to register probe event', {}, '6.12.95+deb12-amd64', undefined],
    ['r0', 'Invalid maxactive number', {}, undefined, 'EINVAL'],
    ['r9999', 'Maxactive is too big', {}, undefined, 'EINVAL'],
    ['ambiguous name from 6.7 (tracefs: parse_error)', 'The symbol is not unique', {}, '6.8.0-45-generic', 'EINVAL'],
    ['ambiguous name before 6.7 (EADDRNOTAVAIL, or EINVAL once the fix is backported)', 'The symbol is not unique', {}, '6.1.0-13-amd64', undefined],
    ['not an instruction boundary', 'Probe point is not an instruction boundary', {}, undefined, 'EILSEQ'],
    ['unknown reason', 'Something new', {}, undefined, undefined],
  ])('maps %s', (_n, reason, opts, release, errno) => {
    expect(errnoForReason(reason, { ...opts, release })).toBe(errno);
  });
});

describe('kprobes/list', () => {
  it.each([
    ['6.12 entry kprobe on ftrace', 'ffffffff9985f794  k  pipe_read+0x4    [FTRACE]', { type: 'k', symbol: 'pipe_read', offset: 4, flags: ['FTRACE'] }, true],
    ['6.12 return probe', 'ffffffff9985f794  r  pipe_read+0x4    [FTRACE]', { type: 'r', offset: 4 }, true],
    ['6.1 at +0x0', 'ffffffff8a4b1c30  r  do_sys_openat2+0x0    [FTRACE]', { type: 'r', symbol: 'do_sys_openat2', offset: 0 }, true],
    ['module probe disabled', 'ffffffffc0a12010  r  my_func+0x0  mymod [DISABLED]', { module: 'mymod', flags: ['DISABLED'] }, false],
    ['gone', 'ffffffffc0a12010  k  my_func+0x0  mymod [GONE]', { flags: ['GONE'] }, false],
    ['optimized', 'ffffffff81000000  k  foo+0x10    [OPTIMIZED]', { flags: ['OPTIMIZED'], offset: 16 }, true],
    ['no flags', 'ffffffff81000000  k  foo+0x0    ', { flags: [] }, true],
    ['hidden address', '0000000000000000  r  pipe_read+0x4    [FTRACE]', { address: '0000000000000000' }, true],
    // report_probe prints its flags back to back ("%s%s%s%s\n"): an ftrace-based probe whose event
    // is not enabled, the usual state of a tracefs probe on x86 before `enable`.
    ['disabled on ftrace', 'ffffffff8133c0a0  r  vfs_read+0x0    [DISABLED][FTRACE]', { flags: ['DISABLED', 'FTRACE'] }, false],
    ['a module probe, disabled and optimized', 'ffffffffc0a12010  k  my_func+0x10  mymod [DISABLED][OPTIMIZED]', { module: 'mymod', flags: ['DISABLED', 'OPTIMIZED'] }, false],
  ])('%s', (_n, line, expected, armed) => {
    const r = parseKprobesList(`${line}\n`);
    expect(r.problems).toEqual([]);
    expect(r.entries[0]).toMatchObject(expected);
    expect(isArmed(r.entries[0]!)).toBe(armed);
  });

  it.each([
    ['a p type letter', 'ffffffff81000000  p  foo+0x0'],
    ['an unknown flag', 'ffffffff81000000  k  foo+0x0    [WEIRD]'],
  ])('reports %s', (_n, line) => {
    expect(parseKprobesList(`${line}\n`).problems.map((p) => p.line)).toEqual([1]);
  });
});

describe('kprobes/blacklist', () => {
  it('reads the kernel-notes line and finds clones by their base', () => {
    const r = parseBlacklist('0xffffffff9a201030-0xffffffff9a201050\tasm_exc_divide_error\n0xffffffffc0000000-0xffffffffc0000040\tdo_int3 [kvm]\n');
    expect(r.problems).toEqual([]);
    expect(r.entries[0]).toMatchObject({ line: 1, start: 'ffffffff9a201030', end: 'ffffffff9a201050', symbol: 'asm_exc_divide_error' });
    expect(r.entries[1]).toMatchObject({ symbol: 'do_int3', module: 'kvm' });
    expect(blacklistEntryFor(r.entries, 'do_int3.isra.0')?.line).toBe(2);
    expect(blacklistEntryFor(r.entries, 'pipe_read')).toBeUndefined();
  });

  it('reports a line without a range', () => {
    expect(parseBlacklist('do_int3\n').problems.map((p) => p.line)).toEqual([1]);
  });
});

describe('cpu/possible', () => {
  it.each([
    ['two CPUs of the lab', '0-1\n', 2],
    ['a gap', '0-3,8-11\n', 8],
    ['single CPU', '0\n', 1],
    ['mixed', '0-1,3\n', 3],
  ])('%s', (_n, text, count) => {
    expect(parseCpuPossible(text)).toMatchObject({ count, line: 1, problems: [] });
  });

  it('reports a non-list and leaves the count unknown', () => {
    const r = parseCpuPossible('zero\n');
    expect(r.count).toBeUndefined();
    expect(r.problems.map((p) => p.line)).toEqual([1]);
  });
});

describe('kernel identity', () => {
  it.each([
    ['6.12 backports', '6.12.95+deb12-amd64\n', '6.12.95+deb12-amd64'],
    ['6.1', '6.1.0-50-amd64\n', '6.1.0-50-amd64'],
  ])('uname -r %s', (_n, text, release) => {
    expect(parseUnameRelease(text).release).toBe(release);
  });

  it('reads /proc/version', () => {
    const r = parseProcVersion('Linux version 6.12.95+deb12-amd64 (debian-kernel@lists.debian.org) (x86_64-linux-gnu-gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.12.95-1~bpo12+1 (2025-06-20)\n');
    expect(r).toMatchObject({ release: '6.12.95+deb12-amd64', smp: true, preempt: 'PREEMPT_DYNAMIC', upstream: '6.12.95', problems: [] });
  });

  it.each([
    ['a Debian ABI release: the package version names the upstream point release, not the compiler\'s', 'Linux version 5.10.0-32-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.223-1 (2024-08-10)\n', '5.10.223'],
    ['a build string without a distribution version', 'Linux version 6.12.0 (me@host) (gcc (Debian 12.2.0-14) 12.2.0) #3 SMP PREEMPT Mon Jan 1 00:00:00 UTC 2025\n', undefined],
  ])('/proc/version upstream: %s', (_n, text, upstream) => {
    expect(parseProcVersion(text).upstream).toBe(upstream);
  });

  it('reports a /proc/version without the prefix', () => {
    expect(parseProcVersion('6.12\n').problems.map((p) => p.line)).toEqual([1]);
  });
});

describe('kernel config', () => {
  it('reads y, m and is-not-set, ignoring comments', () => {
    const r = parseKernelConfig('#\n# Kprobes\nCONFIG_KPROBES=y\nCONFIG_KRETPROBES=y\nCONFIG_KPROBE_EVENTS=y\nCONFIG_KRETPROBE_ON_RETHOOK=y\n# CONFIG_FPROBE is not set\nCONFIG_SOMEMOD=m\nCONFIG_NR_CPUS=8192\nnonsense\n');
    expect(Object.fromEntries([...r.options].map(([k, v]) => [k, v.value]))).toEqual({
      KPROBES: 'y', KRETPROBES: 'y', KPROBE_EVENTS: 'y', KRETPROBE_ON_RETHOOK: 'y', FPROBE: 'n', SOMEMOD: 'm', NR_CPUS: '8192',
    });
    expect(r.options.get('FPROBE')?.line).toBe(7);
    expect(r.problems.map((p) => p.line)).toEqual([10]);
  });
});

describe('kallsyms family', () => {
  const text = [
    'ffffffff9985f780 t __pfx_pipe_read',
    'ffffffff9985f790 T pipe_read',
    'ffffffff99405460 t __pfx_pipe_read.isra.0',
    'ffffffff99405470 t pipe_read.isra.0',
    'ffffffff99405570 t pipe_read.constprop.0',
    'ffffffff99405670 t pipe_read.part.0',
    'ffffffff99405770 t pipe_read.cold',
    'ffffffff99405870 t pipe_readv',
    'ffffffff99405970 d pipe_read.isra.0',
    'ffffffffc0405470 t vc_check_opcode_bytes.isra.0\t[kvm]',
    'not a symbol line',
  ].join('\n');

  it('keeps the function, its clones and cold fragment; padding apart; reports junk', () => {
    const r = parseKallsyms(text, 'pipe_read');
    expect(r.symbols.map((s) => [s.name, s.role])).toEqual([
      ['pipe_read', 'function'],
      ['pipe_read.isra.0', 'clone'],
      ['pipe_read.constprop.0', 'clone'],
      ['pipe_read.part.0', 'clone'],
      ['pipe_read.cold', 'cold'],
    ]);
    expect(r.padding.map((s) => s.name)).toEqual(['__pfx_pipe_read', '__pfx_pipe_read.isra.0']);
    expect(r.problems.map((p) => p.line)).toEqual([11]);
  });

  it('reads the module column of a clone', () => {
    expect(parseKallsyms(text, 'vc_check_opcode_bytes').symbols[0]).toMatchObject({ name: 'vc_check_opcode_bytes.isra.0', module: 'kvm', role: 'clone' });
  });

  it.each([
    ['pipe_read', 'function'],
    ['pipe_read.constprop.0.isra.0', 'clone'],
    ['pipe_read.isra.0.cold', 'cold'],
    ['pipe_readv', undefined],
    ['pipe_read.foo', undefined],
  ])('family role of %s', (name, role) => {
    expect(familyRole(name, 'pipe_read')).toBe(role);
  });
});

describe('bpftool link show', () => {
  it('reads missed from plain output and 0 when plain omits it', () => {
    const r = parseBpftoolLinks(
      '5: perf_event  prog 82  \n\tkretprobe ffffffff8a4b1c30 do_sys_openat2  missed 12  \n\tpids loader(311)\n6: perf_event  prog 83  \n\tkprobe ffffffff8a4b2c30 scheduler_tick+0x4  \n7: tracing  prog 9  \n\tattach_type trace_fentry  \n',
    );
    expect(r.problems).toEqual([]);
    expect(r.links.map((l) => [l.id, l.kprobe?.retprobe, l.kprobe?.func, l.kprobe?.offset, l.kprobe?.missed, l.kprobe?.missedPrinted])).toEqual([
      [5, true, 'do_sys_openat2', 0, 12, true],
      [6, false, 'scheduler_tick', 4, 0, false],
      [7, undefined, undefined, undefined, undefined, undefined],
    ]);
  });

  it('reads missed from JSON, and leaves it unknown when an old bpftool has no field', () => {
    const r = parseBpftoolLinksJson(
      JSON.stringify([
        { id: 6, type: 'perf_event', prog_id: 83, retprobe: false, addr: 18446744071580753488, func: 'scheduler_tick', offset: 0, missed: 693469 },
        { id: 7, type: 'perf_event', prog_id: 84, retprobe: true, func: 'pipe_read', offset: 0 },
      ]),
    );
    expect(r.links.map((l) => [l.id, l.kprobe?.missed, l.kprobe?.missedPrinted])).toEqual([
      [6, 693469, true],
      [7, undefined, false],
    ]);
  });

  // Verbatim from the kernel lab (bpftool 7.5.0 on 6.12.95, 7.8.0 on 7.3.4; issue 22): a kprobe_multi
  // link's one missed for all its functions, and a tracing (fexit) link, which has no missed at all.
  it('reads a kprobe_multi link (its functions, func_cnt, missed) and a tracing link from plain output', () => {
    const r = parseBpftoolLinks(
      '3: kprobe_multi  prog 8  \n\tkretprobe.multi  func_cnt 2  missed 4  \n\taddr             cookie           func [module]\n\tffffffffc037f010 0                krtfix_target [krtfix]  \n\tffffffffc037f760 0                krtfix_helper.isra.0 [krtfix]  \n' +
        '5: kprobe_multi  prog 24  \n\tkretprobe.multi  func_cnt 2  \n\taddr             cookie           func [module]\n\tffffffffc0800010 0                krtfix_target [krtfix]  \n' +
        '6: tracing  prog 16  \n\tprog_type tracing  attach_type trace_fexit  \n\ttarget_obj_id 1  target_btf_id 124129  \n',
    );
    expect(r.problems).toEqual([]);
    expect(r.links.map((l) => [l.id, l.type, l.multi, l.tracing, l.kprobe])).toEqual([
      [3, 'kprobe_multi', { retprobe: true, funcCnt: 2, funcs: ['krtfix_target', 'krtfix_helper.isra.0'], missed: 4, missedPrinted: true }, undefined, undefined],
      [5, 'kprobe_multi', { retprobe: true, funcCnt: 2, funcs: ['krtfix_target'], missed: 0, missedPrinted: false }, undefined, undefined],
      [6, 'tracing', undefined, { attachType: 'trace_fexit' }, undefined],
    ]);
  });

  it('reads a kprobe_multi link and a tracing link from JSON', () => {
    const r = parseBpftoolLinksJson(
      '[{"id":5,"type":"kprobe_multi","prog_id":24,"retprobe":true,"func_cnt":2,"missed":0,"funcs":[{"addr":18446744072644198416,"func":"krtfix_target","module":"krtfix","cookie":0},{"addr":18446744072644200320,"func":"krtfix_helper.isra.0","module":"krtfix","cookie":0}]},' +
        '{"id":3,"type":"tracing","prog_id":16,"prog_type":"tracing","attach_type":"trace_fexit","target_obj_id":1,"target_btf_id":124129,"cookie":0}]',
    );
    expect(r.problems).toEqual([]);
    expect(r.links.map((l) => [l.id, l.multi, l.tracing])).toEqual([
      [5, { retprobe: true, funcCnt: 2, funcs: ['krtfix_target', 'krtfix_helper.isra.0'], missed: 0, missedPrinted: true }, undefined],
      [3, undefined, { attachType: 'trace_fexit' }],
    ]);
  });

  it('reports a stray plain line and bad JSON', () => {
    expect(parseBpftoolLinks('hello\n').problems.map((p) => p.line)).toEqual([1]);
    expect(parseBpftoolLinksJson('{').problems).toHaveLength(1);
  });
});

describe('bpftool link reader (kprobe_multi, issue 22)', () => {
  // A kprobe_multi link's missed is the link's one miss count (fprobe's pool, recursion, kprobe
  // running): read like a kprobe perf link's, on the first function it lists.
  it('a kprobe_multi link with missed gives counters.end.nmissed and the bpf-link source, in both forms', () => {
    const text = '3: kprobe_multi  prog 8  \n\tkretprobe.multi  func_cnt 2  missed 4  \n\taddr             cookie           func [module]\n\tffffffffc037f010 0                krtfix_target [krtfix]  \n';
    const json = '[{"id":3,"type":"kprobe_multi","prog_id":8,"retprobe":true,"func_cnt":2,"missed":4,"funcs":[{"addr":1,"func":"krtfix_target","module":"krtfix","cookie":0}]}]';
    for (const [kind, t, missedLine] of [['bpftool-link', text, 2], ['bpftool-link-json', json, 1]] as const) {
      const got = Object.fromEntries(readArtifact(kind, t).facts.map((f) => [f.path, [f.value, f.line]]));
      expect(got['counters.end.nmissed'], kind).toEqual([4, missedLine]);
      expect(got['counters.source']?.[0], kind).toBe('bpf-link');
      expect(got['probe.target']?.[0], kind).toBe('krtfix_target');
      // The link's fprobe was registered when the link was made (fprobe_init zeroes nmissed): one
      // registration, from 0 (issue 20, silent 3).
      expect(got['counters.start.nmissed'], kind).toEqual([0, missedLine]);
      expect([got['counters.start.epoch']?.[0], got['counters.end.epoch']?.[0], got['probe.registration.epoch']?.[0]], kind).toEqual(['reg-1', 'reg-1', 'reg-1']);
    }
  });

  it('a kprobe perf link\'s missed is its own kretprobe\'s since the link was made: from 0', () => {
    const got = Object.fromEntries(readArtifact('bpftool-link', '7: perf_event  prog 42  \n\tkretprobe ffffffff8d3b6c40 tcp_recvmsg  missed 9  \n').facts.map((f) => [f.path, f.value]));
    expect(got).toMatchObject({ 'probe.target': 'tcp_recvmsg', 'counters.source': 'bpf-link', 'counters.start.nmissed': 0, 'counters.end.nmissed': 9, 'counters.start.epoch': 'reg-1', 'counters.end.epoch': 'reg-1' });
  });

  it('a kprobe_multi link whose plain output leaves missed out (0, or a kernel before 6.7) states no count', () => {
    const r = readArtifact('bpftool-link', '5: kprobe_multi  prog 24  \n\tkretprobe.multi  func_cnt 2  \n\taddr             cookie           func [module]\n\tffffffffc0800010 0                krtfix_target [krtfix]  \n');
    expect(r.facts.map((f) => f.path).sort()).toEqual(['probe.bpf_attach', 'probe.bpf_functions', 'probe.registration.result', 'probe.target']);
  });
});
