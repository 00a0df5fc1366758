import { describe, expect, it } from 'vitest';
import { evaluateCase, type Case } from '../../src/index.js';
import { at, excerptReader, type Obj } from './excerpt.js';

const { extract, read, rules } = excerptReader();

// The verbatim comment of jcanseco on iovisor/bcc#1667 (cases/writeups/real/013): filetop, a bcc tool
// whose probes are entry kprobes, shows nothing because its targets run as inline copies.
const BCC_1667 = [
  'The problem is very similar to the original post. In the case of Android, `__vfs_read` is also being inlined into `vfs_read`, which results in no READs being registered by filetop. This is in addition to `__vfs_write` being inlined into `vfs_write`. As a result, filetop registers neither READs nor WRITEs, leading to an empty output table. I confirmed this by disassembling vmlinux just like Yonghong did.',
  '',
].join('\n');

// Reader classes of issue 21 the corpus still missed: each row on the verbatim excerpt of a real
// thread (cited) failed before its reader; the rows marked (guard) are look-alikes that must yield nothing.
describe('an observer that registered and saw none of the calls (issue 21)', () => {
  it.each([
    {
      name: 'an inlined target "which results in no READs being registered": the calls happened, the probe has no record of them',
      url: 'https://github.com/iovisor/bcc/issues/1667',
      text: BCC_1667,
      facts: { 'ledger.no_probe_evidence': 1, 'coverage.inlined_call_sites': 'some', 'probe.target': '__vfs_read' },
    },
    {
      name: '(guard) an inlined target whose consequence is not a missing record',
      url: 'our own example',
      text: '`pipe_read` is inlined into `vfs_read`, which results in a smaller stack frame.\n',
      facts: { 'ledger.no_probe_evidence': undefined, 'coverage.inlined_call_sites': 'some' },
    },
    {
      name: '(guard) no records without a cause in the observer: nothing happened to record',
      url: 'our own example',
      text: 'The test was misconfigured, which results in no READs being registered by the workload.\n',
      facts: { 'ledger.no_probe_evidence': undefined },
    },
    {
      name: 'a tracer that printed its empty output table got past attaching: registered and armed',
      url: 'https://github.com/iovisor/bcc/issues/1667',
      text: BCC_1667,
      facts: { 'probe.registration.result': 'ok', 'probe.armed': true },
    },
    {
      name: '(guard) an empty table that is not the output, and an output table said not to be empty',
      url: 'our own example',
      text: 'The BPF hash table stayed empty. The output table was not empty either, it just lacked writes.\n',
      facts: { 'probe.registration.result': undefined, 'probe.armed': undefined },
    },
    {
      name: '(guard) an empty output table only as a possibility',
      url: 'our own example',
      text: 'If the attach fails, filetop might print an empty output table.\n',
      facts: { 'probe.registration.result': undefined, 'probe.armed': undefined },
    },
    {
      name: 'a bcc tool whose probes are all entry kprobes (filetop) named as the observer: the case is about an entry probe',
      url: 'https://github.com/iovisor/bcc/issues/1667',
      text: BCC_1667,
      facts: { 'probe.kind': 'entry' },
    },
    {
      name: '(guard) a bcc tool with return probes (execsnoop) states no kind',
      url: 'our own example',
      text: 'execsnoop misses some of the exec() calls when many run in parallel.\n',
      facts: { 'probe.kind': undefined },
    },
    {
      name: '(guard) filetop beside a named return probe: the thread is about the return probe, filetop\'s kind stays apart',
      url: 'our own example',
      text: 'filetop shows the writes, but my kretprobe on vfs_write misses some of them.\n',
      facts: { 'probe.kind': undefined },
    },
  ])('$name ($url)', ({ text, facts }) => {
    const c = read(text);
    for (const [p, v] of Object.entries(facts)) expect([p, at(c, p)]).toEqual([p, v]);
  });

  it('bcc#1667 read whole: an entry probe, registered and armed, that saw none of the calls is an observer gap, for either target', async () => {
    const x = extract(BCC_1667);
    // The two targets are one thread's two probes: a disagreement the audit shows, never a blend.
    expect(x.conflicts.map((k) => k.path)).toEqual(['probe.target']);
    const v = await evaluateCase(x.case as unknown as Case, rules());
    expect(v.verdict).toBe('observer-gap');
    expect(v.possible).toEqual(['observer-gap']);
    expect(v.findings.map((f) => f.rule)).toContain('interpret/entry-probe-calls-unrecorded');
    // The same facts with the other target get the same verdict: the verdict rests on no target.
    const other = structuredClone(x.case) as unknown as Obj;
    (other.probe as Obj).target = '__vfs_write';
    expect((await evaluateCase(other as unknown as Case, rules())).verdict).toBe('observer-gap');
  });
});
