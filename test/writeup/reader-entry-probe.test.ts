import { describe, expect, it } from 'vitest';
import { evaluateCase, type Case } from '../../src/index.js';
import { at, excerptReader, type Obj } from './excerpt.js';

const { extract, read, rules } = excerptReader();

// Verbatim excerpts of the real threads (cases/writeups/real/023, 027): each row failed before the
// entry-probe readers (probe.kind was no case field, and no reader wrote it).
const BCC_4198 = [
  'Our team develop  one tool based on bcc to detect  dns issue.   we register  multi KProbes  event in network stack to analysis network packets, such as:',
  '```',
  'kprobe__ip_rcv',
  'kprobe__tcp_rcv_established',
  'kprobe__tcp_rcv_state_process',
  'kprobe__ipt_do_table',
  'kprobe__ip_vs_out',
  '…',
  '```',
  'We compare the results captured by bcc tools with the packets captured by tcpdump and found that KProbes will lose some events and cause defects in our developed programs.',
  '',
].join('\n');
const PLY_16 = [
  '```sudo ply \'kprobe:do_sys_open / !strcmp(comm, "find") / { printf("%v(%v): %s\\n", comm, pid, str(arg1)); }\'```',
  '',
  'In another shell run a find command like ```find / -type f -print```',
  '',
  'After a little bit ply quits with this message:',
  '',
  '```',
  'error: lost 52 eventsply: deactivating',
  'ERR:75',
  '```',
  '',
].join('\n');

describe('an entry probe read from a write-up (issue 21)', () => {
  it.each([
    {
      name: 'bcc#4198: functions named kprobe__SYM (bcc attaches them as entry kprobes), losses against tcpdump',
      url: 'https://github.com/iovisor/bcc/issues/4198',
      text: BCC_4198,
      // Five probes share the kind, not a target: no target is blended from them.
      facts: { 'probe.kind': 'entry', 'probe.target': undefined, 'ledger.no_probe_evidence': 1, 'probe.registration.result': 'ok', 'probe.armed': true },
    },
    {
      name: 'ply#16: a ply kprobe: one-liner, its buffer losing 52 events after "ply: deactivating"',
      url: 'https://github.com/wkz/ply/issues/16',
      text: PLY_16,
      facts: { 'probe.kind': 'entry', 'probe.target': 'do_sys_open', 'ledger.buffer_overruns': 52, 'probe.registration.result': 'ok', 'probe.armed': true },
    },
    {
      name: 'a tracefs p: definition read back from kprobe_events (ours)',
      url: 'our own example',
      text: '```\n# cat /sys/kernel/tracing/kprobe_events\np:kprobes/myprobe do_sys_openat2\n```\n',
      facts: { 'probe.kind': 'entry', 'probe.target': 'do_sys_openat2', 'probe.interface': 'tracefs' },
    },
    {
      name: 'a bcc program that attaches a kprobe by call (ours)',
      url: 'our own example',
      text: '```python\nb = BPF(text=prog)\nb.attach_kprobe(event="vfs_fsync", fn_name="trace_entry")\n```\n',
      facts: { 'probe.kind': 'entry', 'probe.target': 'vfs_fsync' },
    },
    {
      name: '"a kprobe on SYM" in prose (ours)',
      url: 'our own example',
      text: 'I put a kprobe on tcp_v4_rcv and it misses packets under load.\n',
      facts: { 'probe.kind': 'entry' },
    },
  ])('$name', ({ text, facts }) => {
    const c = read(text);
    for (const [k, v] of Object.entries(facts)) expect([k, at(c, k)]).toEqual([k, v]);
  });

  it.each([
    {
      name: 'a tracefs r: definition: the return probe the format describes, no kind written',
      text: '```\n# cat /sys/kernel/tracing/kprobe_events\nr2:kprobes/myretprobe pipe_read\n```\n',
    },
    {
      name: 'a bcc program with an entry and a return probe: the entry probe is not the case\'s',
      text: '```python\nb.attach_kprobe(event="tcp_v4_connect", fn_name="trace_connect_entry")\nb.attach_kretprobe(event="tcp_v4_connect", fn_name="trace_connect_return")\n```\n',
    },
    {
      name: 'kprobe__ and kretprobe__ functions in one program',
      text: '```\nint kprobe__tcp_v4_connect(struct pt_regs *ctx) { return 0; }\nint kretprobe__tcp_v4_connect(struct pt_regs *ctx) { return 0; }\n```\n',
    },
    {
      name: 'a bpftrace kprobe: beside a kretprobe named in the prose: the thread is about the return probe',
      text: 'The kretprobe on vfs_read loses returns; kprobe:vfs_read sees every call.\n',
    },
    {
      name: '"kprobes" alone names the family, not an entry probe',
      text: 'This program attaches kprobes to some kernel functions and records the log.\n',
    },
    {
      name: 'libbpf\'s "cannot attach kprobe" says kprobe of both kinds',
      text: 'kepler starts with \'cannot attach kprobe, probe entry may not exist\'\n',
    },
  ])('no entry kind: $name', ({ text }) => {
    expect(at(read(text), 'probe.kind')).toBeUndefined();
  });

  it('bcc#4198 is decided observer-gap by interpret/entry-probe-calls-unrecorded, with no pool to miss', async () => {
    const v = await evaluateCase(extract(BCC_4198).case as Case, rules());
    expect(v.verdict).toBe('observer-gap');
    expect(v.possible).toEqual(['observer-gap']);
    expect(v.findings.map((f) => f.rule)).toContain('interpret/entry-probe-calls-unrecorded');
    expect(v.findings.map((f) => f.rule)).not.toContain('counters/nmissed-rose');
  });

  it('ply#16 is decided observer-gap: its one-liner records only the calls of the command the test runs, so the 52 lost were the test\'s', async () => {
    // https://github.com/wkz/ply/issues/16: the predicate keeps find's calls, and the prose runs find.
    const x = extract(PLY_16);
    expect(at(x.case as unknown as Obj, 'ledger.records_only_eligible')).toBe(true);
    const v = await evaluateCase(x.case as Case, rules());
    expect(v.verdict).toBe('observer-gap');
    expect(v.findings.map((f) => f.rule)).toContain('interpret/entry-probe-calls-unrecorded');
  });

  it('without the workload it filters to, ply#16 keeps only whether every eligible call was recorded', async () => {
    // 52 records lost, but how many opens find made and how many ply recorded is not said, and
    // nothing says the test is find's: a world where every eligible call has its record (the
    // losses other calls') stays consistent.
    const v = await evaluateCase(extract(PLY_16.replace('In another shell run a find command like ```find / -type f -print```', '')).case as Case, rules());
    expect(v.possible).toEqual(['observer-gap', 'insufficient-evidence', 'fully-observed']);
    expect(v.decides).toContain('ledger.eligible');
  });
});

describe('a probe whose records are the workload\'s calls only (issue 21, whose records)', () => {
  const SCRIPT = (spec: string, pred: string) => `\`\`\`sudo bpftrace -e '${spec} / ${pred} / { printf("%s\\n", str(arg1)); }'\`\`\`\n\n`;
  it.each([
    {
      name: 'ply#16 (verbatim): a one-probe one-liner kept to find, and the test runs find',
      url: 'https://github.com/wkz/ply/issues/16',
      text: PLY_16,
      facts: { 'ledger.records_only_eligible': true },
    },
    {
      name: 'ours: comm == "cat" and the test runs cat',
      text: `${SCRIPT('kprobe:vfs_read', 'comm == "cat"')}Then I ran the cat command on a 1 GB file.\n`,
      facts: { 'ledger.records_only_eligible': true, 'probe.target': 'vfs_read' },
    },
    {
      name: 'ours: the predicate keeps another command than the one the test runs',
      text: `${SCRIPT('kprobe:vfs_read', 'comm == "cat"')}Then I ran the dd command on a 1 GB file.\n`,
      facts: { 'ledger.records_only_eligible': undefined },
    },
    {
      name: 'ours: no prose says which command the test runs',
      text: `${SCRIPT('kprobe:vfs_read', 'comm == "cat"')}`,
      facts: { 'ledger.records_only_eligible': undefined },
    },
    {
      name: 'ours: a second probe in the script writes records of any caller',
      text: '```sudo bpftrace -e \'kprobe:vfs_read / comm == "cat" / { printf("r\\n"); } kprobe:vfs_write { printf("w\\n"); }\'```\n\nThen I ran the cat command.\n',
      facts: { 'ledger.records_only_eligible': undefined },
    },
    {
      name: 'ours: a predicate on another probe than the case\'s target is that probe\'s',
      text: `\`\`\`\n# cat /sys/kernel/tracing/kprobe_events\nr:kprobes/myret vfs_read\n\`\`\`\n\n${SCRIPT('kprobe:vfs_write', 'comm == "cat"')}Then I ran the cat command.\n`,
      facts: { 'ledger.records_only_eligible': undefined, 'probe.target': 'vfs_read' },
    },
  ])('$name', ({ text, facts }) => {
    const c = read(text);
    for (const [p, v] of Object.entries(facts)) expect(at(c, p), p).toEqual(v);
  });
});

// Our own example in the shape of the kernel's error_log (trace_probe.h error table): a thread
// that pastes a refused entry-probe definition next to a working return probe. The refusal is the
// entry probe's; before, its unparseable definition (`p5:` gives a maxactive to an entry probe)
// named no probe, and its reason was merged into the return probe, which had registered.
describe('a refused definition quoted by error_log is its own probe (issue 21, whose fact)', () => {
  const text = [
    '```',
    "# bpftrace -e 'kretprobe:vfs_read { @[retval > 0] = count(); }'",
    'Attaching 1 probe...',
    '```',
    '',
    '```',
    '# cat /sys/kernel/tracing/error_log',
    '[  512.123456] trace_kprobe: error: Maxactive is not for kprobe',
    '  Command: p5:myprobe vfs_read',
    '           ^',
    '```',
    '',
  ].join('\n');
  it('leaves the return probe registered, without the entry probe\'s reason', () => {
    const c = read(text);
    expect(at(c, 'probe.target')).toBe('vfs_read');
    expect(at(c, 'probe.registration.result')).toBe('ok');
    expect(at(c, 'probe.registration.reason')).toBeUndefined();
  });
});
