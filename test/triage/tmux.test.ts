import { spawnSync } from 'node:child_process';
import { promises as fs, existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCase, type LoadedCase } from '../../src/index.js';
import { choicesFor } from '../../src/triage/answer.js';
import { loadQuestions, type QuestionSet } from '../../src/triage/questions.js';
import { root, scriptedAnswer, tempDir } from './helpers.js';
import { hasTool } from '../support/tools.js';

// A real terminal: the built CLI runs in a tmux pane, keys are typed with send-keys and the
// screen is read back with capture-pane. Our own tmux server (-L) keeps other sessions apart.
const BIN = path.join(root, 'dist/src/bin.js');
const SOCKET = `krt-triage-${process.pid}`;
const tmux = (...args: string[]) => spawnSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let questions: QuestionSet;
let dir: string;

beforeAll(async () => {
  if (!hasTool('tmux')) return;
  if (!existsSync(path.join(root, 'dist/src/commands/triage.js'))) throw new Error('dist/ is not built: run `npx tsc -p .` (npm test does it) first');
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
  dir = await tempDir('tmux');
});

afterAll(() => {
  tmux('kill-server');
});

const screen = (name: string) => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', name).stdout;
const headers = (text: string) => [...text.matchAll(/^\[([a-z0-9-]+)\] sets /gm)].map((m) => m[1]!);

async function until<T>(what: string, name: string, test: (text: string) => T | undefined, ms = 45_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const text = screen(name);
    const got = test(text);
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; screen:\n${text}`);
    await sleep(40);
  }
}

function start(name: string, file: string, opts: { status?: boolean } = {}): number {
  // exec: the pane's pid is node's, to kill it; or a shell that prints the exit status.
  const command = opts.status ? `node ${BIN} triage ${file}; echo "EXIT=$?"` : `exec node ${BIN} triage ${file}`;
  const r = tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '50', command);
  expect(r.status).toBe(0);
  // Keep the pane (and its screen) after the process ends, so the verdict can be read.
  tmux('set-option', '-t', name, 'remain-on-exit', 'on');
  return Number(tmux('display-message', '-p', '-t', name, '#{pane_pid}').stdout.trim());
}

/** Answer questions like someone holding `ref`, until the session ends or `stopAfter` answers. */
async function answer(name: string, ref: LoadedCase, stopAfter = Infinity): Promise<string[]> {
  const asked: string[] = [];
  for (;;) {
    const next = await until('the next question or the end', name, (t) => {
      const h = headers(t);
      if (h.length > asked.length && /^\? /m.test(t.slice(t.lastIndexOf(`[${h[h.length - 1]}] sets`)))) return h[h.length - 1]!;
      if (/^ {2}saved in /m.test(t)) return '';
      return undefined;
    });
    if (next === '' || asked.length >= stopAfter) return asked;
    const q = questions.byId.get(next)!;
    const a = scriptedAnswer(q, ref.data);
    if (a.pick !== undefined) {
      const index = choicesFor(q)!.findIndex((c) => c.value === a.pick);
      for (let i = 0; i < index; i++) tmux('send-keys', '-t', name, 'Down');
      tmux('send-keys', '-t', name, 'Enter');
      if (a.type !== undefined) {
        await until('the typed value prompt', name, (t) => (/^\? [a-z_.]+ \(/m.test(t.slice(t.lastIndexOf(`[${next}] sets`))) ? true : undefined));
      }
    }
    if (a.type !== undefined) {
      tmux('send-keys', '-t', name, '-l', a.type);
      tmux('send-keys', '-t', name, 'Enter');
    }
    asked.push(next);
    await until(`the answer to ${next} to be saved`, name, (t) => (new RegExp(`^ {2}saved ${q.fact.replace(/\./g, '\\.')} = `, 'm').test(t) ? true : undefined));
  }
}

function audit(file: string): { verdict: string; findings: string[] } {
  const r = spawnSync(process.execPath, [BIN, 'audit', '--format', 'json', file], { encoding: 'utf8' });
  const v = JSON.parse(r.stdout.trim().split('\n')[0]!) as { verdict: string; findings: Array<{ rule: string }> };
  return { verdict: v.verdict, findings: v.findings.map((f) => f.rule) };
}

const refFile = (id: string) => path.join(root, 'cases', id);

// Without tmux these skip and test/deps.test.ts fails with the one-line cause.
describe.skipIf(!hasTool('tmux'))('triage in a real terminal (tmux)', () => {
  it('typing the answers of a reference case shows the verdict audit gives on the saved file', async () => {
    const ref = await loadCase(refFile('kernel-notes/r8-adequate.yaml'));
    const file = path.join(dir, 'r8.yaml');
    start('full', file);
    const asked = await answer('full', ref);
    expect(asked.length).toBeGreaterThan(5);
    const text = screen('full');
    const shown = /^ {2}verdict {3}([a-z-]+)/m.exec(text)?.[1];
    expect(shown).toBe(ref.data.expected?.verdict);
    expect(audit(file).verdict).toBe(shown);
    expect(new Set(asked).size).toBe(asked.length);
    tmux('kill-session', '-t', 'full');
  }, 180_000);

  it.each([2, 7, 13])('killed (SIGKILL) after answer %i: every answer is on disk and a rerun asks only the rest', async (n) => {
    const ref = await loadCase(refFile('table/stall-after-quiesce.yaml'));
    const whole = path.join(dir, `whole-${n}.yaml`);
    start(`whole-${n}`, whole);
    const order = await answer(`whole-${n}`, ref);
    tmux('kill-session', '-t', `whole-${n}`);
    expect(order.length).toBeGreaterThan(n);

    const file = path.join(dir, `cut-${n}.yaml`);
    const pid = start(`cut-${n}`, file);
    const first = await answer(`cut-${n}`, ref, n);
    expect(first).toEqual(order.slice(0, n));
    process.kill(pid, 'SIGKILL');
    tmux('kill-session', '-t', `cut-${n}`);
    const onDisk = await loadCase(file);
    for (const id of first) {
      const fact = questions.byId.get(id)!.fact;
      expect([fact, onDisk.yaml.doc.hasIn(fact.split('.'))]).toEqual([fact, true]);
    }

    start(`rerun-${n}`, file);
    const rest = await answer(`rerun-${n}`, ref);
    expect(rest).toEqual(order.slice(n));
    const shown = /^ {2}verdict {3}([a-z-]+)/m.exec(screen(`rerun-${n}`))?.[1];
    tmux('kill-session', '-t', `rerun-${n}`);
    expect(shown).toBe(audit(whole).verdict);
    expect(audit(file)).toEqual(audit(whole));
    expect(await fs.readFile(`${file}.bak`, 'utf8')).toContain('format: kretprobe-case/v1');
  }, 240_000);

  it('Ctrl-C stops with exit 130, keeps the answers given, and the rerun resumes', async () => {
    const ref = await loadCase(refFile('kernel-notes/r8-adequate.yaml'));
    const file = path.join(dir, 'ctrl-c.yaml');
    start('ctrl-c', file, { status: true });
    const first = await answer('ctrl-c', ref, 3);
    await until('question 4', 'ctrl-c', (t) => (headers(t).length >= 4 && /^\? /m.test(t.slice(t.lastIndexOf('] sets'))) ? true : undefined));
    tmux('send-keys', '-t', 'ctrl-c', 'C-c');
    const code = await until('the process to end', 'ctrl-c', (t) => {
      const m = /^EXIT=(\d+)$/m.exec(t);
      return m ? Number(m[1]) : undefined;
    });
    expect(code).toBe(130);
    expect(screen('ctrl-c')).toMatch(/stopped: 3 answer\(s\) saved/);
    tmux('kill-session', '-t', 'ctrl-c');
    start('ctrl-c-2', file);
    const rest = await answer('ctrl-c-2', ref);
    tmux('kill-session', '-t', 'ctrl-c-2');
    expect(rest).not.toContain(first[0]);
    expect(audit(file).verdict).toBe(ref.data.expected?.verdict);
  }, 120_000);

  it('killed right after Enter: the file is the old or the new one, never a torn write', async () => {
    const ref = await loadCase(refFile('table/stall-after-quiesce.yaml'));
    const file = path.join(dir, 'torn.yaml');
    const pid = start('torn', file);
    await answer('torn', ref, 4);
    const next = await until('question 5', 'torn', (t) => (headers(t).length >= 5 && /^\? /m.test(t.slice(t.lastIndexOf('] sets'))) ? headers(t)[4] : undefined));
    const q = questions.byId.get(next)!;
    const a = scriptedAnswer(q, ref.data);
    if (a.pick === undefined) tmux('send-keys', '-t', 'torn', '-l', a.type!);
    tmux('send-keys', '-t', 'torn', 'Enter');
    process.kill(pid, 'SIGKILL');
    tmux('kill-session', '-t', 'torn');
    const onDisk = await loadCase(file);
    expect(onDisk.data.format).toBe('kretprobe-case/v1');
    const dirEntries = await fs.readdir(dir);
    expect(dirEntries.filter((e) => e.startsWith('.torn.yaml.') && e.endsWith('.tmp')).length).toBeLessThanOrEqual(1);
  }, 120_000);
});
