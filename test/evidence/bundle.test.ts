import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { caseFromBundle, caseFromSnapshots, readSnapshot, type SnapshotFiles } from '../../src/evidence/bundle.js';
import { caseSchema, evaluateCase, loadRules, parseCase } from '../../src/index.js';
import { main } from '../../src/cli.js';
import type { Io } from '../../src/io.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/bundles');

type Obj = Record<string, unknown>;
const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

describe('case from-bundle on the lab scenarios (kernel-notes.md)', () => {
  it.each([
    ['constrained-r2', { 'probe.maxactive.effective': 2, 'counters.start.nmissed': 0, 'counters.end.nmissed': 1, 'counters.end.hits': 2, 'counters.end.epoch': 'reg-1', 'ledger.entries': undefined, 'ledger.returns': 2, 'ledger.entry_events': 3, 'kernel.release': '6.12.95+deb12-amd64' }],
    ['adequate-r8', { 'probe.maxactive.effective': 8, 'counters.end.nmissed': 0, 'counters.end.hits': 3, 'ledger.entries': undefined, 'ledger.returns': 3, 'ledger.entry_events': 3, 'kernel.release': '6.1.0-50-amd64', 'coverage.clones': ['pipe_read.isra.0'] }],
    ['stopped-in-flight', { 'probe.maxactive.effective': 8, 'counters.end.hits': 3, 'counters.end.nmissed': 0, 'ledger.entries': undefined, 'ledger.returns': 0, 'ledger.entry_events': 3 }],
    ['counters-kept-across-runs', { 'counters.start.nmissed': 1, 'counters.end.nmissed': 2, 'counters.start.epoch': 'reg-1', 'counters.end.epoch': 'reg-1', 'ledger.entry_events': 7, 'ledger.entries': undefined, 'ledger.returns': 6 }],
    ['re-registered', { 'counters.start.epoch': 'reg-1', 'counters.end.epoch': 'reg-2', 'probe.registration.epoch': 'reg-2', 'ledger.entry_events': undefined, 'probe.maxactive.effective': 8 }],
    ['registration-failed', { 'probe.registration.result': 'EINVAL', 'probe.armed': false, 'probe.target': 'no_such_function_xyz', 'probe.registration.epoch': undefined, 'ledger.returns': undefined, 'counters.end': undefined, 'probe.maxactive': undefined }],
  ])('%s', async (name, facts) => {
    const { case: c } = await caseFromBundle(path.join(FIXTURES, name));
    expect(caseSchema.safeParse(c).success).toBe(true);
    for (const [p, v] of Object.entries(facts)) expect([p, at(c, p)]).toEqual([p, v]);
  });

  it.each([
    ['constrained-r2', 'ok', true, 'tracefs', 2, false],
    ['adequate-r8', 'ok', true, 'tracefs', 2, false],
    ['registration-failed', 'EINVAL', false, 'tracefs', 2, false],
  ])('%s: registration, armed, interface, CPUs, blacklist', async (name, result, armed, iface, cpus, blacklisted) => {
    const { case: c } = await caseFromBundle(path.join(FIXTURES, name));
    expect([at(c, 'probe.registration.result'), at(c, 'probe.armed'), at(c, 'probe.interface'), at(c, 'kernel.possible_cpus'), at(c, 'coverage.blacklisted')]).toEqual([result, armed, iface, cpus, blacklisted]);
  });

  it('cites every fact with a bundle file and line', async () => {
    const { case: c } = await caseFromBundle(path.join(FIXTURES, 'constrained-r2'));
    const prov = c.provenance as Record<string, string>;
    expect(prov['counters.end.nmissed']).toBe('end/kprobe_profile:1');
    expect(prov['counters.start.nmissed']).toBe('start/kprobe_profile:1');
    expect(prov['probe.maxactive.effective']).toBe('end/kprobe_events:1');
    expect(prov['probe.armed']).toBe('end/kprobes_list:2');
    expect(prov['kernel.possible_cpus']).toBe('end/cpu_possible:1');
    expect(prov['ledger.entries']).toBeUndefined();
    expect(prov['ledger.returns']).toBe('end/trace:16-17');
    expect(prov['ledger.entry_events']).toBe('start/kprobe_profile:2,end/kprobe_profile:2');
    // Every leaf fact has a citation.
    const leaves: string[] = [];
    const walk = (o: unknown, p: string): void => {
      if (o && typeof o === 'object' && !Array.isArray(o)) for (const [k, v] of Object.entries(o)) walk(v, p ? `${p}.${k}` : k);
      else leaves.push(p);
    };
    for (const k of ['kernel', 'probe', 'coverage', 'counters', 'ledger']) walk(c[k], k);
    expect(leaves.filter((l) => !(l in prov))).toEqual([]);
  });

  it('the error_log reason and the offending word come with a registration failure', async () => {
    const { case: c } = await caseFromBundle(path.join(FIXTURES, 'registration-failed'));
    expect(at(c, 'probe.registration.reason')).toContain('Invalid probed address or symbol');
    expect((c.provenance as Obj)['probe.registration.result']).toBe('end/error_log:1');
  });

  it.each([
    // On 6.12 the return event's profile miss column is rp->nmissed + kp.nmissed (issue 20, class
    // 1): tracefs does not split it and the records show no demand above the pool, so the rise
    // may be pool misses or kprobe-level ones. Both stay possible, and the demand decides.
    ['constrained-r2', 'insufficient-evidence', 'counters/profile-misses-are-a-sum'],
    ['counters-kept-across-runs', 'insufficient-evidence', 'counters/profile-misses-are-a-sum'],
    ['registration-failed', 'setup-failure', 'scope/registration-rejected'],
    ['re-registered', 'insufficient-evidence', 'counters/epoch-changed'],
    // A bundle has no independent ledger: without eligible operations nothing can be called fully observed.
    ['adequate-r8', 'insufficient-evidence', undefined],
    // The profile counted 3 returns the stopped trace does not hold: they returned after the stop.
    // Without an independent ledger an observer gap above it is still possible.
    ['stopped-in-flight', 'insufficient-evidence', 'interpret/returned-after-capture-stop'],
  ])('audit verdict for %s is %s', async (name, verdict, rule) => {
    const rules = await loadRules();
    const { case: c } = await caseFromBundle(path.join(FIXTURES, name));
    const v = await evaluateCase(caseSchema.parse(c), rules);
    expect(v.verdict).toBe(verdict);
    if (rule !== undefined) expect(v.findings.map((f) => f.rule)).toContain(rule);
    if (rule === 'counters/profile-misses-are-a-sum') {
      expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'observer-gap']));
      expect(v.decides).toContain('concurrency.observed_demand_high_water');
    }
  });
});

/** A snapshot as the collector writes it, with only the files a test needs. */
function snap(over: Partial<SnapshotFiles> = {}): SnapshotFiles {
  return {
    manifest: 'format=kretprobe-bundle/v1\nphase=x\nuptime_s=5.0\nrelease=6.12.95+deb12-amd64\nevents=kfix/gate kfix/gate_entry\nsymbol=pipe_read\ntrace_lines=5000\nkprobes_blacklist_total=717\n',
    kprobe_events: 'r2:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n',
    kprobe_profile: '  gate 0 0\n  gate_entry 0 0\n',
    ...over,
  };
}

describe('caseFromSnapshots epochs', () => {
  it.each([
    ['same registration', snap(), snap({ kprobe_profile: '  gate 2 1\n  gate_entry 3 0\n' }), 'reg-1', 3],
    ['a counter went down', snap({ kprobe_profile: '  gate 5 1\n  gate_entry 6 0\n' }), snap({ kprobe_profile: '  gate 2 1\n  gate_entry 9 0\n' }), 'reg-2', undefined],
    ['the definition changed', snap(), snap({ kprobe_events: 'r8:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n', kprobe_profile: '  gate 3 0\n  gate_entry 3 0\n' }), 'reg-2', undefined],
    ['the machine rebooted', snap(), snap({ manifest: snap().manifest!.replace('uptime_s=5.0', 'uptime_s=1.0'), kprobe_profile: '  gate 3 0\n  gate_entry 3 0\n' }), 'reg-2', undefined],
  ])('%s', (_n, start, end, endEpoch, entryEvents) => {
    const { case: c } = caseFromSnapshots({ start, end });
    expect(at(c, 'counters.start.epoch')).toBe('reg-1');
    expect(at(c, 'counters.end.epoch')).toBe(endEpoch);
    expect(at(c, 'ledger.entry_events')).toBe(entryEvents);
  });

  it('the event vanished: not armed, no end counters, new epoch reported', () => {
    const { case: c, problems } = caseFromSnapshots({ start: snap(), end: snap({ kprobe_events: 'p:kfix/gate_entry pipe_read\n', kprobe_profile: '  gate_entry 3 0\n' }) });
    expect(at(c, 'probe.armed')).toBe(false);
    expect(at(c, 'counters.end')).toBeUndefined();
    expect(problems.map((p) => p.file)).toContain('end/kprobe_events');
  });
});

describe('caseFromSnapshots: which probe the case is about (issue 21)', () => {
  it('a bundle whose only event is a p: one is about an entry probe', () => {
    const only = (s: SnapshotFiles) => ({ ...s, manifest: s.manifest!.replace('events=kfix/gate kfix/gate_entry', 'events=kfix/gate_entry'), kprobe_events: 'p:kfix/gate_entry pipe_read\n', kprobe_profile: '  gate_entry 3 0\n' });
    const { case: c } = caseFromSnapshots({ end: only(snap()) });
    expect(at(c, 'probe.kind')).toBe('entry');
    expect(at(c, 'probe.event')).toBe('kfix/gate_entry');
  });

  it('with an r: event beside its p: twin, the case is about the return probe: no kind written', () => {
    expect(at(caseFromSnapshots({ end: snap() }).case, 'probe.kind')).toBeUndefined();
  });
});

describe('caseFromSnapshots keeps unknown unknown', () => {
  it('an empty snapshot gives no facts beyond the header', () => {
    const { case: c } = caseFromSnapshots({ end: {} });
    expect(Object.keys(c).sort()).toEqual(['format', 'id', 'source', 'title']);
  });

  it('a malformed profile line is reported and the counter stays absent', () => {
    const { case: c, problems } = caseFromSnapshots({ end: snap({ kprobe_profile: '  gate lots 0\n  gate_entry 3 0\n' }) });
    expect(at(c, 'counters.end.nmissed')).toBeUndefined();
    expect(problems).toContainEqual(expect.objectContaining({ file: 'end/kprobe_profile', line: 1 }));
  });

  it('without a blacklist file, blacklisted stays unknown; a listed symbol is blacklisted', () => {
    expect(at(caseFromSnapshots({ end: snap() }).case, 'coverage.blacklisted')).toBeUndefined();
    const { case: c } = caseFromSnapshots({ end: snap({ kprobes_blacklist: '0xffffffff9a201030-0xffffffff9a201050\tpipe_read\n' }) });
    expect(at(c, 'coverage.blacklisted')).toBe(true);
    expect((c.provenance as Obj)['coverage.blacklisted']).toBe('end/kprobes_blacklist:1');
  });

  it('[DISABLED] in kprobes/list means not armed', () => {
    const { case: c } = caseFromSnapshots({ end: snap({ kprobes_list: 'ffffffff9985f794  r  pipe_read+0x4    [DISABLED]\n', 'events/kfix/gate/enable': '1\n' }) });
    expect(at(c, 'probe.armed')).toBe(false);
  });

  it('maxactive.requested comes from the user definition, effective from the read-back', () => {
    const { case: c } = caseFromSnapshots({ end: snap({ kprobe_events: 'r10:kfix/gate pipe_read\n' }) }, { definition: 'r:kfix/gate pipe_read' });
    expect(at(c, 'probe.maxactive.effective')).toBe(10);
    expect(at(c, 'probe.maxactive.requested')).toBeUndefined();
    const r2 = caseFromSnapshots({ end: snap() }, { definition: 'r010:kfix/gate pipe_read' });
    expect(at(r2.case, 'probe.maxactive.requested')).toBe(8);
  });

  it('lost events leave trace counts unknown', () => {
    const trace = '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)\nCPU:1 [LOST 12 EVENTS]\n';
    const { case: c } = caseFromSnapshots({ end: snap({ trace }) });
    expect(at(c, 'ledger.entries')).toBeUndefined();
  });

  // v6.12 kernel/trace/trace.c: the header's entries-written less entries-in-buffer is what the
  // ring buffer overwrote since it was cleared; the test's loss is its rise between the snapshots.
  it('reads the lost events of the test from the rise of the trace header\'s overwritten entries', () => {
    const rec = (t: string) => `             cat-147     [001] .....     ${t}: gate_entry: (pipe_read+0x4/0x470)\n`;
    const header = (a: number, b: number) => `# tracer: nop\n#\n# entries-in-buffer/entries-written: ${a}/${b}   #P:2\n#\n`;
    const { case: c, problems } = caseFromSnapshots({ start: snap({ trace: header(1, 4) + rec('1.000001') }), end: snap({ trace: header(2, 9) + rec('1.000001') + rec('2.000001') }) });
    expect(at(c, 'ledger.lost_events')).toBe(4);
    expect(at(c, 'ledger.entries')).toBeUndefined();
    expect(problems).toContainEqual(expect.objectContaining({ file: 'end/trace', line: 3 }));
    // Nothing overwritten during the test: nothing lost, and the records count.
    const still = caseFromSnapshots({ start: snap({ trace: header(1, 4) + rec('1.000001') }), end: snap({ trace: header(2, 5) + rec('1.000001') + rec('2.000001') }) });
    expect(at(still.case, 'ledger.lost_events')).toBe(0);
  });

  // tracefs per_cpu/cpuN/stats (v6.12 kernel/trace/trace.c tracing_stats_read), as the collector
  // writes them: the buffer's own counts, which see overwrites no tail of the trace shows.
  it('reads the test\'s lost events from the rise of the ring buffer\'s per-CPU counts, over what the trace text shows', () => {
    const st = (o0: number, d1: number) => `CPU: 0\nentries: 4\noverrun: ${o0}\ncommit overrun: 0\nbytes: 160\noldest event ts:     1.000000\nnow ts:     2.000000\ndropped events: 0\nread events: 0\nCPU: 1\nentries: 2\noverrun: 0\ncommit overrun: 0\nbytes: 80\noldest event ts:     1.000000\nnow ts:     2.000000\ndropped events: ${d1}\nread events: 0\n`;
    const trace = '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)\n';
    const { case: c, problems } = caseFromSnapshots({ start: snap({ buffer_stats: st(5, 1), trace: '' }), end: snap({ buffer_stats: st(9, 3), trace }) });
    expect(at(c, 'ledger.lost_events')).toBe(6);
    expect((c.provenance as Obj)['ledger.lost_events']).toBe('start/buffer_stats,end/buffer_stats');
    expect(at(c, 'ledger.entry_events')).toBe(0);
    expect(problems).toContainEqual(expect.objectContaining({ file: 'end/trace', got: expect.stringMatching(/^6 events lost/) }));
    // A count that fell: the buffer was cleared during the test, the loss is unknown.
    const cleared = caseFromSnapshots({ start: snap({ buffer_stats: st(5, 1), trace: '' }), end: snap({ buffer_stats: st(2, 3), trace }) });
    expect(at(cleared.case, 'ledger.lost_events')).toBeUndefined();
    expect(cleared.problems).toContainEqual(expect.objectContaining({ file: 'end/buffer_stats', got: expect.stringMatching(/5 at the start, 2 at the end for CPU 0/) }));
  });

  it('a lost-events marker without a count leaves the loss unknown, not zero', () => {
    const trace = '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)\nCPU:1 [LOST EVENTS]\n';
    const { case: c, problems } = caseFromSnapshots({ end: snap({ trace }) });
    expect(at(c, 'ledger.lost_events')).toBeUndefined();
    expect(at(c, 'ledger.entries')).toBeUndefined();
    expect(problems).toContainEqual(expect.objectContaining({ file: 'end/trace', line: 2, got: expect.stringMatching(/no count/) }));
  });
});

describe('kretprobe-triage case from-bundle', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-case-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });
  const io = (): Io & { out: string; err: string } => {
    const o = { out: '', err: '' };
    return Object.assign(o, { stdout: (t: string) => { o.out += t; }, stderr: (t: string) => { o.err += t; }, stdin: process.stdin, interactive: false, stderrIsTTY: false, env: {}, cwd: dir, color: false });
  };

  it('-o writes a case that loads back as kretprobe-case/v1', async () => {
    const x = io();
    const out = path.join(dir, 'case.yaml');
    expect(await main(['case', 'from-bundle', path.join(FIXTURES, 'constrained-r2'), '-o', out], x)).toBe(0);
    expect(x.out).toBe('');
    const loaded = parseCase(await fs.readFile(out, 'utf8'), out);
    expect(loaded.data.id).toBe('constrained-r2');
    expect(loaded.data.counters?.end?.nmissed).toBe(1);
    expect(loaded.data.provenance?.['counters.end.nmissed']).toBe('end/kprobe_profile:1');
    expect((await fs.readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('prints to stdout without -o and warns about a new epoch on stderr', async () => {
    const x = io();
    expect(await main(['case', 'from-bundle', path.join(FIXTURES, 're-registered'), '--id', 'rereg'], x)).toBe(0);
    expect(parseCase(x.out, 'stdout').data.id).toBe('rereg');
    expect(x.err).toMatch(/^kretprobe-triage: warning: end\/kprobe_events:1: expected one registration/m);
  });

  it('a missing bundle is an input error, exit 2', async () => {
    const x = io();
    expect(await main(['case', 'from-bundle', path.join(dir, 'nope')], x)).toBe(2);
    expect(x.err).toMatch(/nope: expected a bundle directory/);
  });

  // issue 23: a named event that no snapshot knows is one line and exit 2, never a case with no counters.
  it('an --event no snapshot defines, profiles or logs an error for is exit 2 naming the events there', async () => {
    const x = io();
    expect(await main(['case', 'from-bundle', path.join(FIXTURES, 'constrained-r2'), '--event', 'kfix/gatee'], x)).toBe(2);
    expect(x.out).toBe('');
    expect(x.err).toMatch(/^kretprobe-triage: .*start\/kprobe_events: expected the --event kfix\/gatee .*; got only kfix\/gate, kfix\/gate_entry/m);
    expect(x.err.trim().split('\n')).toHaveLength(1);
  });

  it('a snapshot whose profile lacks the defined event warns that its counters stay unknown', () => {
    const defs = 'r2:kfix/gate pipe_read\n';
    const { case: c, problems } = caseFromSnapshots({ end: { manifest: 'events=kfix/gate\n', missing: '', kprobe_events: defs, kprobe_profile: '  other_event    5    0\n' } });
    expect(at(c, 'counters.end')).toBeUndefined();
    expect(problems.map((p) => [p.file, p.expected])).toContainEqual(['end/kprobe_profile', 'a row for kfix/gate']);
  });

  it('readSnapshot picks up the enable files of every event', async () => {
    const files = await readSnapshot(path.join(FIXTURES, 'constrained-r2', 'end'));
    expect(Object.keys(files).filter((k) => k.startsWith('events/')).sort()).toEqual(['events/kfix/gate/enable', 'events/kfix/gate_entry/enable']);
  });
});
