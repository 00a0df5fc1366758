import { beforeAll, describe, expect, it } from 'vitest';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

type Obj = Record<string, unknown>;
const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

let lex: Lexicon;
beforeAll(async () => {
  lex = await loadLexicon();
});

/**
 * Reader classes of issue 21, each on an excerpt of a real public thread (cited), as its author
 * pasted it. Each row failed before the reader learnt its class.
 */
const ROWS: Array<{ name: string; url: string; text: string; facts: Record<string, unknown> }> = [
  {
    name: 'class 1: a bcc traceback whose libbpf line says "kprobe" for a kretprobe attach; the errno from strerror',
    url: 'https://github.com/iovisor/bcc/issues/1921',
    text: [
      '# python3 ./test.py',
      'cannot attach kprobe, Device or resource busy',
      'Traceback (most recent call last):',
      '  File "./test.py", line 15, in <module>',
      '    b2.attach_kretprobe(event=execve_fnname, fn_name="trace2")',
      '  File "/usr/lib/python3.6/site-packages/bcc/__init__.py", line 598, in attach_kretprobe',
      '    raise Exception("Failed to attach BPF to kretprobe")',
      'Exception: Failed to attach BPF to kretprobe',
    ].join('\n'),
    facts: { 'probe.registration.result': 'EBUSY', 'probe.interface': 'bpf-link' },
  },
  {
    // No return probe anywhere in the excerpt: the thread is about this entry probe (as the corpus's
    // expert reads bcc#3438, bcc#4055, kepler#847), so its facts are the case's; bcc names no errno here.
    name: 'class 1/6: a failed attach of an entry kprobe, in a thread that shows no return probe, is the thread\'s probe',
    url: 'https://github.com/mYu4N/mytracer/issues/2',
    text: [
      'cannot attach kprobe, probe entry may not exist',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.6/site-packages/bcc/__init__.py", line 844, in attach_kprobe',
      '    (fn_name, event))',
      "Exception: Failed to attach BPF program b'kprobe__ipt_do_table' to kprobe b'ipt_do_table', it's not traceable (either non-existing, inlined, or marked as \"notrace\")",
    ].join('\n'),
    // bcc's src/cc/libbpf.c prints "probe entry may not exist" exactly when its kprobe_events write failed with ENOENT.
    facts: { 'probe.registration.result': 'ENOENT', 'probe.target': 'ipt_do_table' },
  },
  {
    name: 'class 2/4: bcc\'s own event names in kprobe_profile: r_…_bcc_PID is the return event, p_… its entry twin',
    url: 'https://github.com/iovisor/bcc/issues/2825',
    text: [
      '/sys/kernel/debug/tracing# cat kprobe_profile|grep 33922|sort -k 2 -n',
      '  r_fuse_file_write_iter_bcc_33922                    74381756               0',
      '  p_fuse_file_write_iter_bcc_33922                    74382094               0',
    ].join('\n'),
    facts: { 'counters.end.nmissed': 0, 'counters.end.hits': 74381756, 'ledger.entry_events': 74382094, 'counters.source': 'kprobe_profile' },
  },
  {
    name: 'class 1: a tool\'s report of a refused kprobe_events write, the definition quoted and the negative errno after it',
    url: 'https://github.com/aquasecurity/tracee/issues/639',
    text: ["$sudo ./tracee/dist/tracee-ebpf --trace pid=new", "failed to add kprobe 'p:kprobes/psecurity_bprm_check security_bprm_check': -17", 'failed to create kprobe event: -17'].join('\n'),
    facts: { 'probe.interface': 'tracefs', 'probe.target': 'security_bprm_check', 'probe.registration.result': 'EEXIST' },
  },
  {
    name: 'class 1 (ours): gobpf\'s "cannot write ... to kprobe_events", the strerror of the write at the end',
    url: 'our own example',
    text: '2024/01/02 10:00:00 error: cannot write "r:kretprobes/rtcp_v4_connect tcp_v4_connect" to kprobe_events: write /sys/kernel/debug/tracing/kprobe_events: no such file or directory',
    facts: { 'probe.interface': 'tracefs', 'probe.target': 'tcp_v4_connect', 'probe.registration.result': 'ENOENT' },
  },
];

describe('reader classes on real threads (issue 21)', () => {
  it.each(ROWS)('$name ($url)', ({ text, facts }) => {
    const c = extractWriteup(`# excerpt\n\n\`\`\`\n${text}\n\`\`\`\n`, 'thread.md', lex).case as unknown as Obj;
    for (const [p, v] of Object.entries(facts)) expect([p, at(c, p)]).toEqual([p, v]);
  });

  // class 1: a module's own log of a refused registration, quoted in prose (the title and body).
  it('reads "register_kretprobes failed, returned -7" in prose as E2BIG from a module (https://github.com/linuxdeepin/deepin-anything/issues/40)', () => {
    const c = extractWriteup('# register_kretprobes failed, returned -7\n\nxanmod kernel 5.15.8\nregister_kretprobes failed, returned -7\n', 'thread.md', lex).case as unknown as Obj;
    expect([at(c, 'probe.registration.result'), at(c, 'probe.interface')]).toEqual(['E2BIG', 'module']);
  });
});

// class 2: the log lines of samples/kprobes/kretprobe_example.c (torvalds/linux), as the many
// modules built on it print them: one registration, from "Planted" (nmissed starts at 0) to
// "Missed probing N instances", and a count printed before a later "Planted" is not the current one's.
describe('kretprobe_example.c log lines (https://github.com/torvalds/linux/blob/master/samples/kprobes/kretprobe_example.c)', () => {
  const read = (log: string) => extractWriteup(`# log\n\n\`\`\`\n${log}\n\`\`\`\n`, 'thread.md', lex).case as unknown as Obj;
  it('one registration from Planted to Missed: start 0, one epoch, the end count', () => {
    const c = read(['[ 5160.176391] Planted return probe at kernel_clone: 00000000353985b6', '[ 5201.468742] kernel_clone returned 3219 and took 1057551 ns to execute', '[ 5208.473090] kretprobe at 00000000353985b6 unregistered', '[ 5208.473100] Missed probing 3 instances of kernel_clone'].join('\n'));
    expect(['counters.start.nmissed', 'counters.end.nmissed', 'counters.start.epoch', 'counters.end.epoch'].map((p) => at(c, p))).toEqual([0, 3, 'reg-1', 'reg-1']);
  });
  it('a count of the registration that ended before the probe was planted again is not the current one', () => {
    const c = read(['[ 9386.574964] kretprobe at 0xffff000007cf01a8 unregistered', '[ 9386.580252] Missed probing 2 instances of ip6t_do_table', '[ 9405.547331] Planted return probe at ip6t_do_table: 0xffff000007cf01a8'].join('\n'));
    expect([at(c, 'counters.end.nmissed'), at(c, 'probe.registration.result'), at(c, 'probe.target')]).toEqual([undefined, 'ok', 'ip6t_do_table']);
  });
  // The exit message alone (a thread pastes the lines after rmmod): kretprobe_exit() prints it after
  // unregister_kretprobe(), so it is the whole registration's count, which register_kretprobe()
  // started at 0 (issue 20, silent 3). Before, the start stayed unknown and the rise was no delta.
  it('the exit message alone is one registration\'s total from 0, of a module', () => {
    const c = read('[ 9386.580252] kretprobe_example: Missed probing 2 instances of ip6t_do_table');
    expect(['counters.start.nmissed', 'counters.start.kprobe_nmissed', 'counters.end.nmissed', 'counters.start.epoch', 'counters.end.epoch', 'probe.interface', 'probe.target'].map((p) => at(c, p))).toEqual([0, 0, 2, 'reg-1', 'reg-1', 'module', 'ip6t_do_table']);
  });
  it('of two exit messages of one function (the module loaded twice), the last is the case\'s', () => {
    const c = read(['[ 100.000001] Missed probing 9 instances of vfs_read', '[ 200.000001] Missed probing 2 instances of vfs_read'].join('\n'));
    expect([at(c, 'counters.start.nmissed'), at(c, 'counters.end.nmissed')]).toEqual([0, 2]);
  });
  it('a count of another shape (a module\'s own nmissed field) says nothing of when it was read', () => {
    const c = read('[ 8300.000001] mydrv_probe: rp.nmissed=3');
    expect([at(c, 'counters.end.nmissed'), at(c, 'counters.start.nmissed'), at(c, 'counters.start.epoch')]).toEqual([3, undefined, undefined]);
  });
});

/**
 * Reader classes 3-8 of issue 21 on the prose and pastes of real threads (each cited), as posted.
 * `facts` maps a case field to the value the case must hold (undefined: the field stays unknown);
 * `claims` lists the claim kinds found, in order. Each row failed before its class was read.
 */
const THREADS: Array<{ name: string; url: string; text: string; facts: Record<string, unknown>; claims?: string[] }> = [
  {
    name: 'class 3: a sentence that the target is inlined into its caller is a coverage fact',
    url: 'https://github.com/iovisor/bcc/issues/1667',
    text: 'In the case of Android, `__vfs_read` is also being inlined into `vfs_read`, which results in no READs being registered by filetop.\n',
    facts: { 'probe.target': '__vfs_read', 'coverage.inlined_call_sites': 'some' },
  },
  {
    name: 'class 3: a kallsyms listing grepped for a function that holds only its .isra clone',
    url: 'https://github.com/sustainable-computing-io/kepler/issues/847',
    text: 'can we use this?\n```\n$ grep finish_task_switch /proc/kallsyms\n0000000000000000 t finish_task_switch.isra.0\n```\n',
    facts: { 'probe.target': 'finish_task_switch', 'coverage.clones': ['finish_task_switch.isra.0'] },
  },
  {
    name: 'class 5: uname -a without its node name is a release with its vendor suffix, the machine and the preemption model',
    url: 'https://github.com/chipsec/chipsec/issues/1154',
    text: '```\nLinux 5.10.23-1-MANJARO #1 SMP PREEMPT Thu Mar 11 18:47:18 UTC 2021 x86_64 GNU/Linux\n\nDISTRIB_ID=ManjaroLinux\nDISTRIB_RELEASE=21.0\n```\n',
    facts: { 'kernel.release': '5.10.23-1-MANJARO', 'kernel.arch': 'x86_64', 'kernel.preemption': true },
  },
  {
    name: 'class 5: uname -a quoted in the post\'s text, not a pasted block, is the release and the preemption model',
    url: 'https://lore.kernel.org/lkml/d93f04c70510061023i7a4f0148v7198982b409106d1@mail.gmail.com/',
    text: 'uname -a: Linux swarte-vlos 2.6.14-rc2 #7 PREEMPT Sun Oct 2 23:38:14\nSAST 2005 x86_64 AMD Athlon(tm) 64 Processor 3000+ AuthenticAMD\nGNU/Linux\n',
    facts: { 'kernel.release': '2.6.14-rc2', 'kernel.preemption': true },
  },
  {
    name: 'class 5: the same in inline code, with the vendor suffix kept',
    url: 'our own example',
    text: "I'm on `Linux host 5.15.0-91-generic #101-Ubuntu SMP x86_64 GNU/Linux`, the stock Jammy kernel.\n",
    facts: { 'kernel.release': '5.15.0-91-generic', 'kernel.preemption': false, 'kernel.arch': 'x86_64' },
  },
  {
    name: '(guard) a series followed by an issue number is not uname output',
    url: 'our own example',
    text: 'The fix landed in Linux 6.1 #1234 and in Linux 6.6 #87 is what we tested.\n',
    facts: { 'kernel.release': undefined },
  },
  {
    name: 'class 5: a series ("kernel 4.17") is neither a release nor a version',
    url: 'https://github.com/iovisor/bcc/issues/1921',
    text: 'This is on Fedora 28 with kernel 4.17 and bcc-0.6.0.\n',
    facts: { 'kernel.release': undefined, 'kernel.version': undefined },
  },
  {
    name: 'class 5: a bare point release ("kernel 5.15.8") is the upstream version, not a release',
    url: 'https://github.com/linuxdeepin/deepin-anything/issues/40',
    text: 'xanmod kernel 5.15.8\n',
    facts: { 'kernel.release': undefined, 'kernel.version': '5.15.8' },
  },
  {
    name: 'class 5: a range of releases ("Linux v4.12+") is not a release',
    url: 'https://github.com/elastic/beats/issues/20327',
    text: 'Originally this parameter was only available to kprobes set by the kernel. Starting in Linux v4.12+, it is exposed in the _kprobe_events_ file ([commit](https://github.com/kinvolk/linux/commit/3c713f1ba24255f0537f283ea6cab2efc435903a)).\n',
    facts: { 'kernel.release': undefined, 'kernel.version': undefined },
  },
  {
    name: 'class 6: another tool\'s pool setting, in a thread about a different interface, is not the case\'s',
    url: 'https://github.com/cilium/ebpf/pull/755',
    text: [
      'From the kernel side we have two separate APIs to create a kretprobe:',
      '',
      '1. via `tracefs`: supports setting `maxactive` and missed events are reported via',
      '[`/sys/kernel/debug/tracing/kprobe_profile`](https://docs.kernel.org/trace/kprobetrace.html#event-profiling).',
      '',
      'On the user space side, maxactive is exposed in [`bcc`](https://github.com/iovisor/bcc/pull/2224) and [`gobpf`](https://github.com/iovisor/gobpf/pull/39). `bpftrace` [hardcodes maxactive to `0`](https://github.com/iovisor/bpftrace/blob/dcc105da3ff024f981143a8408b6d3956bfd73b6/src/attached_probe.cpp#L901) and would like to print the number of missed events instead.',
      '',
    ].join('\n'),
    facts: { 'probe.maxactive.requested': undefined },
  },
  {
    name: 'class 7: "I have not noticed any missing events" is a no-misses claim',
    url: 'https://github.com/weaveworks/tcptracer-bpf/issues/24',
    text: 'Every time I start tcptracer-bpf, it misses 28 kretprobes on tcp_v4_connect. I have not noticed any missing "connect" events but this is surprising.\n',
    facts: {},
    claims: ['no-misses'],
  },
  {
    name: 'class 7: a condition hedges its own clause, not the assertion after it ("(and no nmissed events)")',
    url: 'https://github.com/bpftrace/bpftrace/issues/1035',
    text: 'If I increase `maxactive` manually (the last argument of `bpf_attach_kprobe`), kretprobe fired as expected (and no `nmissed` events).\n',
    facts: {},
    claims: ['no-misses'],
  },
  {
    name: 'class 2/8: struct kretprobe fields printed by a bpftrace script at unregister_kretprobe',
    url: 'https://github.com/bpftrace/bpftrace/issues/1035',
    text: "```\n% sudo ./src/bpftrace -e \\\n'kprobe:unregister_kretprobe {\n   $rp = (struct kretprobe*)arg0;\n   printf(\"nmissed=%d, maxactive=%d\\n\", $rp->nmissed, $rp->maxactive);\n}'\nAttaching 1 probe...\nnmissed=99, maxactive=2\n```\n",
    facts: { 'counters.end.nmissed': 99, 'probe.maxactive.effective': 2 },
  },
  {
    name: 'class 8: settings stated in prose (a Chinese thread): maxactive changed to 8, an entry handler that returns a negative value',
    url: 'https://github.com/bytedance/Elkeid/issues/339',
    text: '- 将 entry_handler 函数内容，修改为打印内核日志后返回负值，以标识完成一次 entry_handler 调用。\n- 将 my_kretprobe 结构体中的 maxactive 变量值，修改为 8，以便快速验证。\n',
    facts: { 'probe.maxactive.requested': 8, 'probe.entry_handler.present': true, 'probe.entry_handler.can_filter': true },
  },
  {
    name: 'class 8: a probe said to remain disabled after it was attached again is not armed',
    url: 'https://github.com/bytedance/Elkeid/issues/720',
    text: 'Manually simulated excessive DNS requests to observe whether the kretprobe had been unregistered. After waiting for a period, it was found that the kretprobe was reattached but remained in a disabled state.\n',
    facts: { 'probe.armed': false },
  },
  {
    name: 'class 4: ply\'s lost-event line is its buffer\'s loss (buffer_overruns), never the trace\'s LOST markers or nmissed',
    url: 'https://github.com/wkz/ply/issues/16',
    text: 'After a little bit ply quits with this message:\n\n```\nerror: lost 52 eventsply: deactivating\nERR:75\n```\n',
    facts: { 'ledger.buffer_overruns': 52, 'ledger.lost_events': undefined, 'counters.end.nmissed': undefined },
  },
  {
    name: 'class 4: an agent\'s ring-buffer lost counter, and its pairing of events by thread id',
    url: 'https://github.com/cilium/tetragon/pull/422',
    text: "At the moment we merge kprobe events by matching the 'thread_id', which can lead to wrong events in case we have LOST events like in following sequence of received events.\n\n```\n        Ring buffer:        received=1829323, lost=58838568, errors=0\n        Merged events:      pushed=1252435, ok=230527, errors=1021908\n```\n",
    facts: { 'ledger.buffer_overruns': 58838568, 'ledger.lost_events': undefined, 'ledger.identity': 'task-only', 'counters.end.nmissed': undefined },
  },
  {
    name: 'class 1: LKRG\'s log of a refused register_kretprobe() names the function and the errno',
    url: 'https://github.com/lkrg-org/lkrg/issues/90',
    text: "```\n[   16.654287] [p_lkrg] Loading LKRG...\n[   17.030168] [p_lkrg] [kretprobe] register_kretprobe() for <ovl_create_or_link> failed! [err=-2]\n[   17.721312] [p_lkrg] LKRG initialized successfully!\n[…]\n```\n",
    facts: { 'probe.interface': 'module', 'probe.target': 'ovl_create_or_link', 'probe.registration.result': 'ENOENT' },
  },
  {
    name: 'class 1/3: cilium/ebpf\'s "symbol not found" for a function the kernel only has as a clone',
    url: 'https://github.com/DataDog/datadog-agent/pull/50926',
    text: 'CWS attaches the kprobe by exact name, so attachment fails:\n\n```\nsymbol \'attach_recursive_mnt\' not found: invalid argument\n```\n',
    facts: { 'probe.target': 'attach_recursive_mnt', 'probe.registration.result': 'EINVAL' },
  },
  {
    name: 'class 2/4: a bpftrace script pasted without a fence name, its keyed counts per probe printed apart',
    url: 'https://github.com/bpftrace/bpftrace/issues/1811',
    text: '```\nkprobe:nfsd_dispatch {\n        @enters[0] = count();\n}\n\nkretprobe:nfsd_dispatch {\n        @enters[1] = count();\n}\n\ninterval:s:1 {\n        print(@enters);\n}\n```\nWhen I copy data to the nfs mountpoint, below is the output:\n```\n@enters[1]: 89\n@enters[0]: 408\n\n@enters[1]: 91\n@enters[0]: 410\n```\n',
    facts: { 'probe.interface': 'bpftrace', 'probe.target': 'nfsd_dispatch', 'probe.registration.result': 'ok', 'ledger.entry_events': 410, 'ledger.returns': 91 },
  },
  {
    name: 'class 8: the author says the probed function sleeps; the target named in a code span',
    url: 'https://github.com/iovisor/bcc/issues/1072',
    text: 'tools/tcpaccept.py installs a kretprobe on `inet_csk_accept()` but that function can sleep for a long time (waiting for an incoming connection).\n',
    facts: { 'probe.target': 'inet_csk_accept', 'concurrency.target_sleeps': true },
  },
  {
    name: 'class 1: strace of a refused write to kprobe_events, pasted in the prose: the errno, from tracefs, for the entry probe the thread is about',
    url: 'https://github.com/iovisor/bcc/issues/1634',
    text: 'Here\'s the strace dump from trying to run "trace" program. Any ideas?\n\n`openat(AT_FDCWD, "/sys/kernel/debug/tracing/kprobe_events", O_WRONLY|O_APPEND) = 5\ngetpid()                                = 20175\nwrite(5, "p:kprobes/p__/test_bcc_20175 ./test", 35) = -1 EINVAL (Invalid argument)\nwrite(1, "Failed to attach BPF to kprobe\\n", 31) = 31\nclose(3)                                = 0`\n',
    facts: { 'probe.interface': 'tracefs', 'probe.registration.result': 'EINVAL', 'probe.target': undefined },
  },
  {
    name: 'class 5: "Kernel info" with a release whose vendor suffix holds dotted numbers is a release, not a range',
    url: 'https://github.com/bytedance/Elkeid/issues/720',
    text: '**OS information (please complete the following information):**\n - Distribution: CentOS\n - Version 7.8\n - Kernel info 3.10.0-1062.9.1.el7.x86_64\n',
    facts: { 'kernel.release': '3.10.0-1062.9.1.el7.x86_64' },
  },
];

describe('reader classes 3-8 on real threads (issue 21)', () => {
  it.each(THREADS)('$name ($url)', ({ text, facts, claims }) => {
    const x = extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
    const c = x.case as unknown as Obj;
    for (const [p, v] of Object.entries(facts)) expect([p, at(c, p)]).toEqual([p, v]);
    if (claims) expect(x.claims.map((k) => k.kind)).toEqual(claims);
  });
});

// class 8: what a thread says could not be known stays unknown, with that reason beside it.
describe('stated unknowns (issue 21 class 8)', () => {
  it('an interface said to report no missed events leaves nmissed unknown, with why (https://github.com/cilium/ebpf/pull/755)', () => {
    const x = extractWriteup('# excerpt\n\n2. via `perf_event_open`: supports neither `maxactive` nor missed events.\n', 'thread.md', lex);
    expect(x.unknown.map((u) => [u.path, u.via])).toEqual([['counters.end.nmissed', 'interface-reports-no-misses']]);
    expect(at(x.case as unknown as Obj, 'counters.end.nmissed')).toBeUndefined();
  });
});

// class 1: a tracer's refusal quoted in a sentence or a thread's title, not pasted: the message is
// the tool's, so quotation marks and its own hedge ("may not exist") do not make it someone else's.
describe('attach refusals quoted in prose (issue 21 class 1)', () => {
  const read = (text: string) => extractWriteup(text, 'thread.md', lex);
  it('a title quoting bcc\'s "cannot attach kprobe, probe entry may not exist" is a registration that failed with ENOENT (https://github.com/sustainable-computing-io/kepler/issues/847)', () => {
    // bcc's src/cc/libbpf.c create_probe_event prints these words only for ENOENT, strerror() otherwise.
    const x = read("# kepler rpm starts with 'cannot attach kprobe, probe entry may not exist'\n\nNothing else.\n");
    expect(at(x.case as unknown as Obj, 'probe.registration.result')).toBe('ENOENT');
  });
  it('bcc\'s "Failed to attach BPF to kprobe" quoted in a sentence, in a thread that names no return probe (https://github.com/yadutaf/tracepkt/issues/4)', () => {
    const x = read('# t\n\nRun on ubunt18.04 and got error message "Failed to attach Failed to attach BPF to kprobe". Any idea to debug this?\n');
    expect(at(x.case as unknown as Obj, 'probe.registration.result')).toBe('error');
  });
  it('an entry kprobe\'s refusal is not the return probe\'s when the thread names a kretprobe', () => {
    const x = read('# t\n\nWe attach a kretprobe on vfs_read; the tool printed "Failed to attach BPF program b\'x\' to kprobe b\'vfs_write\'".\n');
    expect(at(x.case as unknown as Obj, 'probe.registration.result')).toBeUndefined();
    expect(x.facts.filter((f) => f.via === 'attach-failed-quoted')).toEqual([]);
  });
  it('the strerror text names the errno, and a named errno refines the bare failure without a disagreement', () => {
    const x = read('# t\n\nIt said "Failed to attach BPF to kprobe" and then "cannot attach kprobe, Device or resource busy".\n');
    expect(at(x.case as unknown as Obj, 'probe.registration.result')).toBe('EBUSY');
    expect(x.conflicts).toEqual([]);
  });
  it('a hedge of the author still hedges the quoted message', () => {
    const x = read('# t\n\nMaybe it printed "cannot attach kprobe, Invalid argument", I do not remember.\n');
    expect(at(x.case as unknown as Obj, 'probe.registration.result')).toBeUndefined();
  });
});

// class 3/5: kallsyms listings (https://github.com/iovisor/bcc/issues/1754): only the clone on one
// machine, the plain symbol on the other.
describe('kallsyms with only the clones of the target (issue 21 classes 3 and 5)', () => {
  const amd64 = '* amd64:\n\n```\n$ cat /proc/kallsyms | fgrep do_wakeup\nffffffffa2483420 t ttwu_do_wakeup\n```\n';
  const arm64 = '* arm64:\n\n```\n$ cat /proc/kallsyms | fgrep do_wakeup\nffff8692fe2a6ff8 t ttwu_do_wakeup.isra.20\n```\n';
  const read = (text: string) => extractWriteup(`# ISRA breaks kprobes\n\n${text}`, 'thread.md', lex);
  it('the plain name is absent: a probe registered by it fails with ENOENT', () => {
    const c = read(arm64).case as unknown as Obj;
    expect([at(c, 'probe.target'), at(c, 'coverage.clones'), at(c, 'probe.registration.result')]).toEqual(['ttwu_do_wakeup', ['ttwu_do_wakeup.isra.20'], 'ENOENT']);
  });
  it('the symbol listed: nothing about the registration', () => {
    const c = read(amd64).case as unknown as Obj;
    expect([at(c, 'probe.registration.result'), at(c, 'coverage.clones'), at(c, 'probe.target_module')]).toEqual([undefined, [], null]);
  });
  it('a failing and a working machine: the case is the failing one\'s, the other listing is not blended in', () => {
    const x = read(`${amd64}\n${arm64}`);
    const c = x.case as unknown as Obj;
    expect([at(c, 'probe.registration.result'), at(c, 'coverage.clones'), at(c, 'probe.target_module')]).toEqual(['ENOENT', ['ttwu_do_wakeup.isra.20'], undefined]);
    expect(x.conflicts).toEqual([]);
  });
  it('a listing cut by head shows no absence', () => {
    const c = read('```\n$ grep do_wakeup /proc/kallsyms | head -1\nffff8692fe2a6ff8 t ttwu_do_wakeup.isra.20\n```\n').case as unknown as Obj;
    expect(at(c, 'probe.registration.result')).toBeUndefined();
  });
});

// class 8: settings said in a pasted command line; class 7: plain assertions; class 8: other tracers' miss counts.
describe('load generators, "cannot be traced", SystemTap skipped probes (issue 21 classes 7 and 8)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  it('a shell loop that starts N processes in the background is N callers at once (https://github.com/weaveworks/tcptracer-bpf/issues/34)', () => {
    const x = read('2. In another shell, start a bunch of processes waiting on the `accept()` system call: `for i in $(seq 1 25) ; do (busybox nc -l -p $((8081 + i)) &) ; done`\n');
    expect(at(x.case as unknown as Obj, 'concurrency.workers')).toBe(25);
  });
  it('a loop that runs its body in turn (no &) is not concurrency', () => {
    const x = read('We ran `for i in $(seq 1 4); do ./client; done` once.\n');
    expect(at(x.case as unknown as Obj, 'concurrency.workers')).toBeUndefined();
  });
  it('"but can\'t trace schedule in" is a claim about the probe, judged like any other (https://github.com/bpftrace/bpftrace/issues/1035)', () => {
    const x = read("i use here for trace app schedule out and schedule in, but can't trace schedule in.\n");
    expect(x.claims.map((c) => c.kind)).toEqual(['other']);
  });
  it('"a probe on return - handler is just not called" is a claim about the probe (https://github.com/iovisor/bcc/issues/1016)', () => {
    const x = read('- almost always we have the problem with a probe on return - handler is just not called.\n');
    expect(x.claims.map((c) => c.kind)).toEqual(['other']);
  });
  it.each([
    ['Returns went missing in 3 of 20 runs.', ['other']],
    ['In 3 out of 20 test runs the kretprobe did not fire.', ['other']],
    ['The return handler never runs while the function blocks.', ['other']],
    // Not a claim: a count with nothing missing, none at all, or hedged.
    ['We ran the test 20 times.', []],
    ['In 0 of 20 runs anything went missing.', []],
    ['Maybe the return handler never runs.', []],
  ])('a count of runs with missing returns, or a handler that never runs, is a claim: %s', (text, kinds) => {
    expect(read(`${text}\n`).claims.map((c) => c.kind)).toEqual(kinds);
  });
  it('a question about tracing a return is not a claim', () => {
    expect(read("Why can't I trace the return of schedule?\n").claims).toEqual([]);
  });
  it('SystemTap\'s skipped probes are its own count, never the kretprobe\'s nmissed (http://sourceware.org/systemtap/wiki/TipSkippedProbes)', () => {
    const x = read('Systemtap probe handlers may be skipped sometimes.\n\n```\n  WARNING: Number of errors: 0, skipped probes: 100\n```\n\nThe script skipped 100 probes, and 100 probes were skipped due to reentrancy.\n');
    const c = x.case as unknown as Obj;
    expect([at(c, 'counters.end.nmissed'), at(c, 'counters.end.kprobe_nmissed'), at(c, 'ledger.lost_events')]).toEqual([undefined, undefined, undefined]);
    expect(x.facts.filter((f) => f.path.startsWith('counters.'))).toEqual([]);
  });
});

// class 8: a cause given only by reference to another thread is evidence that lives elsewhere.
describe('causes by reference to another thread (issue 21 class 8)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  it('"Is this because of #835?" points to evidence in another thread, asked, and states no fact (https://github.com/bpftrace/bpftrace/issues/1035)', () => {
    const x = read('Is this because of #835? I observed many `nmissed` events.\n');
    expect(x.elsewhere.map((e) => [e.ref, e.asked])).toEqual([['#835', true]]);
    expect(x.facts).toEqual([]);
  });
  it('a stated cause by reference, to a repository\'s issue or its URL', () => {
    const x = read('The hang has the same root cause as iovisor/bcc#1072.\n\nClosing as duplicate of https://github.com/iovisor/bcc/issues/1072 now.\n');
    expect(x.elsewhere.map((e) => [e.ref, e.asked])).toEqual([['iovisor/bcc#1072', false], ['https://github.com/iovisor/bcc/issues/1072', false]]);
  });
  it('a reference to something in this thread is not elsewhere', () => {
    expect(read('We see 3 misses, see the log below.\n').elsewhere).toEqual([]);
  });
});

// class 2: struct kretprobe fields read as the probe is unregistered (a bpftrace probe on
// unregister_kretprobe) are that registration's whole count, from 0; bpftrace output after
// "Attaching N probes..." shows its probes armed.
describe('a kretprobe\'s fields read at unregistration, bpftrace armed (issue 21 class 2; https://github.com/bpftrace/bpftrace/issues/1035)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
  it('nmissed at unregister_kretprobe: one registration, starting at 0', () => {
    const c = read("```\n% sudo ./src/bpftrace -e \\\n'kprobe:unregister_kretprobe {\n   $rp = (struct kretprobe*)arg0;\n   printf(\"nmissed=%d, maxactive=%d\\n\", $rp->nmissed, $rp->maxactive);\n}'\nAttaching 1 probe...\nnmissed=99, maxactive=2\n```\n");
    expect(['counters.start.nmissed', 'counters.end.nmissed', 'counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch', 'counters.source', 'probe.maxactive.effective'].map((p) => at(c, p))).toEqual([0, 99, 'reg-1', 'reg-1', 'reg-1', 'module-field', 2]);
  });
  it('"Attaching 2 probes..." followed by a probe\'s output: registered and armed', () => {
    const c = read('```\nbpftrace -e \'kprobe:schedule,kretprobe:schedule /comm == "a.out"/{printf("%s\\n", probe)}\'\nAttaching 2 probes...\nkprobe:schedule\n```\n');
    expect([at(c, 'probe.registration.result'), at(c, 'probe.armed')]).toEqual(['ok', true]);
  });
  it('"Attaching 2 probes..." with nothing after it says nothing of arming', () => {
    const c = read("```\nbpftrace -e 'kretprobe:schedule { @r = count(); }'\nAttaching 1 probe...\n```\n");
    expect([at(c, 'probe.registration.result'), at(c, 'probe.armed')]).toEqual(['ok', undefined]);
  });
});

// class 3: a clone said in prose; class 2/6: a patch to a kretprobe's C handlers is a module's probe.
describe('clones in prose, handlers in a patch (issue 21 classes 3 and 6)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
  it('"renames X to X.isra.0" names the clone of the target (https://github.com/DataDog/datadog-agent/pull/50926)', () => {
    const c = read("On Talos Linux 1.12.5 (kernel 6.18.15), GCC's IPA-SRA pass renames `attach_recursive_mnt` to `attach_recursive_mnt.isra.0`. The kernel exports only the suffixed name.\n");
    expect([at(c, 'probe.target'), at(c, 'coverage.clones')]).toEqual(['attach_recursive_mnt', ['attach_recursive_mnt.isra.0']]);
  });
  it('a rename to another function is no clone', () => {
    expect(at(read('The patch renames `foo_bar` to `foo_baz.isra.0` by mistake.\n'), 'coverage.clones')).toBeUndefined();
  });
  it('a diff of a kretprobe handler in C is a module\'s probe (https://github.com/lkrg-org/lkrg/issues/385)', () => {
    const c = read('```diff\n+++ b/src/modules/exploit_detection/syscalls/p_do_exit/p_do_exit.c\n@@ -40,6 +40,7 @@ int p_do_exit_entry(struct kretprobe_instance *p_ri, struct pt_regs *p_regs) {\n \n    if (ed_task_del_current()) {\n+      p_debug_log(P_LOG_ISSUE, "Can\'t remove pid %u, name %s", task_pid_nr(current), current->comm);\n    }\n```\n');
    expect(at(c, 'probe.interface')).toBe('module');
  });
});

// class 5: a failing and a working kernel in one thread: two subjects, never a blend.
describe('a failing and a working kernel (issue 21 class 5)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  it('the kernel said to work is another subject: only the failing one is the case\'s, no disagreement', () => {
    const x = read('The kretprobe works fine on kernel 5.4.0-42-generic, but on kernel 5.10.0-8-amd64 returns go missing.\n');
    expect([at(x.case as unknown as Obj, 'kernel.release'), x.conflicts]).toEqual(['5.10.0-8-amd64', []]);
  });
  it('a release followed by "is unaffected" is the working machine\'s', () => {
    const x = read('Our other host runs 5.15.0-91-generic is unaffected.\n');
    expect(at(x.case as unknown as Obj, 'kernel.release')).toBeUndefined();
  });
  it('a kernel named without a word of working is the case\'s', () => {
    expect(at(read('We run kernel 5.10.0-8-amd64 and returns go missing.\n').case as unknown as Obj, 'kernel.release')).toBe('5.10.0-8-amd64');
  });
});

// class 3: sentences that date a coverage change become coverage facts with their release.
describe('removed in a release, no longer called on this path (issue 21 class 3)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
  it.each([
    ['`ext4_file_write` was removed in 4.7, so the probe never registers.', 'coverage.removed_in', 'ext4_file_write', '4.7'],
    ['Since 5.10 `__vfs_write()` is no longer called on this path.', 'coverage.not_called_since', '__vfs_write', '5.10'],
    ['vfs_write no longer calls __vfs_write since 5.10.', 'coverage.not_called_since', '__vfs_write', '5.10'],
  ])('%s', (text, field, target, release) => {
    const c = read(`${text}\n`);
    expect([at(c, 'probe.target'), at(c, field)]).toEqual([target, release]);
  });
  it('a condition states no release', () => {
    expect(at(read('If it was removed in 5.8 we would see ENOENT.\n'), 'coverage.removed_in')).toBeUndefined();
  });
});

// class 1: a refused registration retold in prose, with its errno as a number or a name.
describe('a refused registration retold in prose (issue 21 class 1)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
  it.each([
    ['On 5.4 register_kretprobe() returns -22 for that symbol.', 'EINVAL'],
    ['register_kretprobe failed with -ENOENT on the new kernel.', 'ENOENT'],
  ])('%s', (text, errno) => {
    const c = read(`${text}\n`);
    expect([at(c, 'probe.registration.result'), at(c, 'probe.interface')]).toEqual([errno, 'module']);
  });
  it('register_kprobe\'s failure is the entry probe\'s, not the kretprobe\'s the thread names', () => {
    expect(at(read('register_kprobe failed with -EINVAL, while the kretprobe loaded.\n'), 'probe.registration.result')).toBeUndefined();
  });
});

// class 2: a session that writes the return event and then reads kprobe_profile once.
describe('one profile read after the write that created the event (issue 21 class 2)', () => {
  const block = (lines: string[]) => extractWriteup(`# excerpt\n\n\`\`\`\n${lines.join('\n')}\n\`\`\`\n`, 'thread.md', lex).case as unknown as Obj;
  const write = "# echo 'r:rp/fs vfs_fsync_range' >> /sys/kernel/tracing/kprobe_events";
  const read = ['# cat /sys/kernel/tracing/kprobe_profile', '  fs                                                 812              37'];
  it('starts at 0 in one registration, which the row proves', () => {
    const c = block([write, '# ./run', ...read]);
    expect(['counters.start.nmissed', 'counters.start.hits', 'counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch', 'probe.registration.result', 'counters.event', 'probe.event'].map((p) => at(c, p))).toEqual([0, 0, 'reg-1', 'reg-1', 'reg-1', 'ok', 'fs', 'rp/fs']);
  });
  it('a profile read before the write, or a row of another event, says nothing of the start', () => {
    expect(at(block([...read, write]), 'counters.start.nmissed')).toBeUndefined();
    expect(at(block([write, '# cat /sys/kernel/tracing/kprobe_profile', '  other                                              812              37']), 'counters.start.nmissed')).toBeUndefined();
  });
  it('a refused write creates nothing', () => {
    expect(at(block([write, 'sh: write error: File exists', ...read]), 'counters.start.nmissed')).toBeUndefined();
  });
  // weaveworks/tcptracer-bpf issue 24: the tool made the event (gobpf's rSYM name); the thread
  // writes none and reads the profile once. Only a new registration resets a row, so the read is
  // the end of the one registration that made it, started at 0 (issue 20, silent 3).
  it('a tool\'s event read once, with no write in the thread: the same, without the definition', () => {
    const c = block(['$ cat /sys/kernel/debug/tracing/kprobe_profile', '  rtcp_v4_connect                                         1650              28']);
    expect(['counters.start.nmissed', 'counters.start.hits', 'counters.end.nmissed', 'counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch', 'probe.registration.result', 'counters.event', 'probe.event'].map((p) => at(c, p))).toEqual([0, 0, 28, 'reg-1', 'reg-1', 'reg-1', 'ok', 'rtcp_v4_connect', undefined]);
  });
  it('a write after the read may start another registration: the start stays unknown', () => {
    expect(at(block(['# cat /sys/kernel/tracing/kprobe_profile', '  rtcp_v4_connect                                         1650              28', "# echo 'r:rtcp_v4_connect tcp_v4_connect' >> /sys/kernel/tracing/kprobe_events"]), 'counters.start.nmissed')).toBeUndefined();
  });
});

describe('a quoted refusal the author says did not appear (issue 21 class 1)', () => {
  it.each([
    'This time there was no "Failed to attach BPF to kprobe" message.',
    'We never got "cannot attach kprobe, Invalid argument" again.',
  ])('%s', (text) => {
    expect(at(extractWriteup(`# t\n\n${text}\n`, 'thread.md', lex).case as unknown as Obj, 'probe.registration.result')).toBeUndefined();
  });
});

// class 6, whose fact: what a sentence states of a function it names is that function's.
describe('statements about a function bound to it (issue 21 class 6)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  it('a coverage statement about another function than the probe\'s is not the case\'s, nor a disagreement', () => {
    const x = read('A kretprobe on vfs_write misses calls.\n\nOn this kernel vfs_write is inlined into ksys_write.\n\nSince 5.10 do_sys_open is no longer called on the open path.\n');
    const c = x.case as unknown as Obj;
    expect([at(c, 'probe.target'), at(c, 'coverage.inlined_call_sites'), at(c, 'coverage.not_called_since')]).toEqual(['vfs_write', 'some', undefined]);
    expect(x.conflicts).toEqual([]);
  });
  it('with no other target, the function the sentence names is the probe\'s', () => {
    const c = read('Since 5.10 do_sys_open is no longer called on the open path.\n').case as unknown as Obj;
    expect([at(c, 'probe.target'), at(c, 'coverage.not_called_since')]).toEqual(['do_sys_open', '5.10']);
  });
});

describe('sentence readings that took too much (issue 21 classes 3 and 4)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
  it.each([
    // The sentence's full stop is not part of the symbol; a clone's suffix is.
    ['A kretprobe on tcp_sendmsg.', 'probe.target', 'tcp_sendmsg'],
    ['A kretprobe on do_sys_open.isra.0 works.', 'probe.target', 'do_sys_open.isra.0'],
    // Entries said to lack their exit are the unpaired ones, not every entry.
    ['We see lots of unpaired enter events: 120 entries without a matching exit.', 'ledger.entries', undefined],
    ['We saw 40 entries and 38 returns.', 'ledger.entries', 40],
    ['The agent reported 37 lost events in its metrics.', 'ledger.lost_events', 37],
  ])('%s', (text, field, want) => {
    expect(at(read(`${text}\n`), field)).toBe(want);
  });
});

// class 8, what could not be known: a file the author's tool could not read leaves the facts one
// reads there unknown, with the tool's reason, rather than merely absent.
describe('a file that could not be read (issue 21 class 8)', () => {
  const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  const PROFILE = '```\n$ cat /sys/kernel/debug/tracing/kprobe_profile\ncat: /sys/kernel/debug/tracing/kprobe_profile: Permission denied\n```\n';
  it('the miss and hit columns are unknown with the reason, cited at the tool\'s line', () => {
    const x = read(`A kretprobe on vfs_read loses returns.\n\n${PROFILE}`);
    expect(x.unknown.map((u) => [u.path, u.reason, u.line, u.col])).toEqual([
      ['counters.end.nmissed', '/sys/kernel/debug/tracing/kprobe_profile could not be read: Permission denied', 7, 6],
      ['counters.end.hits', '/sys/kernel/debug/tracing/kprobe_profile could not be read: Permission denied', 7, 6],
    ]);
    expect(at(x.case as unknown as Obj, 'counters.end.nmissed')).toBeUndefined();
  });
  it('read again later (with the rights), the values stand and nothing is stated unknown', () => {
    const x = read(`A kretprobe on vfs_read loses returns.\n\n${PROFILE}\n\`\`\`\n$ sudo cat /sys/kernel/debug/tracing/kprobe_profile\n  r_vfs_read_0                                      4120               3\n\`\`\`\n`);
    expect(x.unknown).toEqual([]);
    expect(at(x.case as unknown as Obj, 'counters.end.nmissed')).toBe(3);
  });
  it('a listing of kprobes/list that is not there leaves armed unknown; a file of no reader leaves nothing', () => {
    expect(read("```\n# cat /sys/kernel/debug/kprobes/list\ncat: /sys/kernel/debug/kprobes/list: No such file or directory\n```\n").unknown.map((u) => u.path)).toEqual(['probe.armed']);
    expect(read("```\n$ cat /etc/shadow\ncat: /etc/shadow: Permission denied\n```\n").unknown).toEqual([]);
  });
  // Said in prose: the statement's own words ("could not") are no hedge of it (ours; before, "could"
  // in "could not read" hedged the statement away and the counter was merely absent).
  it.each([
    ['We could not read nmissed because bpftrace does not expose it.', ['counters.end.nmissed']],
    ['I couldn\'t read the miss counter on that box.', ['counters.end.nmissed']],
    ['Maybe we could not read nmissed.', []],
    ['If you cannot read nmissed, count the returns instead.', []],
  ])('%s', (text, want) => {
    expect(read(`${text}\n`).unknown.map((u) => u.path)).toEqual(want);
  });
});

// class 6: a thread that pastes return probes on two functions (a tracefs probe on one, a bpftrace
// probe on the other, as a reply "I see the same on vfs_write with bpftrace" does). Constructed
// from the formats the readers take; each probe's own facts stay with it.
describe('return probes on two functions in one thread (issue 21 class 6)', () => {
  const tracefs = 'First I used tracefs:\n\n```\n# echo \'r:myret vfs_read\' >> /sys/kernel/tracing/kprobe_events\n# cat /sys/kernel/tracing/kprobe_profile\n  myret                                                   1000               3\n```\n';
  const bpftrace = 'On another box, bpftrace on vfs_write:\n\n```\n# bpftrace -e \'kretprobe:vfs_write { @r = count(); }\'\nAttaching 1 probe...\n^C\n\n@r: 412\n```\n';
  const read = (text: string) => extractWriteup(`# Missing returns\n\nKernel 6.1.0-18-amd64.\n\n${text}`, 'thread.md', lex);
  it('the case is the first probe\'s; the other probe\'s facts are listed as its own, never set, never a disagreement', () => {
    const x = read(`${tracefs}\n${bpftrace}`);
    const c = x.case as unknown as Obj;
    expect([at(c, 'probe.target'), at(c, 'probe.interface'), at(c, 'counters.end.nmissed')]).toEqual(['vfs_read', 'tracefs', 3]);
    // bpftrace's attach kind and "Attaching 1 probe" describe the vfs_write probe, not this one.
    expect([at(c, 'probe.bpf_attach'), at(c, 'probe.armed')]).toEqual([undefined, undefined]);
    expect(x.conflicts.map((k) => k.path)).toEqual([]);
    const other = x.facts.filter((f) => f.otherProbe !== undefined);
    expect(other.map((f) => [f.path, f.value, f.otherProbe])).toEqual(expect.arrayContaining([['probe.target', 'vfs_write', 'vfs_write'], ['probe.interface', 'bpftrace', 'vfs_write']]));
  });
  it('one probe alone keeps every fact of its artifacts', () => {
    const c = read(bpftrace).case as unknown as Obj;
    expect([at(c, 'probe.target'), at(c, 'probe.interface'), at(c, 'probe.bpf_attach'), at(c, 'probe.armed')]).toEqual(['vfs_write', 'bpftrace', 'perf-kretprobe', true]);
  });
  it('a clone of the same function is the same probe', () => {
    const x = read(`${tracefs}\n${bpftrace.replaceAll('vfs_write', 'vfs_read.isra.0')}`);
    expect(x.facts.filter((f) => f.otherProbe !== undefined)).toEqual([]);
  });
});
