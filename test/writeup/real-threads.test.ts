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
    facts: { 'probe.registration.result': 'error', 'probe.target': 'ipt_do_table' },
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
});
