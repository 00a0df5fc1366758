import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadRules, parseCase, type Rules } from '../../src/index.js';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

// The article's overlap fixture run as an experiment by a reporter (Propose a controlled overlap
// fixture): returns go missing while callers are held inside the function and come back once they
// leave, nothing else changed. Only a pool runs dry with overlap, so that run's demand was above
// its pool, and only a registered, armed probe has a pool to run dry (issue 21: what an expert
// acts on in tcptracer-bpf#34 and bcc#1072, where no miss counter was read). Before
// concurrency.loss_follows_overlap existed every row here failed: the field was refused by the
// case schema, and the sentence was read as nothing.

type Obj = Record<string, unknown>;
const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

let lex: Lexicon;
let rules: Rules;
beforeAll(async () => {
  lex = await loadLexicon();
  rules = await loadRules(path.resolve(import.meta.dirname, '../../rules'));
});
// bcc#1250, yonghong-song's comment of 2017-07-11 (verbatim, the kprobetrace.txt quote left out).
const BCC_1250 = [
  'basically, in bcc, we can generate event like "r50:...". This will set maxactive to 50',
  'inside the kernel.',
  '',
  'I tried this example, twice of online cpu number is not enough, still some samples',
  'are missing from kretprobe. Randomly tried 50 (online cpu number is 4), no sample',
  'missing.',
  '',
].join('\n');
const read = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex).case as unknown as Obj;
const judge = (yaml: string) => evaluateCase(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml'), rules);

describe('an overlap experiment stated in a thread', () => {
  it.each([
    {
      name: 'the blocked callers exit and the tracer works again (tcptracer-bpf#34, verbatim)',
      text: '6. As soon as the busybox processes are terminated, the tracer works correctly again.\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.registration.result': 'ok', 'probe.armed': true },
    },
    {
      name: 'ours: the events come back once the blocked readers are killed',
      text: 'Once the blocked readers are killed, the missing return events come back.\n',
      facts: { 'concurrency.loss_follows_overlap': true },
    },
    {
      name: 'ours: a plan, not a result ("if ... should")',
      text: 'If the busybox processes are terminated, the tracer should work correctly again.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined, 'probe.registration.result': undefined },
    },
    {
      name: 'ours: the loss stays after the callers leave',
      text: 'After the busybox processes are terminated, the tracer still misses accept events.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: works again after a reboot is no overlap experiment',
      text: 'After a reboot the tracer works correctly again.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      // https://github.com/iovisor/bcc/issues/1072 (the same note closes tcptracer-bpf#34)
      name: 'the control run: a variant whose callers do not block does not reproduce the loss (bcc#1072, verbatim)',
      text: 'Note: use `nc` from `busybox` to reproduce this issue. `nc` from https://nmap.org/ncat (the default on Fedora) will not reproduce the issue because it does not block on the accept() system call […]\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.registration.result': 'ok', 'probe.armed': true, 'concurrency.target_sleeps': undefined },
    },
    {
      name: 'ours: the control run in other words ("doesn\'t reproduce ... because the readers don\'t sleep in")',
      text: 'The unpatched client doesn\'t reproduce it because the readers don\'t sleep in pipe_read.\n',
      facts: { 'concurrency.loss_follows_overlap': true },
    },
    {
      name: 'ours: the author failed to reproduce at all, whatever the reason',
      text: 'I cannot reproduce the issue because it does not block on my machine.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: a control run that differs in something else than the blocking point',
      text: 'The 5.10 kernel will not reproduce the issue because it has the fix.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: a prediction hedged by "would"',
      text: 'A non-blocking client would not reproduce the issue because it does not block on accept().\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'the adequate run alone, with no run that lost calls before it and no pool named (bcc#1250, its last sentence): not read',
      text: 'Randomly tried 50 (online cpu number is 4), no sample missing.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      // https://github.com/iovisor/bcc/issues/1250
      name: 'the larger-pool form: the run that lost samples, then the pool an earlier sentence names, with none lost (bcc#1250, verbatim): the case is the run that lost them, 50 is the other run\'s',
      text: BCC_1250,
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.interface': 'tracefs', 'probe.maxactive.requested': undefined, 'probe.registration.result': 'ok' },
    },
    {
      name: 'ours: the larger-pool form with both pools named: the smaller one is the case\'s',
      text: 'With maxactive 8 some returns were lost. With maxactive 64, no returns were lost.\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.maxactive.requested': 8 },
    },
    {
      name: 'ours: a number that is not a pool ("50 clients")',
      text: 'With 200 clients some samples are missing. Then I tried 50 clients, no sample missing.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: no loss stated just before it',
      text: 'We can set maxactive to 50. I tried 50, no sample missing.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined, 'probe.maxactive.requested': 50 },
    },
    {
      // https://github.com/bpftrace/bpftrace/issues/1035, mmisono's comment of 2019-12-29
      name: 'the larger-pool form told as its outcome: the pool raised, the return probe then fired (bpftrace#1035, verbatim)',
      text: 'If I increase `maxactive` manually (the last argument of `bpf_attach_kprobe`), kretprobe fired as expected (and no `nmissed` events).\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.registration.result': 'ok', 'probe.armed': true },
    },
    {
      name: 'ours: the misses went once the pool was raised',
      text: 'After we bumped maxactive to 64 there were no more nmissed.\n',
      facts: { 'concurrency.loss_follows_overlap': true },
    },
    {
      name: 'ours: the problem went away with a larger pool, whose size is the other run\'s',
      text: 'With maxactive=64 the problem disappeared.\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.maxactive.requested': undefined },
    },
    {
      name: 'ours: setting the pool fixed it',
      text: 'Setting maxactive to 100 fixed it.\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.maxactive.requested': undefined },
    },
    {
      name: 'ours: the misses went away once the pool was raised',
      text: 'Raising maxactive to 128 made the misses go away.\n',
      facts: { 'concurrency.loss_follows_overlap': true, 'probe.maxactive.requested': undefined },
    },
    {
      name: 'ours: the count stayed level once the pool was raised',
      text: 'Increasing maxactive resolved the issue: nmissed stays at 0.\n',
      facts: { 'concurrency.loss_follows_overlap': true },
    },
    {
      name: 'ours: raising the pool did not fix it (the pool stated is this run\'s)',
      text: 'Increasing maxactive to 64 did not fix it; the returns are still missing.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined, 'probe.maxactive.requested': 64 },
    },
    {
      name: 'ours: a hedged outcome is a plan, not a run',
      text: 'If you increase maxactive, the kretprobe should fire.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: raising the pool did not help',
      text: 'Increasing maxactive did not help, the kretprobe never fired.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: how the probe works, in the present tense, is no run',
      text: 'If you increase maxactive, the kretprobe fires for every call.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: a question',
      text: 'If I increase maxactive, would no more misses be counted?\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
    {
      name: 'ours: the loss is stated in another paragraph',
      text: 'Some samples are missing.\n\nWith maxactive 64, no samples are missing.\n',
      facts: { 'concurrency.loss_follows_overlap': undefined },
    },
  ])('$name', ({ text, facts }) => {
    const c = read(text);
    for (const [p, v] of Object.entries(facts)) expect(at(c, p), p).toEqual(v);
  });
});

describe('what an overlap experiment decides', () => {
  // tcptracer-bpf#34 as a case: a 2017 kernel, the CPUs and the preemption model not stated, so
  // the default pool is unknown; no counter read; 25 callers blocked in the target.
  const RUN = `kernel: { observed_by: "2017-03-25" }\nprobe: { target: inet_csk_accept }\n`;

  it('capacity-missed from the experiment alone, with no counter and no pool size', async () => {
    const v = await judge(`${RUN}concurrency: { target_sleeps: true, workers: 25, loss_follows_overlap: true }\n`);
    expect(v.verdict).toBe('capacity-missed');
    expect(v.findings.map((f) => f.rule)).toContain('counters/nmissed-rose');
  });

  it('bcc#1250: the larger-pool form read from the thread decides capacity-missed for the run that lost samples, its pool unknown', async () => {
    const x = extractWriteup(`# excerpt\n\n${BCC_1250}`, 'thread.md', lex);
    // Found and listed, bound to the adequate run: never the case's pool.
    expect(x.facts.find((f) => f.path === 'probe.maxactive.requested')).toMatchObject({ value: 50, otherRun: true });
    const v = await evaluateCase(x.case, rules);
    expect(v.verdict).toBe('capacity-missed');
    expect(v.findings.map((f) => f.rule)).toContain('counters/nmissed-rose');
  });

  it('the outcome form names the raised pool: found, bound to the adequate run, and the run that lost calls is capacity-missed', async () => {
    const x = extractWriteup('# excerpt\n\nThe kretprobe on tcp_v4_connect lost returns.\n\nWhen I bumped maxactive to 256 the return probe fired for every call.\n', 'thread.md', lex);
    expect(x.facts.find((f) => f.path === 'probe.maxactive.requested')).toMatchObject({ value: 256, otherRun: true });
    expect(at(x.case as unknown as Obj, 'probe.maxactive.requested')).toBeUndefined();
    const v = await evaluateCase(x.case, rules);
    expect(v.verdict).toBe('capacity-missed');
  });

  it('without the experiment the same evidence decides nothing', async () => {
    const v = await judge(`${RUN}concurrency: { target_sleeps: true, workers: 25 }\n`);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toContain('capacity-missed');
    expect(v.possible).toContain('observer-gap');
  });

  it('an experiment that did not follow the overlap establishes nothing either', async () => {
    const v = await judge(`${RUN}concurrency: { target_sleeps: true, workers: 25, loss_follows_overlap: false }\n`);
    expect(v.verdict).toBe('insufficient-evidence');
  });

  it.each([
    ['a probe with no pool (fexit)', 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\nprobe: { interface: bpftrace, target: f, bpf_attach: fexit, registration: { result: ok }, armed: true }\nconcurrency: { loss_follows_overlap: true }\n', 'constraints/overlap-experiment-fits-pool'],
    ['an entry event measured the demand within the pool', 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\nprobe: { interface: module, target: f, maxactive: { requested: 8, effective: 8 }, registration: { result: ok }, armed: true }\nconcurrency: { loss_follows_overlap: true, observed_demand_high_water: 5 }\nledger: { returns_without_entry: 0 }\n', 'constraints/overlap-experiment-fits-pool'],
    ['the registration failed', 'probe: { target: f, registration: { result: EINVAL } }\nconcurrency: { loss_follows_overlap: true }\n', 'constraints/overlap-experiment-proves-registration'],
    ['the probe was not armed', 'probe: { target: f, registration: { result: ok }, armed: false }\nconcurrency: { loss_follows_overlap: true }\n', 'constraints/overlap-experiment-proves-registration'],
    ['the pool\'s own miss count stayed level', 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\nprobe: { interface: module, target: f, registration: { result: ok, epoch: e }, armed: true, maxactive: { requested: 4, effective: 4 } }\nconcurrency: { loss_follows_overlap: true }\ncounters: { source: module-field, start: { epoch: e, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: e, nmissed: 0, kprobe_nmissed: 0 } }\n', 'constraints/overlap-experiment-lost-returns'],
    ['every eligible call has both records', 'probe: { interface: module, target: f, registration: { result: ok }, armed: true }\nconcurrency: { loss_follows_overlap: true, recursion_depth: 1 }\nledger: { eligible: 4, entries: 4, returns: 4, foreign_records: 0 }\n', 'constraints/overlap-experiment-lost-returns'],
  ])('contradicts %s: a finding, and no capacity verdict rests on it', async (_, yaml, rule) => {
    const v = await judge(yaml);
    expect(v.findings.map((f) => f.rule)).toContain(rule);
    expect(v.findings.map((f) => f.rule)).not.toContain('counters/nmissed-rose');
    expect(v.verdict).not.toBe('capacity-missed');
  });
});

// A claim told in the A/B's outcome is about the other run (the larger pool, the callers gone),
// not the run whose evidence the case holds: bpftrace#1035's "kretprobe fired as expected (and
// no nmissed events)" is the larger-pool run's. Judged against this run's 99 misses it read
// "unsupported"; an expert calls it supported, since that run read the same counter. bcc#1250's
// "no sample missing" with 50 was judged from the output, which the expert does not accept.
describe('a claim about the A/B\'s other run', () => {
  const BPFTRACE_1035 = [
    'Attaching 1 probe...',
    '',
    'nmissed=99, maxactive=2',
    '',
    'If I increase `maxactive` manually (the last argument of `bpf_attach_kprobe`), kretprobe fired as expected (and no `nmissed` events).',
    '',
  ].join('\n');

  it.each([
    ['bpftrace#1035 (verbatim): the other run counted no misses', BPFTRACE_1035, true, 'supported'],
    ['bcc#1250 (verbatim): the other run\'s "no sample missing" is judged from its output', BCC_1250, undefined, 'unsupported'],
  ])('%s', async (_, text, counted, judgement) => {
    const x = extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
    expect(x.claims.map((c) => [c.kind, c.otherRun])).toEqual([['no-misses', true]]);
    expect(x.case.claims?.[0]?.subject).toBe('other-run');
    expect(at(x.case as unknown as Obj, 'concurrency.overlap_run_counter_level')).toBe(counted);
    const v = await evaluateCase(x.case, rules);
    expect(v.claims[0]).toMatchObject({ kind: 'no-misses', subject: 'other-run', rule: 'claims/no-misses-other-run', judgement });
  });

  it('a no-misses claim in a sentence of its own is this run\'s, judged on this run\'s counters', async () => {
    const x = extractWriteup('# excerpt\n\nThe kprobe_profile row read 812 hits and 37 misses before and after: no misses at all, we concluded.\n\nWhen I bumped maxactive to 256 the return probe fired for every call.\n', 'thread.md', lex);
    const own = x.claims.filter((c) => c.kind === 'no-misses');
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((c) => c.otherRun === undefined)).toBe(true);
    expect(x.case.claims?.every((c) => c.subject === undefined)).toBe(true);
  });

  it.each([
    ['a raised pool, and the count stayed level', 'After we bumped maxactive to 64 there were no more nmissed.\n', true],
    ['a set pool and "no more nmissed"', 'With maxactive=64 there were no more nmissed events.\n', true],
    ['a raise whose count stayed at 0', 'Increasing maxactive resolved the issue: nmissed stays at 0.\n', true],
    ['one run with a pool, judged from its output', 'With maxactive 64, no samples are missing.\n', undefined],
    ['a set pool with no "more": one run, not an A/B', 'With maxactive=64 there were no nmissed events.\n', undefined],
    ['a raise that did not help', 'Increasing maxactive to 64 did not fix it; nmissed is still 12.\n', undefined],
    ['a question', 'If I increase maxactive, would there be no more nmissed?\n', undefined],
  ])('the other run\'s counter: %s', (_, text, counted) => {
    expect(at(read(text), 'concurrency.overlap_run_counter_level')).toBe(counted);
  });

  // As cases: the subject, not the facts, picks the rule.
  const RUN = 'kernel: { release: 6.12.95+deb12-amd64, possible_cpus: 4 }\nprobe: { interface: module, target: f, registration: { result: ok, epoch: e }, armed: true, maxactive: { requested: 2, effective: 2 } }\ncounters: { source: module-field, start: { epoch: e, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: e, nmissed: 99, kprobe_nmissed: 0 } }\n';
  it.each([
    ['this run\'s, against its 99 misses', '', 'concurrency: { loss_follows_overlap: true, overlap_run_counter_level: true }\n', 'claims/no-misses', 'unsupported'],
    ['the other run\'s, counted level', 'subject: other-run, ', 'concurrency: { loss_follows_overlap: true, overlap_run_counter_level: true }\n', 'claims/no-misses-other-run', 'supported'],
    ['the other run\'s, not counted', 'subject: other-run, ', 'concurrency: { loss_follows_overlap: true }\n', 'claims/no-misses-other-run', 'unsupported'],
  ])('a no-misses claim %s', async (_, subject, concurrency, rule, judgement) => {
    const v = await judge(`${RUN}${concurrency}claims: [{ kind: no-misses, ${subject}text: no misses }]\n`);
    expect(v.claims[0]).toMatchObject({ rule, judgement });
  });

  it('a claim about another run with no rule for it is never judged on this run\'s evidence', async () => {
    const v = await judge(`${RUN}claims: [{ kind: function-stuck, subject: other-run, text: it was stuck there }]\n`);
    expect(v.claims[0]).toMatchObject({ rule: 'claims/(other-run)', judgement: 'unsupported', subject: 'other-run' });
    expect(v.claims[0]!.because).toMatch(/another run/);
  });
});
