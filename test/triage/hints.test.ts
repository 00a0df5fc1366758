import { promises as fs } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import type { Io } from '../../src/io.js';
import { byCollectable, collectFor, type QuestionSet } from '../../src/triage/question-set.js';
import { evaluateCase, loadCase, loadRules } from '../../src/index.js';
import { defaultQuestionsDir, loadQuestions } from '../../src/triage/questions.js';
import { root, tempDir } from './helpers.js';

// After "bpftrace" or "BPF link" is answered, no command the tool suggests may read tracefs'
// kprobe files or event ids, or a module's kprobe nmissed: those interfaces have none of them.
const TRACEFS_ONLY = /kprobe_profile|kprobe_events|kprobe_nmissed|tracing\/events\/|\/id\b/;
/** The command lines of a hint: not the comments, not "none possible: why". */
const commands = (text: string) => text.split('\n').filter((l) => !/^\s*(?:#|\$?\s*none possible:)/.test(l)).map((l) => l.replace(/\s#.*$/, ''));

let questions: QuestionSet;
beforeAll(async () => {
  questions = await loadQuestions(defaultQuestionsDir());
});

describe('collection hints follow the interface answered', () => {
  it.each([['bpftrace'], ['bpf-link']])('%s: no question suggests a tracefs or module counter', (iface) => {
    const offenders = questions.list
      .filter((q) => q.fact !== 'probe.interface')
      .flatMap((q) => commands(collectFor(q, { probe: { interface: iface } })).filter((l) => TRACEFS_ONLY.test(l)).map((l) => `${q.id}: ${l.trim()}`));
    expect(offenders).toEqual([]);
  });

  it('tracefs still gets the tracefs commands (the check above can fail)', () => {
    const q = questions.byFact.get('counters.event')!;
    expect(commands(collectFor(q, { probe: { interface: 'tracefs' } })).some((l) => TRACEFS_ONLY.test(l))).toBe(true);
  });

  it('triage --answers with bpftrace: the end report suggests no tracefs command', async () => {
    const dir = await tempDir('bpftrace-hints');
    const answers = path.join(dir, 'a.yaml');
    await fs.writeFile(answers, 'probe.target: vfs_read\nprobe.interface: bpftrace\nprobe.registration.result: ok\n');
    let out = '';
    const io = { stdout: (s: string) => { out += s; }, stderr: () => {}, cwd: dir, env: {}, color: false, isTTY: false, stdin: process.stdin } as unknown as Io;
    const code = await main(['triage', path.join(dir, 'c.yaml'), '--answers', answers], io);
    expect(code).not.toBe(2);
    const suggested = out.split('\n').filter((l) => /^ {6}\$ /.test(l)).map((l) => l.replace(/^ {6}\$ /, ''));
    expect(suggested.length).toBeGreaterThan(3);
    expect(commands(suggested.join('\n')).filter((l) => TRACEFS_ONLY.test(l))).toEqual([]);
  });
});

describe('next names only what this probe interface can give', () => {
  it('byCollectable keeps the order and moves the facts an interface has no way to give apart', () => {
    const facts = ['counters.start.kprobe_nmissed', 'ledger.eligible', 'counters.end.kprobe_nmissed', 'not.a.question'];
    // tracefs: kprobe_profile shows one miss column, never the kprobe's own count apart.
    expect(byCollectable(facts, questions, { probe: { interface: 'tracefs' } })).toEqual({ can: ['ledger.eligible', 'not.a.question'], cannot: ['counters.start.kprobe_nmissed', 'counters.end.kprobe_nmissed'] });
    // A module reads its struct's fields apart.
    expect(byCollectable(facts, questions, { probe: { interface: 'module' } })).toEqual({ can: facts, cannot: [] });
    expect(byCollectable(facts, undefined, { probe: { interface: 'tracefs' } })).toEqual({ can: facts, cannot: [] });
  });

  // A tracefs case whose two most decisive facts are the kprobe's own miss counts: next used to
  // tell the user to collect them, while the hint beside it said there is no way.
  it('a tracefs case: next skips the kprobe miss counts that decide most, missing lists them last', async () => {
    const rules = await loadRules();
    const v = await evaluateCase(await loadCase(path.join(root, 'cases/exact/c1-summed-rise-unsplit.yaml')), rules);
    expect(v.decides.slice(0, 2).sort()).toEqual(['counters.end.kprobe_nmissed', 'counters.start.kprobe_nmissed']);
    expect(v.next).toMatch(/^Collect /);
    expect(v.next).not.toMatch(/kprobe_nmissed/);
    expect(v.next).toMatch(/2 of them this probe's interface cannot give/);
    expect(v.missing.slice(-2).sort()).toEqual(['counters.end.kprobe_nmissed', 'counters.start.kprobe_nmissed']);
    expect([...v.missing].sort()).toEqual([...v.decides].sort());
  });
});
