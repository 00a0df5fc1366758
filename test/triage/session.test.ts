import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

// The prompt module is the only door to inquirer: replace it with a scripted person.
vi.mock('../../src/triage/prompt.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/triage/prompt.js')>();
  return { ...real, askSelect: vi.fn(), askInput: vi.fn() };
});

import { main } from '../../src/cli.js';
import type { Io } from '../../src/io.js';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type LoadedCase, type Rules } from '../../src/index.js';
import { askInput, askSelect, PromptClosed } from '../../src/triage/prompt.js';
import { loadQuestions, type Question, type QuestionSet } from '../../src/triage/questions.js';
import { caseIdFromFile, runTriage, type TriageResult } from '../../src/triage/session.js';
import { questionOfMessage, root, scriptedAnswer, tempDir } from './helpers.js';

let rules: Rules;
let questions: QuestionSet;
let refs: LoadedCase[];

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
  refs = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => loadCase(f)));
});

/** Script the mocked prompts to answer like someone holding `ref`; record what was asked. */
function person(ref: LoadedCase, stopAfter = Infinity) {
  const asked: Question[] = [];
  let pendingType: string | undefined;
  vi.mocked(askSelect).mockImplementation(async (message, choices) => {
    const q = questionOfMessage(message, questions);
    if (asked.length >= stopAfter) throw new PromptClosed('ExitPromptError');
    asked.push(q);
    const a = scriptedAnswer(q, ref.data);
    expect(choices.map((c) => c.value)).toContain(a.pick);
    pendingType = a.type;
    return a.pick!;
  });
  vi.mocked(askInput).mockImplementation(async (message, validate) => {
    let text: string;
    if (pendingType !== undefined) {
      text = pendingType;
      pendingType = undefined;
    } else {
      const q = questionOfMessage(message, questions);
      if (asked.length >= stopAfter) throw new PromptClosed('ExitPromptError');
      asked.push(q);
      text = scriptedAnswer(q, ref.data).type!;
    }
    // What the person types must pass the prompt's own validation.
    expect([text, validate(text)]).toEqual([text, true]);
    return text;
  });
  return asked;
}

async function session(file: string, extra: Partial<Parameters<typeof runTriage>[0]> = {}): Promise<TriageResult & { output: string }> {
  let output = '';
  const r = await runTriage({ file, rules, questions, interactive: true, prompt: { input: new PassThrough() }, out: (t) => { output += t; }, color: false, ...extra });
  return { ...r, output };
}

beforeEach(() => {
  vi.mocked(askSelect).mockReset();
  vi.mocked(askInput).mockReset();
});

describe('a session answered from a reference case', () => {
  it('reaches the verdict audit gives on the full reference case, for every shipped case', async () => {
    const dir = await tempDir('replay');
    // Cross-checks are never asked for (a stated in-flight figure the records make redundant, the
    // name of the counters' event line), so a case whose verdict rests on one contradicting the
    // rest cannot be replayed by answers.
    // Likewise records that contradict a stated registration error: the error makes the verdict
    // setup-failure after three answers, and nothing about records is asked after it.
    // And every case whose facts contradict each other (a constraint of rules/constraints/ is
    // broken): its verdict weighs each conflicting fact set aside in turn, while a session that
    // has not yet asked one of them holds a consistent case.
    const crossChecks = ['counters/not-return-probe-counter'];
    // Known open: a partial case read as definite where a completion reads otherwise. None now
    // (c4-profile-line-unbound left once unstated event names got a label each). A listed case that
    // comes out right fails the test, so the list only shrinks.
    const knownOpen = new Set<string>([]);
    const contradicted = (r: LoadedCase) => r.data.expected?.rules?.some((x) => x.startsWith('constraints/')) ?? false;
    let reached = 0;
    const short: string[] = [];
    const wrong: string[] = [];
    const stillOpen: string[] = [];
    const replayed = refs.filter((r) => !contradicted(r) && !crossChecks.some((x) => r.data.expected?.rules?.includes(x)));
    for (const ref of replayed) {
      const asked = person(ref);
      const file = path.join(dir, `${ref.data.id}.yaml`);
      const r = await session(file);
      const full = await evaluateCase({ ...ref.data, claims: undefined as never }, rules);
      // Never a definite verdict the full case does not get. A session may end short of it only
      // undecided, with the full case's verdict among those still possible: a field whose value
      // matters only together with another one splits no verdict alone, so it is not asked.
      if (r.verdict.verdict === full.verdict) reached++;
      else if (r.verdict.verdict === 'insufficient-evidence' && r.verdict.possible.includes(full.verdict)) short.push(ref.data.id);
      else if (!knownOpen.has(ref.data.id)) wrong.push(`${ref.data.id}: session ${r.verdict.verdict}, full case ${full.verdict}`);
      else stillOpen.push(ref.data.id);
      // Each question once, and the saved file audits to the same verdict the session printed.
      expect(new Set(asked.map((q) => q.id)).size).toBe(asked.length);
      const saved = await evaluateCase(await loadCase(file), rules);
      expect([ref.data.id, saved.verdict, saved.findings.map((f) => f.rule)]).toEqual([ref.data.id, r.verdict.verdict, r.verdict.findings.map((f) => f.rule)]);
      expect(r.stopped).toBe(false);
      expect(r.saved).toBe(asked.length);
    }
    console.log(`sessions: ${reached} of ${replayed.length} reach the full case's verdict; short of it, undecided: ${short.join(', ') || 'none'}`);
    expect(wrong).toEqual([]);
    expect(stillOpen.sort()).toEqual([...knownOpen].sort());
    expect(reached).toBeGreaterThanOrEqual(Math.ceil(replayed.length * 0.9));
  }, 600_000); // every shipped case through a session: over a minute idle, past five on a 2-core machine under three agents

  it('creates a new file with the format and an id from its name', async () => {
    const dir = await tempDir('new');
    person(refs.find((c) => c.data.id === 'r2-constrained') ?? refs[0]!);
    const file = path.join(dir, 'Pipe Read_2.yaml');
    await session(file);
    const saved = await loadCase(file);
    expect(saved.data.format).toBe('kretprobe-case/v1');
    expect(saved.data.id).toBe('pipe-read-2');
    expect(caseIdFromFile('/x/---.yml')).toBe('case');
  });

  it('says what each answer changed', async () => {
    const dir = await tempDir('changes');
    const ref = { ...refs[0]!, data: { format: 'kretprobe-case/v1', id: 'x', probe: { target: 'nosuch', interface: 'tracefs', registration: { result: 'ENOENT' } } } } as LoadedCase;
    person(ref);
    const r = await session(path.join(dir, 'enoent.yaml'));
    expect(r.verdict.verdict).toBe('setup-failure');
    const all = r.changes.flat();
    expect(all).toContainEqual({ kind: 'verdict', from: 'insufficient-evidence', to: 'setup-failure' });
    expect(all).toContainEqual({ kind: 'fired', rule: 'scope/registration-rejected', verdict: 'setup-failure' });
    expect(r.output).toContain('verdict insufficient-evidence -> setup-failure');
    // After a rejected registration nothing about counters is asked.
    expect(vi.mocked(askSelect).mock.calls.length + vi.mocked(askInput).mock.calls.length).toBe(3);
  });

  it('an errno outside the list is picked as "other" and typed', async () => {
    const dir = await tempDir('other');
    const ref = { ...refs[0]!, data: { format: 'kretprobe-case/v1', id: 'x', probe: { target: 'f', interface: 'module', registration: { result: 'EPERM' } } } } as LoadedCase;
    person(ref);
    const r = await session(path.join(dir, 'other.yaml'));
    expect(r.verdict.verdict).toBe('setup-failure');
    expect((await loadCase(path.join(dir, 'other.yaml'))).data.probe?.registration?.result).toBe('EPERM');
    expect(vi.mocked(askInput).mock.calls.map((c) => c[0])).toContain('probe.registration.result (one of ok | EINVAL | ENOENT | E2BIG | ENOMEM | EILSEQ | EOPNOTSUPP | EADDRNOTAVAIL (or another value), or unknown)');
  });

  it('ends with the unknowns that matter, each with the command that collects it', async () => {
    const dir = await tempDir('unknowns');
    const blank = { ...refs[0]!, data: { format: 'kretprobe-case/v1', id: 'x', probe: { target: 'pipe_read' } } } as LoadedCase;
    person(blank);
    const r = await session(path.join(dir, 'u.yaml'));
    expect(r.verdict.verdict).toBe('insufficient-evidence');
    expect(r.output).toMatch(/still unknown/);
    expect(r.output).toMatch(/counters\.end\.hits {2}\[end-hits\][^\n]*\n\s+\$ cat \/sys\/kernel\/tracing\/kprobe_profile/);
    expect(r.output).toContain("grep -w 'pipe_read' /sys/kernel/debug/kprobes/list");
  });
});

describe('interrupted sessions lose nothing', () => {
  it.each([1, 3, 6, 10])('stopped after answer %i, a rerun resumes with the next question and ends where an uninterrupted run ends', async (n) => {
    const ref = refs.find((c) => c.data.id === 'stall-after-quiesce') ?? refs[0]!;
    const dir = await tempDir(`stop-${n}`);
    const whole = person(ref);
    const full = await session(path.join(dir, 'whole.yaml'));
    const order = whole.map((q) => q.id);
    expect(order.length).toBeGreaterThan(n);

    person(ref, n);
    const file = path.join(dir, 'cut.yaml');
    const first = await session(file);
    expect(first.stopped).toBe(true);
    expect(first.saved).toBe(n);
    expect(first.output).toMatch(/stopped: \d+ answer\(s\) saved/);
    const onDisk = await loadCase(file);
    for (const q of whole.slice(0, n)) expect([q.fact, onDisk.yaml.doc.hasIn(q.fact.split('.'))]).toEqual([q.fact, true]);

    const rest = person(ref);
    const second = await session(file);
    expect(rest.map((q) => q.id)).toEqual(order.slice(n));
    expect(second.verdict.verdict).toBe(full.verdict.verdict);
    expect(await fs.readFile(`${file}.bak`, 'utf8')).toContain('format: kretprobe-case/v1');
  });
});

describe('the triage command', () => {
  function io(interactive: boolean): Io & { out: string; err: string } {
    const o = {
      out: '',
      err: '',
      stdout: (t: string) => { o.out += t; },
      stderr: (t: string) => { o.err += t; },
      stdin: new PassThrough(),
      interactive,
      stderrIsTTY: false,
      env: {},
      cwd: root,
      color: false,
    };
    return o;
  }

  it('without a terminal and without --answers: one line, exit 2, nothing written', async () => {
    const dir = await tempDir('noterm');
    const t = io(false);
    const code = await main(['triage', path.join(dir, 'c.yaml')], t);
    expect(code).toBe(2);
    expect(t.err.trim().split('\n')).toHaveLength(1);
    expect(t.err).toMatch(/--answers answers\.yaml.*audit/);
    await expect(fs.access(path.join(dir, 'c.yaml'))).rejects.toThrow();
  });

  it('--answers applies answers as if typed and ends with the verdict', async () => {
    const dir = await tempDir('answers');
    const answers = path.join(dir, 'a.yaml');
    await fs.writeFile(answers, 'probe.target: nosuch\nprobe.interface: tracefs\nprobe.registration.result: ENOENT\n');
    const t = io(false);
    const code = await main(['triage', path.join(dir, 'c.yaml'), '--answers', answers], t);
    expect(t.err).toBe('');
    expect(code).toBe(0);
    expect(t.out).toMatch(/verdict\s+setup-failure/);
    expect((await loadCase(path.join(dir, 'c.yaml'))).data.probe?.registration?.result).toBe('ENOENT');
    expect(askSelect).not.toHaveBeenCalled();
  });

  it('--answers with a bad value: file:line:col, exit 2', async () => {
    const dir = await tempDir('badanswers');
    const answers = path.join(dir, 'a.yaml');
    await fs.writeFile(answers, 'probe.target: x\ncounters.end.nmissed: -4\n');
    const t = io(false);
    expect(await main(['triage', path.join(dir, 'c.yaml'), '--answers', answers], t)).toBe(2);
    expect(t.err).toMatch(/a\.yaml:2:23: expected counters\.end\.nmissed: a whole number >= 0, or unknown; got -4/);
  });
});
