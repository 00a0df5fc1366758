import { describe, expect, it } from 'vitest';
import { bpftraceProbes, parseBpftoolProgs, parseBpftraceOutput, parseDmesg, parsePerfProbe } from '../../src/evidence/index.js';
import { kindOfCommand, readArtifact, sniffArtifact, unreadableOf } from '../../src/evidence/artifacts.js';

describe('bpftrace output', () => {
  it('reads the attach line, scalar maps, lost events and leaves histograms out', () => {
    const r = parseBpftraceOutput(
      'Attaching 2 probes...\nTracing vfs_read... Hit Ctrl-C to end.\n^C\n\n@entries: 410\n@returns: 91\n@open[cat]: 3\n@us:\n[64, 128)     3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\nLost 12 events\n',
    );
    expect(r.attached).toEqual({ line: 1, probes: 2 });
    expect(r.maps.map((m) => [m.line, m.name, m.key, m.value])).toEqual([[5, 'entries', undefined, 410], [6, 'returns', undefined, 91], [7, 'open', 'cat', 3]]);
    expect(r.lost).toEqual([{ line: 10, count: 12 }]);
    expect(r.errors).toEqual([]);
  });

  it('reads an attach error with its location prefix', () => {
    const r = parseBpftraceOutput("stdin:1:1-27: ERROR: kretprobe target 'ublk_complete_rq' not found\n");
    expect(r.errors).toEqual([{ line: 1, message: "kretprobe target 'ublk_complete_rq' not found" }]);
    expect(r.attached).toBeUndefined();
  });

  it('an error naming a symbol it could not find, after "Attaching", is the attach failing, not a session that ran', () => {
    const facts = (text: string) => Object.fromEntries(readArtifact('bpftrace', text).facts.map((f) => [f.path, f.value]));
    const failed = facts('Attaching 1 probe...\nERROR: Could not resolve symbol: vfs_fsync_range\n');
    expect(failed['probe.registration.result']).toBe('ENOENT');
    expect(failed['probe.armed']).toBeUndefined();
    // A session that printed its maps after attaching did run armed.
    expect(facts('Attaching 1 probe...\n@returns: 3\n')).toMatchObject({ 'probe.registration.result': 'ok', 'probe.armed': true });
  });

  it.each([
    // One function: a perf_event_open kretprobe (kernel-facts.md §9).
    ["# bpftrace -e 'kretprobe:vfs_read { @r = count(); }'\nAttaching 1 probe...\n@r: 3\n", 'perf-kretprobe'],
    ["# bpftrace -e 'kprobe:vfs_read { @e = count(); } kr:vfs_read { @r = count(); }'\nAttaching 2 probes...\n", 'perf-kretprobe'],
    // An entry point sharing the return point's clause is a probe of its own (bpftrace issue 1035's script).
    ["# bpftrace -e 'kprobe:schedule,kretprobe:schedule /comm == \"a.out\"/{printf(\"%s\\n\", probe)}'\nAttaching 2 probes...\nkprobe:schedule\n", 'perf-kretprobe'],
    // A wildcard bpftrace counted as more probes than the script names was expanded, one kretprobe each.
    ["# bpftrace -e 'kretprobe:krtfix_* { @returns = count(); }'\nAttaching 2 probes...\n@returns: 10\n", 'perf-kretprobe'],
    ["# bpftrace -e 'BEGIN { } kretprobe:krtfix_* { @r = count(); } END { }'\nAttaching 5 probes...\n", 'perf-kretprobe'],
    // One probe for the wildcard: a kprobe_multi link where the kernel has it (bpftool link show says).
    ["# bpftrace -e 'kretprobe:krtfix_* { @returns = count(); }'\nAttaching 1 probe...\n@returns: 8\n", undefined],
    ["# bpftrace -e 'BEGIN { } kretprobe:krtfix_* { @r = count(); } END { }'\nAttaching 3 probes...\n", undefined],
    // A list may be one link; two wildcards cannot say which was expanded.
    ["# bpftrace -e 'kretprobe:vfs_read,kretprobe:vfs_write { @r = count(); }'\nAttaching 2 probes...\n", undefined],
    ["# bpftrace -e 'kprobe:krtfix_* { } kretprobe:krtfix_* { @r = count(); }'\nAttaching 4 probes...\n", undefined],
    // A trampoline is one.
    ["# bpftrace -e 'fexit:vfs_read { @r = count(); }'\nAttaching 1 probe...\n", 'fexit'],
  ])('bpftrace states how its return probe sits on the function: %j', (text, attach) => {
    expect(Object.fromEntries(readArtifact('bpftrace', text).facts.map((f) => [f.path, f.value]))['probe.bpf_attach']).toBe(attach);
  });

  it.each([
    // bcc's Python call: a perf_event_open kretprobe, or with a maxactive a tracefs r<N>: event (bcc PR #2224).
    ['b.attach_kretprobe(event="tcp_recvmsg", fn_name="ret")\n', 'bcc-program', { 'probe.interface': 'bpf-link', 'probe.bpf_attach': 'perf-kretprobe', 'probe.target': 'tcp_recvmsg' }],
    ['b.attach_kretprobe(event="fuse_file_write_iter", fn_name="r", maxactive=maxactive)\n', 'bcc-program', { 'probe.interface': 'tracefs', 'probe.target': 'fuse_file_write_iter' }],
    // A kretprobe__ name alone (gobpf's ELF programs, trace output) says nothing of how it was attached.
    ['scope-19720 [000] d...   497.512012: : kretprobe__tcp_v4_connect - pid_tgid 84662395358472\n', 'bcc-program', {}],
    // libbpf's section names.
    ['SEC("kretprobe/vfs_read")\nint BPF_KRETPROBE(r, long ret) { return 0; }\n', 'libbpf-program', { 'probe.interface': 'bpf-link', 'probe.bpf_attach': 'perf-kretprobe', 'probe.target': 'vfs_read' }],
    ['SEC("kretprobe.multi/vfs_*")\nint r(struct pt_regs *ctx) { return 0; }\n', 'libbpf-program', { 'probe.interface': 'bpf-link', 'probe.bpf_attach': 'kprobe-multi' }],
    ['SEC("kprobe/nvme_submit")\nint e(void *c) { return 0; }\nSEC("fexit/nvme_complete_rq")\nint BPF_PROG(x) { return 0; }\n', 'libbpf-program', { 'probe.interface': 'bpf-link', 'probe.bpf_attach': 'fexit', 'probe.target': 'nvme_complete_rq' }],
    // Two return programs attached two ways: no one pool to speak of.
    ['SEC("kretprobe/a")\nint x(void *c) { return 0; }\nSEC("fexit/b")\nint y(void *c) { return 0; }\n', 'libbpf-program', {}],
  ] as const)('a BPF program says how its return probe is attached: %j', (text, kind, want) => {
    const got = Object.fromEntries(readArtifact(kind, text).facts.filter((f) => f.path !== 'probe.kind').map((f) => [f.path, f.value]));
    expect(got).toEqual(want);
  });

  it.each([
    ["kretprobe:vfs_read { @r = count(); }", [['kretprobe', undefined, 'vfs_read']]],
    ["kr:nfsd:nfsd_dispatch { }", [['kretprobe', 'nfsd', 'nfsd_dispatch']]],
    ["fexit:nvme_core:nvme_complete_rq { @done = count(); }", [['fexit', 'nvme_core', 'nvme_complete_rq']]],
    ["kprobe:vfs_read { } kretfunc:vfs_read { }", [['kprobe', undefined, 'vfs_read'], ['fexit', undefined, 'vfs_read']]],
  ])('names the probes of %s', (script, want) => {
    expect(bpftraceProbes(script).map((p) => [p.kind, p.module, p.symbol])).toEqual(want);
  });
});

describe('dmesg lines of a probe module', () => {
  it('reads the kretprobe sample module messages and nmissed fields', () => {
    const r = parseDmesg(
      [
        '[ 8120.001122] kretprobe_example: Planted return probe at kernel_clone: ffffffff8a0b1c20',
        '[ 8231.550120] kretprobe_example: Missed probing 28 instances of kernel_clone',
        '[ 8300.000001] mydrv_probe: rp.nmissed=3 rp.kp.nmissed=1',
        '[   12.000000] kretprobe_example: register_kretprobe failed, returned -2',
        'Dec 01 10:00:00 host kernel: nfsd_probe: nmissed 7',
        'not a log line',
      ].join('\n'),
    );
    expect(r.reports.map((x) => [x.line, x.prefix, x.planted?.symbol, x.nmissed, x.kprobeNmissed, x.registerFailed?.errno])).toEqual([
      [1, 'kretprobe_example', 'kernel_clone', undefined, undefined, undefined],
      [2, 'kretprobe_example', undefined, 28, undefined, undefined],
      [3, 'mydrv_probe', undefined, 3, 1, undefined],
      [4, 'kretprobe_example', undefined, undefined, undefined, 2],
      [5, 'nfsd_probe', undefined, 7, undefined, undefined],
    ]);
    expect(r.lines).toHaveLength(5);
  });

  it('reads the pool a module prints beside its counter as the pool the registration got', () => {
    const text = '[   50.100000] my_probe: kretprobe vfs_read: nmissed=5 maxactive=20\n[   51.000000] my_probe: maxactive=64 requested\n';
    expect(parseDmesg(text).reports.map((x) => [x.line, x.nmissed, x.maxactive])).toEqual([[1, 5, 20]]);
    const facts = readArtifact('dmesg', text).facts.map((f) => [f.path, f.value]);
    expect(facts).toContainEqual(['probe.maxactive.effective', 20]);
    // A pool with no counter beside it (a request, a log of settings) is not read as the registration's.
    expect(facts.filter(([p]) => p === 'probe.maxactive.effective')).toHaveLength(1);
  });
});

describe('perf\'s own lost records', () => {
  it('are a tracer buffer\'s loss (a floor: a lost chunk is at least one sample), never the trace\'s LOST markers', () => {
    const facts = (text: string) => readArtifact('lost-events', text).facts.map((f) => [f.path, f.value]);
    expect(facts('[ perf record: Woken up 1 times to write data ]\nWarning:\nProcessed 1000 events and lost 7 chunks!\n\nCheck IO/CPU overload!\n')).toEqual([['ledger.buffer_overruns', 7]]);
    expect(facts('# Total Lost Samples: 42\n#\n# Samples: 1K of event probe:vfs_read__return\n')).toEqual([['ledger.buffer_overruns', 42]]);
    expect(facts('# Total Lost Samples: 0\n')).toEqual([['ledger.buffer_overruns', 0]]);
    // ftrace's markers stay the trace's own.
    expect(facts('  cat-1 [000] ..... 1.0: gate: (a <- b)\nCPU:0 [LOST 3 EVENTS]\n')).toEqual([['ledger.lost_events', 3]]);
  });

  it('reads perf trace\'s upper-case LOST line (builtin-trace.c prints "LOST %" PRIu64 " events!")', () => {
    const text = '     0.000 ( 0.004 ms): cat/1234 read(fd: 3, buf: 0x7f, count: 131072) = 12\nLOST 12 events!\nLOST 3 events!\n';
    // Recognised as such in a pasted block (the sniff), not only when the kind is named.
    expect(sniffArtifact(text)).toBe('lost-events');
    expect(readArtifact('lost-events', text).facts.map((f) => [f.path, f.value])).toEqual([['ledger.buffer_overruns', 15]]);
  });
});

describe('trace-cmd report\'s marker of the ring buffer\'s loss', () => {
  // trace-cmd.c show_data: "CPU:%d [%lld EVENTS DROPPED]" on a line of its own before the record
  // that followed the loss, "CPU:%d [EVENTS DROPPED]" when the count is unknown.
  const text = 'version = 6\ncpus=2\n            cat-1234  [001]  1000.000100: gate_entry:           (pipe_read+0x0/0x400)\nCPU:1 [204600 EVENTS DROPPED]\n            cat-1234  [001]  1000.000300: gate:                 (pipe_write+0x1a/0x200 <- pipe_read)\n';
  it('is the trace\'s own loss (lost_events), cited at its line, in a pasted block', () => {
    expect(sniffArtifact(text)).toBe('lost-events');
    const r = readArtifact('lost-events', text);
    expect(r.facts.map((f) => [f.path, f.value, f.line])).toEqual([['ledger.lost_events', 204600, 4]]);
  });
  it('without a count, records were lost and how many is unknown', () => {
    const r = readArtifact('lost-events', 'CPU:0 [EVENTS DROPPED]\n');
    expect(r.facts).toEqual([]);
    expect(r.problems.map((p) => p.line)).toEqual([1]);
  });
});

describe('an LTTng session\'s discarded records, as babeltrace reports them', () => {
  const read = (text: string) => readArtifact('lost-events', text);
  const facts = (text: string) => read(text).facts.map((f) => [f.path, f.value]);
  it('are the tracer buffers\' loss (buffer_overruns), in babeltrace 1 and 2 wording', () => {
    expect(sniffArtifact('WARNING: Tracer discarded 2 packets between [2] and [3] in trace "s".\n')).toBe('lost-events');
    // babeltrace 1 (formats/ctf/ctf.c): "[warning] Tracer discarded N events at end of stream between [".
    expect(facts('[warning] Tracer discarded 220 events at end of stream between [10:00:00.000000000] and [10:00:01.000000000] in trace UUID 1, at path: "/root/lttng-traces/s/kernel", within stream id 0.\n')).toEqual([['ledger.buffer_overruns', 220]]);
    // babeltrace 2 (plugins/text/pretty/print.c): "WARNING: Tracer discarded N events between [", singular for one.
    expect(facts('WARNING: Tracer discarded 1 event between [10:00:00.000000000] and [10:00:01.000000000] in trace "s" (UUID: 1) within stream "kernel_0".\nWARNING: Tracer discarded 9 events between [10:00:01.000000000] and [10:00:02.000000000] in trace "s".\n')).toEqual([['ledger.buffer_overruns', 10]]);
  });
  it('leave the loss unknown, with the reason, when only packets are counted (a packet holds any number of records)', () => {
    const text = 'WARNING: Tracer discarded 3 events between [1] and [2] in trace "s".\nWARNING: Tracer discarded 2 packets between [2] and [3] in trace "s".\n';
    expect(facts(text)).toEqual([]);
    expect(read(text).problems.map((p) => p.line)).toEqual([2]);
  });
});

describe('the ftrace ring buffer\'s own loss, pasted', () => {
  // Documentation/trace/ftrace.rst, "Output format": the `trace` header "shows the number of
  // events in the buffer as well as the total number of entries that were written. The
  // difference is the number of entries that were lost due to the buffer filling up"; its example
  // is the header below (250280 - 140080 = 110200).
  const HEADER = '# tracer: function\n#\n# entries-in-buffer/entries-written: 140080/250280   #P:4\n#\n#                              _-----=> irqs-off\n';
  const facts = (text: string) => readArtifact('lost-events', text).facts.map((f) => [f.path, f.value, f.line]);

  it('reads the trace header\'s overwritten entries as lost events, cited at the header', () => {
    expect(sniffArtifact(HEADER)).toBe('lost-events');
    expect(facts(HEADER)).toEqual([['ledger.lost_events', 110200, 3]]);
    // Nothing overwritten: nothing lost before the read.
    expect(facts('# entries-in-buffer/entries-written: 45/45   #P:2\n')).toEqual([['ledger.lost_events', 0, 1]]);
  });

  it('a marker without a count (the writer overtook the read) is a loss of unknown size: no figure, a problem', () => {
    const r = readArtifact('lost-events', `${HEADER}  cat-1 [000] ..... 1.0: gate: (a <- b)\nCPU:2 [LOST EVENTS]\n`);
    expect(r.facts.filter((f) => f.path === 'ledger.lost_events')).toEqual([]);
    expect(r.problems).toEqual([expect.objectContaining({ line: 7, got: expect.stringMatching(/how many is unknown/) })]);
  });
});

describe('perf stat counts of perf probe events', () => {
  // As perf stat prints them (tools/perf/util/stat-display.c: the count, grouped by the locale
  // with --big-num, the default on a terminal; then the event), for a return event perf probe
  // named F__return (tools/perf/Documentation/perf-probe.txt: %return) and its entry twin F.
  const OUT = "\n Performance counter stats for 'system wide':\n\n           120,034      probe:vfs_read\n           119,990      probe:vfs_read__return\n\n      10.001234567 seconds time elapsed\n\n";
  const facts = (text: string) => readArtifact('perf-stat', text).facts.map((f) => [f.path, f.value, f.line, f.subject?.event]);

  it('reads the return event\'s count as returns and its entry twin\'s as entry-probe hits', () => {
    expect(sniffArtifact(OUT)).toBe('perf-stat');
    expect(facts(OUT)).toEqual([
      ['ledger.returns', 119990, 5, 'probe:vfs_read__return'],
      ['ledger.entry_events', 120034, 4, 'probe:vfs_read__return'],
    ]);
    // Without grouping (LC_NUMERIC=C, --no-big-num), and with perf's notes after the name.
    expect(facts(OUT.replace('120,034', '120034').replace('119,990      probe:vfs_read__return', '119990      probe:vfs_read__return      ( +-  0.12% )'))).toEqual([
      ['ledger.returns', 119990, 5, 'probe:vfs_read__return'],
      ['ledger.entry_events', 120034, 4, 'probe:vfs_read__return'],
    ]);
  });

  it('a count perf could not take is no figure; two return events are two probes, none the case\'s', () => {
    expect(facts(OUT.replace('           119,990      probe:vfs_read__return', '   <not counted>      probe:vfs_read__return'))).toEqual([['ledger.entry_events', 120034, 4, 'probe:vfs_read__return']]);
    expect(facts(`${OUT}           7      probe:vfs_write__return\n`)).toEqual([]);
  });
});

describe('perf probe output', () => {
  it('reads an added return event, with and without a module', () => {
    const r = parsePerfProbe('Added new event:\n  probe:ext4_sync_file__return (on ext4_sync_file%return)\n\nYou can now use it in all perf tools, such as:\n\n\tperf record -e probe:ext4_sync_file__return -aR sleep 1\n');
    expect(r.added).toBe(true);
    expect(r.events.map((e) => [e.line, e.group, e.event, e.symbol, e.retprobe, e.module])).toEqual([[2, 'probe', 'ext4_sync_file__return', 'ext4_sync_file', true, undefined]]);
    const l = parsePerfProbe('  probe:nfsd_dispatch__return (on nfsd_dispatch%return in nfsd)\n  probe:vfs_read (on vfs_read@fs/read_write.c)\n');
    expect(l.events.map((e) => [e.event, e.retprobe, e.module])).toEqual([['nfsd_dispatch__return', true, 'nfsd'], ['vfs_read', false, undefined]]);
  });

  it('reads a missing symbol', () => {
    const r = parsePerfProbe('Failed to find symbol foo_bar in kernel\n  Error: Failed to add events.\n');
    expect(r.errors.map((e) => [e.line, e.notFound])).toEqual([[1, true], [2, false]]);
  });

  // tools/perf/util/probe-file.c prints "Failed to write event: %s" with strerror() of the
  // write(2) to kprobe_events that the kernel refused, then builtin-probe.c "  Error: Failed to add
  // events."; with -v the code follows as " Reason: %s (Code: %d)". The probe is the command line's.
  it('reads the kernel refusing the definition, bound to the probe the command line asked for', () => {
    const busy = "$ sudo perf probe -a 'vfs_read%return'\nFailed to write event: Device or resource busy\n  Error: Failed to add events.\n";
    const r = parsePerfProbe(busy);
    expect(r.asked).toEqual({ line: 1, symbol: 'vfs_read', retprobe: true });
    expect(r.errors.map((e) => [e.line, e.strerror])).toEqual([[2, 'Device or resource busy'], [3, undefined]]);
    const facts = (t: string) => readArtifact('perf-probe', t).facts.map((f) => [f.path, f.value, f.line, f.subject?.kind]);
    expect(facts(busy)).toEqual([
      ['probe.interface', 'perf-probe', 1, 'return'],
      ['probe.target', 'vfs_read', 1, 'return'],
      ['probe.interface', 'perf-probe', 2, 'return'],
      ['probe.registration.result', 'EBUSY', 2, 'return'],
      ['probe.registration.reason', 'Failed to write event: Device or resource busy', 2, 'return'],
    ]);
    // An entry probe's refusal is the entry probe's; with -v the code line names the errno too.
    expect(facts('# perf probe --add=do_sys_open\n  Error: Failed to add events. Reason: Invalid argument (Code: -22)\n').filter((f) => f[0] === 'probe.registration.result')).toEqual([['probe.registration.result', 'EINVAL', 2, 'entry']]);
    // A symbol perf could not find is ENOENT, whatever the kernel would have said.
    expect(facts("perf probe 'tcp_sendmsg_locked%return'\nProbe point 'tcp_sendmsg_locked%return' not found.\n  Error: Failed to add events.\n").filter((f) => f[0] === 'probe.registration.result')).toEqual([['probe.registration.result', 'ENOENT', 2, 'return']]);
    // Opening kprobe_events refused (netdev, Andy Lutomirski, 2019-08-26, with
    // perf_event_paranoid at -1 and no root: https://lore.kernel.org/netdev/CALCETrUARqcn8EmjcgMc8KP=4O5nZDMh=tcruEYvUgSzMKJUBw@mail.gmail.com/).
    expect(facts('$ perf probe --add vfs_mknod\nFailed to open kprobe_events: Permission denied\n  Error: Failed to add events.\n').filter((f) => f[0] === 'probe.registration.result')).toEqual([['probe.registration.result', 'EACCES', 2, 'entry']]);
    // Listing and deleting ask for no probe; output pasted without its command is recognised.
    expect(parsePerfProbe('perf probe -d probe:vfs_read__return\n').asked).toBeUndefined();
    expect(parsePerfProbe('perf probe -a vfs_read -a vfs_write\n').asked).toBeUndefined();
    expect(parsePerfProbe('perf probe -m ext4 ext4_sync_file%return ret=$retval\n').asked).toEqual({ line: 1, symbol: 'ext4_sync_file', retprobe: true });
    expect(sniffArtifact('Failed to write event: File exists\n  Error: Failed to add events.\n')).toBe('perf-probe');
  });
});

describe('bpftool prog show', () => {
  it('reads recursion_misses and reads 0 where run stats are printed without it', () => {
    const r = parseBpftoolProgs(
      '87: tracing  name nvme_complete_rq  tag 2b3c4d5e6f708192  gpl  run_time_ns 981234 run_cnt 5123 recursion_misses 3\n\tloaded_at 2026-11-20T09:12:40+0000  uid 0\n\txlated 312B  jited 201B  memlock 4096B  map_ids 41\n88: kprobe  name ret_vfs_read  tag 0011223344556677  gpl  run_time_ns 100 run_cnt 9\n\tpids bpftrace(9120)\n89: kprobe  name other  tag 8899aabbccddeeff  gpl\n',
    );
    expect(r.problems).toEqual([]);
    expect(r.progs.map((p) => [p.id, p.type, p.name, p.runCnt, p.recursionMisses])).toEqual([
      [87, 'tracing', 'nvme_complete_rq', 5123, 3],
      [88, 'kprobe', 'ret_vfs_read', 9, 0],
      [89, 'kprobe', 'other', undefined, undefined],
    ]);
  });
});

describe('a tool\'s report of a file it could not read', () => {
  it('names the facts of the reader whose file it is, with the reason, at the file name', () => {
    const u = (t: string) => unreadableOf(t).map((x) => [x.path, x.reason, x.line, x.col]);
    expect(u('cat: /sys/kernel/tracing/kprobe_profile: Permission denied\n')).toEqual([
      ['counters.end.nmissed', '/sys/kernel/tracing/kprobe_profile could not be read: Permission denied', 1, 5],
      ['counters.end.hits', '/sys/kernel/tracing/kprobe_profile could not be read: Permission denied', 1, 5],
    ]);
    expect(u("total 0\nls: cannot access '/sys/kernel/debug/kprobes/list': No such file or directory\n")).toEqual([['probe.armed', '/sys/kernel/debug/kprobes/list could not be read: No such file or directory', 2, 19]]);
    expect(u('cat: /sys/kernel/tracing/per_cpu/cpu3/stats: Permission denied\n').map((x) => x[0])).toEqual(['ledger.buffer_overruns']);
    // A file no reader reads, a relative path, or a line that only mentions the error are nothing.
    expect(u('cat: /etc/shadow: Permission denied\ncat: kprobe_profile: Permission denied\nI got Permission denied on /sys/kernel/tracing/kprobe_profile\n')).toEqual([]);
  });
});

describe('a refused redirect into kprobe_events', () => {
  it('is the errno of the open, for the definition the echo wrote', () => {
    const r = readArtifact('kprobe_events-write', "$ echo 'r:myprobe do_sys_openat2' >> /sys/kernel/tracing/kprobe_events\n-bash: /sys/kernel/tracing/kprobe_events: Permission denied\n");
    expect(r.facts.filter((f) => f.path === 'probe.registration.result').map((f) => [f.value, f.line, f.subject?.kind])).toEqual([['EACCES', 2, 'return']]);
  });
});

// SystemTap (runtime/linux/kprobes.c, stapkp_add_missed): at unregistration, with timing on
// (stap -t), a `.return` probe's kretprobe nmissed is printed as "missed kretprobe/1" and its
// kprobe's kp.nmissed as "missed kretprobe/2", each only when not 0. The session registered the
// probe once, at its start: the counts are that registration's, from 0.
describe('SystemTap\'s missed-kretprobe report', () => {
  const facts = (t: string) => Object.fromEntries(readArtifact('systemtap', t).facts.map((f) => [f.path, f.value]));
  it('is the session\'s one registration, both parts, the absent part 0', () => {
    const out = "WARNING: Number of errors: 0, skipped probes: 41\nWARNING: Skipped due to missed kretprobe/1 on 'kernel.function(\"vfs_read@fs/read_write.c:450\").return': 37\n";
    expect(sniffArtifact(out)).toBe('systemtap');
    expect(facts(out)).toEqual({
      'probe.interface': 'module', 'probe.target': 'vfs_read', 'counters.source': 'module-field',
      'counters.start.epoch': 'reg-1', 'counters.end.epoch': 'reg-1', 'probe.registration.epoch': 'reg-1',
      'counters.start.nmissed': 0, 'counters.end.nmissed': 37, 'counters.start.kprobe_nmissed': 0, 'counters.end.kprobe_nmissed': 0,
    });
    expect(facts("WARNING: Skipped due to missed kretprobe/2 on 'module(\"ext4\").function(\"ext4_sync_file\").return': 3\n")).toMatchObject({ 'probe.target': 'ext4_sync_file', 'counters.end.nmissed': 0, 'counters.end.kprobe_nmissed': 3 });
  });
  it('keeps SystemTap\'s own skipped-probe total apart, and two probe points unread', () => {
    expect(facts('WARNING: Number of errors: 0, skipped probes: 37\n')).toEqual({});
    expect(facts("WARNING: Skipped due to missed kretprobe/1 on 'kernel.function(\"vfs_read\").return': 3\nWARNING: Skipped due to missed kretprobe/1 on 'kernel.function(\"vfs_write\").return': 4\n")).toEqual({});
  });
});

// A module's own log of its registration and of its struct at unregistration (issue 21 class 2):
// register_kretprobe() zeroes rp->nmissed and register_kprobe() kp->nmissed, so the counts a
// module prints when it unregisters are that registration's, from 0, even where the count line
// does not name the function (the log plants one function only).
describe('a module\'s own registration and unregistration lines', () => {
  const LOG = '[ 1012.113301] myprobe: registered kretprobe on nfsd_dispatch, maxactive=20\n[ 1300.551002] myprobe: unregistering, nmissed=57 maxactive=20\n[ 1300.551010] myprobe: kp.nmissed=0\n';
  const facts = (t: string) => readArtifact('dmesg', t).facts.map((f) => [f.path, f.value, f.line]);
  it('are one registration: started at 0, the unnamed count its end', () => {
    expect(facts(LOG)).toEqual(expect.arrayContaining([
      ['probe.registration.result', 'ok', 1], ['probe.target', 'nfsd_dispatch', 1],
      ['counters.start.nmissed', 0, 1], ['counters.start.kprobe_nmissed', 0, 1], ['counters.start.epoch', 'reg-1', 1],
      ['counters.end.nmissed', 57, 2], ['probe.maxactive.effective', 20, 2], ['counters.end.kprobe_nmissed', 0, 3],
    ]));
  });
  it('(guard) "unregistered" starts nothing, and a count before a later registration is an ended one\'s', () => {
    expect(facts('[ 5.1] myprobe: kretprobe unregistered for nfsd_dispatch\n').filter((f) => f[0] === 'probe.registration.result')).toEqual([]);
    const two = '[ 1.0] m: registered kretprobe on f\n[ 2.0] m: nmissed=3\n[ 3.0] m: registered kretprobe on f\n';
    expect(facts(two).filter((f) => f[0] === 'counters.end.nmissed')).toEqual([]);
  });
});

// A bpftrace session that reads the kretprobe as it is unregistered (issue 21 class 2): on
// unregister_kretprobes, which unregister_kretprobe() goes through with an array of one
// (kernel/kprobes.c), and with the kprobe's own count beside the pool's.
describe('struct kretprobe fields read at unregistration by bpftrace', () => {
  it('reads the batch call and kp.nmissed, both from 0', () => {
    const out = "bpftrace -e 'kprobe:unregister_kretprobes { $rp = *(struct kretprobe **)arg0; printf(\"nmissed=%d kp.nmissed=%lu maxactive=%d\\n\", $rp->nmissed, $rp->kp.nmissed, $rp->maxactive); }'\nAttaching 1 probe...\nnmissed=12 kp.nmissed=3 maxactive=40\n";
    const facts = Object.fromEntries(readArtifact('bpftrace', out).facts.map((f) => [f.path, f.value]));
    expect(facts).toMatchObject({ 'counters.start.nmissed': 0, 'counters.end.nmissed': 12, 'counters.start.kprobe_nmissed': 0, 'counters.end.kprobe_nmissed': 3, 'probe.maxactive.effective': 40, 'counters.source': 'module-field' });
    // A script on another function prints no kretprobe's fields.
    expect(readArtifact('bpftrace', out.replace(/unregister_kretprobes/g, 'unregister_kprobes').replace('struct kretprobe', 'struct kprobe')).facts.filter((f) => f.path.startsWith('counters.'))).toEqual([]);
  });
});

describe('tracers\' own attach refusals (issue 21 class 1): perf probe pasted alone, bpftrace, libbpf', () => {
  const facts = (kind: 'attach-failure' | 'perf-probe', text: string) => {
    expect(sniffArtifact(text)).toBe(kind);
    return Object.fromEntries(readArtifact(kind, text).facts.map((f) => [f.path, [f.value, f.subject?.kind]]));
  };
  it('perf probe -v on a return probe, no command line: the written definition names the kind, the Code the errno (lore: Jianlin Lv, "perf probe: Fix kretprobe issue caused by GCC bug", 2021)', () => {
    const text = '  Writing event: r:probe/kernel_clone__return _text+599624 $retval\n  Failed to write event: Invalid argument\n    Error: Failed to add events. Reason: Invalid argument (Code: -22)\n';
    // Placed at an offset from _text: the line names no function, so no probe is bound by it.
    expect(facts('perf-probe', text)['probe.registration.result']).toEqual(['EINVAL', undefined]);
  });
  it('perf probe -v on a function it cannot map: the parsed point names an entry probe (live-patching: Masami Hiramatsu, "Re: \'perf probe\' and symbols from .text.<something>", 2021-02-23)', () => {
    const text = "> symbol:nf_ct_resolve_clash file:(null) line:0 offset:0 return:0 lazy:(null)\n> Probe point 'nf_ct_resolve_clash' not found.\n>    Error: Failed to add events. Reason: No such file or directory (Code: -2)\n".replace(/^> /gm, '');
    expect(facts('perf-probe', text)).toEqual({ 'probe.interface': ['perf-probe', 'entry'], 'probe.target': ['nf_ct_resolve_clash', 'entry'], 'probe.kind': ['entry', 'entry'], 'probe.registration.result': ['ENOENT', 'entry'], 'probe.registration.reason': ["Probe point 'nf_ct_resolve_clash' not found.", 'entry'] });
  });
  it('perf probe\'s not-found point alone: %return makes it the return probe', () => {
    expect(facts('perf-probe', "Probe point 'tcp_sendmsg_locked%return' not found.\n  Error: Failed to add events.\n")['probe.target']).toEqual(['tcp_sendmsg_locked', 'return']);
  });
  it('bpftrace\'s refusal names the probe: a kprobe\'s is the entry probe\'s (bpftrace src/attached_probe.cpp)', () => {
    // "Attaching N probes..." is printed before the attach: the refusal after it is no registration, nothing armed.
    const out = "Attaching 2 probes...\nError attaching probe: 'kretprobe:vfs_foo'\n";
    expect(sniffArtifact(out)).toBe('bpftrace');
    expect(Object.fromEntries(readArtifact('bpftrace', out).facts.map((f) => [f.path, [f.value, f.subject?.kind]]))).toEqual({ 'probe.interface': ['bpftrace', 'return'], 'probe.target': ['vfs_foo', 'return'], 'probe.registration.result': ['error', 'return'] });
    // A script whose entry probe was refused: the refusal is the entry probe's, and the session ended before anything was armed.
    const script = "# bpftrace -e 'kprobe:vfs_fo { @s[tid] = nsecs; } kretprobe:vfs_read /@s[tid]/ { @ns = hist(nsecs - @s[tid]); }'\nAttaching 2 probes...\nError attaching probe: 'kprobe:vfs_fo'\n";
    const r = readArtifact(sniffArtifact(script)!, script).facts;
    expect(r.filter((f) => f.subject?.kind === 'return' && (f.path === 'probe.registration.result' || f.path === 'probe.armed'))).toEqual([]);
    expect(r.filter((f) => f.path === 'probe.registration.result').map((f) => [f.value, f.subject?.kind, f.subject?.symbol])).toEqual([['error', 'entry', 'vfs_fo']]);
    // Skipped instead (a wildcard's match, missing_probes=warn): the return probe still attached and ran.
    const skipped = script.replace("Error attaching probe: 'kprobe:vfs_fo'", 'Warning: could not attach probe kprobe:vfs_fo, skipping.\n@ns: 12');
    const k = readArtifact(sniffArtifact(skipped)!, skipped).facts;
    expect(k.filter((f) => f.subject?.kind === 'return' && f.path === 'probe.registration.result').map((f) => f.value)).toEqual(['ok']);
    // A match of the script's own wildcard skipped is the script's probe failing (bpftrace#304, Brendan Gregg, 2018-12-31).
    const wild = "# sudo bpftrace -e 'k:tcp_grow* { @[probe] = count(); }'\nAttaching 1 probe...\ncannot attach kprobe, Invalid argument\nWarning: could not attach probe kprobe:tcp_grow_window.isra.39, skipping.\n^C\n";
    const w = readArtifact(sniffArtifact(wild)!, wild).facts;
    expect(w.filter((f) => f.path === 'probe.registration.result' || f.path === 'probe.armed').map((f) => [f.path, f.value, f.subject?.kind])).toEqual([['probe.registration.result', 'EINVAL', 'entry']]);
    // Quoted in "BPF Performance Tools" (Gregg, 2019) for bpftrace's biosnoop on 5.0+ kernels.
    expect(facts('attach-failure', 'Warning: could not attach probe kprobe:blk_start_request, skipping.\n')['probe.kind']).toEqual(['entry', 'entry']);
    // Built on bcc's libbpf, bpftrace printed the strerror (or bcc's words for ENOENT) on the line before.
    expect(facts('attach-failure', "cannot attach kprobe, probe entry may not exist\nError attaching probe: 'kretprobe:vfs_foo'\n")['probe.registration.result']).toEqual(['ENOENT', 'return']);
  });
  it('libbpf\'s refusal, with strerror or with errstr()\'s symbolic name (libbpf.c bpf_program__attach_kprobe_opts)', () => {
    expect(facts('attach-failure', "libbpf: prog 'handle_exit': failed to create kretprobe 'vfs_foo+0x0' perf event: No such file or directory\n")['probe.registration.result']).toEqual(['ENOENT', 'return']);
    expect(facts('attach-failure', "libbpf: prog 'handle_exit': failed to create kretprobe 'vfs_foo+0x0' perf event: -ENOENT\n")['probe.registration.result']).toEqual(['ENOENT', 'return']);
    expect(facts('attach-failure', "libbpf: prog 'on_open': failed to create kprobe 'do_sys_openat2+0x0' perf event: Invalid argument\n")['probe.kind']).toEqual(['entry', 'entry']);
  });
});

describe('switches read back: an event\'s enable file, kprobes\' global enabled', () => {
  it('an event not enabled was not armed; "1" alone says nothing (the bundle reads them alike, bundle.ts armedIn)', () => {
    const ctx = { command: 'cat /sys/kernel/tracing/events/kprobes/myret/enable' };
    expect(kindOfCommand(ctx.command)).toBe('event-enable');
    expect(readArtifact('event-enable', '0\n', ctx).facts.map((f) => [f.path, f.value, f.subject?.event])).toEqual([['probe.armed', false, 'kprobes/myret']]);
    expect(readArtifact('event-enable', '1\n', ctx).facts).toEqual([]);
  });
  it('kprobes disabled globally disarm every probe (kernel/kprobes.c disarm_all_kprobes)', () => {
    expect(kindOfCommand('cat /sys/kernel/debug/kprobes/enabled')).toBe('kprobes_enabled');
    expect(kindOfCommand('cat /sys/kernel/debug/kprobes/list')).toBe('kprobes_list');
    expect(readArtifact('kprobes_enabled', '0\n').facts.map((f) => [f.path, f.value])).toEqual([['probe.armed', false]]);
    expect(readArtifact('kprobes_enabled', '1\n').facts).toEqual([]);
  });
});
