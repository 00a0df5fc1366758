import { spawnSync } from 'node:child_process';
import { promises as fs, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCase, type LoadedCase } from '../../src/index.js';
import { choicesFor } from '../../src/triage/answer.js';
import { loadQuestions, type QuestionSet } from '../../src/triage/questions.js';
import { root, scriptedAnswer, tempDir } from './helpers.js';
import { hasTool } from '../support/tools.js';

// A real terminal: the built CLI runs in a tmux pane, keys are typed with send-keys and the
// screen is read back with capture-pane.
//
// Every session gets its own private tmux server, on its own socket (-S) in this file's temp
// directory, and the test waits for that server to be gone before it goes on. One shared server
// raced: killing a test's last session makes the server exit (exit-empty), and a `new-session`
// sent while it was still shutting down reached the dying server and returned 1. A fresh socket
// per session cannot meet a server on its way out, and `stop` waits for the server's process to
// exit (then removes the socket tmux leaves behind), so no server outlives its test.
const BIN = path.join(root, 'dist/src/bin.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let socketDir = '';
const socketOf = (name: string) => path.join(socketDir, name);
const tmux = (name: string, ...args: string[]) => spawnSync('tmux', ['-S', socketOf(name), ...args], { encoding: 'utf8' });
/** Each started session's server pid. */
const started = new Map<string, number>();
/** Whether the process runs; a zombie (exited, not yet reaped by init) does not. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

/** Runs a tmux command that must succeed; on failure throws with tmux's own stderr. */
function tmuxOk(name: string, ...args: string[]): string {
  const r = tmux(name, ...args);
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} (session ${name}) exited ${r.status ?? r.signal}: ${r.stderr.trim() || '(no stderr)'}`);
  return r.stdout;
}

/** Waits until `ok()` holds, or throws naming `what`. */
async function waitFor(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Stops the session's private server, waits until its process is gone, removes its socket. */
async function stop(name: string): Promise<void> {
  const pid = started.get(name);
  if (pid === undefined) return;
  started.delete(name);
  tmux(name, 'kill-server');
  await waitFor(`the tmux server of ${name} (pid ${pid}) to exit`, () => !alive(pid));
  // tmux leaves its socket file behind; nothing listens on it any more.
  await fs.rm(socketOf(name), { force: true });
}

let questions: QuestionSet;
let dir: string;

beforeAll(async () => {
  if (!hasTool('tmux')) return;
  if (!existsSync(path.join(root, 'dist/src/commands/triage.js'))) throw new Error('dist/ is not built: run `npx tsc -p .` (npm test does it) first');
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
  dir = await tempDir('tmux');
  // A short directory of its own: a socket path must fit in sun_path (108 bytes).
  socketDir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-tmux-'));
});

afterAll(async () => {
  for (const name of [...started.keys()]) await stop(name);
  if (socketDir) await fs.rm(socketDir, { recursive: true, force: true });
});

const screen = (name: string) => tmuxOk(name, 'capture-pane', '-p', '-J', '-S', '-', '-t', name);
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

async function start(name: string, file: string, opts: { status?: boolean } = {}): Promise<number> {
  if (started.has(name)) throw new Error(`session ${name} started twice`);
  // exec: the pane's pid is node's, to kill it; or a shell that prints the exit status.
  const command = opts.status ? `node ${BIN} triage ${file}; echo "EXIT=$?"` : `exec node ${BIN} triage ${file}`;
  // The server starts with remain-on-exit already set (one command line, `;` separated), so the
  // pane and its screen stay after the process ends, however quickly that is.
  if (existsSync(socketOf(name))) throw new Error(`socket of ${name} exists before its server starts`);
  tmuxOk(name, 'new-session', '-d', '-s', name, '-x', '160', '-y', '50', command, ';', 'set-option', '-t', name, 'remain-on-exit', 'on');
  const [server, pane] = tmuxOk(name, 'display-message', '-p', '-t', name, '#{pid} #{pane_pid}').trim().split(' ').map(Number);
  started.set(name, server!);
  return pane!;
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
      for (let i = 0; i < index; i++) tmuxOk(name, 'send-keys', '-t', name, 'Down');
      tmuxOk(name, 'send-keys', '-t', name, 'Enter');
      if (a.type !== undefined) {
        await until('the typed value prompt', name, (t) => (/^\? [a-z_.]+ \(/m.test(t.slice(t.lastIndexOf(`[${next}] sets`))) ? true : undefined));
      }
    }
    if (a.type !== undefined) {
      tmuxOk(name, 'send-keys', '-t', name, '-l', a.type);
      tmuxOk(name, 'send-keys', '-t', name, 'Enter');
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
    await start('full', file);
    const asked = await answer('full', ref);
    expect(asked.length).toBeGreaterThan(5);
    const text = screen('full');
    const shown = /^ {2}verdict {3}([a-z-]+)/m.exec(text)?.[1];
    expect(shown).toBe(ref.data.expected?.verdict);
    expect(audit(file).verdict).toBe(shown);
    expect(new Set(asked).size).toBe(asked.length);
    await stop('full');
  }, 180_000);

  it.each([2, 7, 13])('killed (SIGKILL) after answer %i: every answer is on disk and a rerun asks only the rest', async (n) => {
    const ref = await loadCase(refFile('table/stall-after-quiesce.yaml'));
    const whole = path.join(dir, `whole-${n}.yaml`);
    await start(`whole-${n}`, whole);
    const order = await answer(`whole-${n}`, ref);
    await stop(`whole-${n}`);
    expect(order.length).toBeGreaterThan(n);

    const file = path.join(dir, `cut-${n}.yaml`);
    const pid = await start(`cut-${n}`, file);
    const first = await answer(`cut-${n}`, ref, n);
    expect(first).toEqual(order.slice(0, n));
    process.kill(pid, 'SIGKILL');
    await stop(`cut-${n}`);
    const onDisk = await loadCase(file);
    for (const id of first) {
      const fact = questions.byId.get(id)!.fact;
      expect([fact, onDisk.yaml.doc.hasIn(fact.split('.'))]).toEqual([fact, true]);
    }

    await start(`rerun-${n}`, file);
    const rest = await answer(`rerun-${n}`, ref);
    expect(rest).toEqual(order.slice(n));
    const shown = /^ {2}verdict {3}([a-z-]+)/m.exec(screen(`rerun-${n}`))?.[1];
    await stop(`rerun-${n}`);
    expect(shown).toBe(audit(whole).verdict);
    expect(audit(file)).toEqual(audit(whole));
    expect(await fs.readFile(`${file}.bak`, 'utf8')).toContain('format: kretprobe-case/v1');
  }, 240_000);

  it('Ctrl-C stops with exit 130, keeps the answers given, and the rerun resumes', async () => {
    const ref = await loadCase(refFile('kernel-notes/r8-adequate.yaml'));
    const file = path.join(dir, 'ctrl-c.yaml');
    await start('ctrl-c', file, { status: true });
    const first = await answer('ctrl-c', ref, 3);
    await until('question 4', 'ctrl-c', (t) => (headers(t).length >= 4 && /^\? /m.test(t.slice(t.lastIndexOf('] sets'))) ? true : undefined));
    tmuxOk('ctrl-c', 'send-keys', '-t', 'ctrl-c', 'C-c');
    const code = await until('the process to end', 'ctrl-c', (t) => {
      const m = /^EXIT=(\d+)$/m.exec(t);
      return m ? Number(m[1]) : undefined;
    });
    expect(code).toBe(130);
    expect(screen('ctrl-c')).toMatch(/stopped: 3 answer\(s\) saved/);
    await stop('ctrl-c');
    await start('ctrl-c-2', file);
    const rest = await answer('ctrl-c-2', ref);
    await stop('ctrl-c-2');
    expect(rest).not.toContain(first[0]);
    expect(audit(file).verdict).toBe(ref.data.expected?.verdict);
  }, 120_000);

  it('killed right after Enter: the file is the old or the new one, never a torn write', async () => {
    const ref = await loadCase(refFile('table/stall-after-quiesce.yaml'));
    const file = path.join(dir, 'torn.yaml');
    const pid = await start('torn', file);
    await answer('torn', ref, 4);
    const next = await until('question 5', 'torn', (t) => (headers(t).length >= 5 && /^\? /m.test(t.slice(t.lastIndexOf('] sets'))) ? headers(t)[4] : undefined));
    const q = questions.byId.get(next)!;
    const a = scriptedAnswer(q, ref.data);
    if (a.pick === undefined) tmuxOk('torn', 'send-keys', '-t', 'torn', '-l', a.type!);
    tmuxOk('torn', 'send-keys', '-t', 'torn', 'Enter');
    process.kill(pid, 'SIGKILL');
    await stop('torn');
    const onDisk = await loadCase(file);
    expect(onDisk.data.format).toBe('kretprobe-case/v1');
    const dirEntries = await fs.readdir(dir);
    expect(dirEntries.filter((e) => e.startsWith('.torn.yaml.') && e.endsWith('.tmp')).length).toBeLessThanOrEqual(1);
  }, 120_000);
});
