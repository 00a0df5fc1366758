import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, parseCase, type LoadedCase, type Rules } from '../../src/index.js';
import { BASE_FACTS } from '../../src/facts/facts.js';
import { loadQuestions, type QuestionSet } from '../../src/triage/questions.js';
import { holds, planQuestions, remainingUnknowns } from '../../src/triage/select.js';
import { root } from './helpers.js';

let rules: Rules;
let questions: QuestionSet;
let cases: LoadedCase[];

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
  cases = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => loadCase(f)));
});

const head = 'format: kretprobe-case/v1\nid: x\n';
async function plan(body: string, all = false) {
  const c = parseCase(head + body, 'x.yaml');
  const v = await evaluateCase(c, rules);
  return { v, p: await planQuestions(c.data, v, rules, questions, { all }) };
}

const regOk = 'probe: { target: pipe_read, interface: tracefs, registration: { result: ok }, armed: true }\ncoverage: { blacklisted: false }\n';

describe('next question', () => {
  it.each([
    ['a new case: the target first', '', 'target'],
    ['target known: how the probe was made (setup failure comes first)', 'probe: { target: pipe_read }\n', 'interface'],
    ['interface known: did registration succeed', 'probe: { target: pipe_read, interface: tracefs }\n', 'registration-result'],
    ['registration ok: was the probe live', 'probe: { target: pipe_read, registration: { result: ok } }\n', 'armed'],
    ['armed known: is the target blacklisted (a setup failure that applies only once known)', 'probe: { target: pipe_read, registration: { result: ok }, armed: true }\n', 'blacklisted'],
    ['armed asked and unknown: records can still prove it live (the return hits)', 'probe: { target: pipe_read, registration: { result: ok }, armed: unknown }\ncoverage: { blacklisted: false }\n', 'end-hits'],
    ['armed unknown but returns recorded: move on to the counters', 'probe: { target: pipe_read, registration: { result: ok }, armed: unknown }\ncoverage: { blacklisted: false }\nledger: { returns: 2 }\n', 'start-epoch'],
    ['setup excluded: the counters (capacity-missed) before the ledger', regOk, 'start-epoch'],
    ['epochs known: the miss counters', `${regOk}counters: { start: { epoch: a }, end: { epoch: a } }\n`, 'start-nmissed'],
    ['counters level: entry records and an entry probe\'s hits could still show misses', `${regOk}counters: { start: { epoch: a, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 0, kprobe_nmissed: 0 } }\n`, 'entries'],
    ['counters level, no entry probe: the independent ledger', `${regOk}counters: { start: { epoch: a, nmissed: 0, kprobe_nmissed: 0 }, end: { epoch: a, nmissed: 0, kprobe_nmissed: 0 } }\nledger: { entry_events: unknown }\n`, 'unusual-return'],
  ])('%s', async (_name, body, id) => {
    const { p } = await plan(body);
    expect(p.next?.id).toBe(id);
  });
});

describe('questions that cannot change anything are skipped', () => {
  it('a rejected registration ends the questions: nothing about counters matters', async () => {
    const { v, p } = await plan('probe: { target: nosuch, registration: { result: ENOENT } }\n');
    expect(v.verdict).toBe('setup-failure');
    expect(p.next).toBeUndefined();
    const skipped = p.skipped.map((q) => q.id);
    for (const id of ['start-nmissed', 'end-nmissed', 'eligible', 'workload-quiesced', 'armed']) expect(skipped).toContain(id);
  });

  it('a miss counter that rose within one epoch: only what could still prove a setup failure is left', async () => {
    const { v, p } = await plan(`${regOk.replace('coverage: { blacklisted: false }\n', '')}counters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\n`);
    expect(v.verdict).toBe('capacity-missed');
    // scope/blacklisted-target applies only once coverage.blacklisted is known; it would win.
    expect(p.next?.id).toBe('blacklisted');
    const after = await plan(`${regOk}counters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\n`);
    expect(after.p.next).toBeUndefined();
    expect(after.p.skipped.map((q) => q.id)).toEqual(expect.arrayContaining(['workload-quiesced', 'eligible', 'entry-events']));
  });

  it('capacity-missed with setup still open asks only what could establish a setup failure', async () => {
    const { v, p } = await plan('probe: { target: pipe_read }\ncounters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\n');
    expect(v.verdict).toBe('capacity-missed');
    const open = p.facts.filter((f) => !f.held).map((f) => f.question?.id);
    expect(open).toContain('registration-result');
    expect(open).not.toContain('eligible');
    expect(p.facts.every((f) => f.held || f.rank <= 0)).toBe(true);
  });

  it('warnings wait for --all: handler questions are skipped by default and asked with it', async () => {
    const settled = `${regOk}counters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\n`;
    const without = await plan(settled);
    expect(without.p.skipped.map((q) => q.id)).toContain('handler-heavy-printk');
    const withAll = await plan(settled, true);
    expect(withAll.p.next).toBeDefined();
    expect(withAll.p.facts.map((f) => f.question?.id)).toContain('handler-heavy-printk');
    expect(withAll.p.facts.find((f) => f.question?.id === 'handler-heavy-printk')?.reason).toBe('warning');
  });

  it('an undecided claim judgement is worth asking about: latency claims need the latency facts', async () => {
    const settled = `${regOk}counters: { start: { epoch: a, nmissed: 0 }, end: { epoch: a, nmissed: 1 } }\nclaims: [{ kind: latency-representative }]\n`;
    const { p } = await plan(settled);
    const claimFacts = p.facts.filter((f) => f.reason === 'claim').map((f) => f.fact);
    expect(claimFacts).toContain('latency.from');
    expect(p.next?.fact).toBe('latency.from');
  });
});

describe('remaining unknowns', () => {
  it('lists what was answered unknown, each with its question', async () => {
    const { p } = await plan('probe: { target: pipe_read, interface: unknown, registration: { result: unknown }, armed: unknown, maxactive: { requested: unknown } }\n');
    const rest = remainingUnknowns(p).map((f) => f.question?.id);
    expect(rest.slice(0, 5)).toEqual(['interface', 'registration-result', 'armed', 'blacklisted', 'maxactive-requested']);
  });
});

describe('never asks for a fact the case holds', () => {
  it('for any part of any reference case, with or without --all', async () => {
    const names = BASE_FACTS.map((f) => f.name);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 1000 }), fc.array(fc.nat({ max: 2 }), { minLength: names.length, maxLength: names.length }), fc.boolean(), async (i, mode, all) => {
        const ref = cases[i % cases.length]!;
        const doc = ref.yaml.doc.clone();
        // 0: drop the field, 1: keep it, 2: mark it asked-but-unknown.
        names.forEach((n, j) => {
          const keys = n.split('.');
          if (!doc.hasIn(keys)) return;
          if (mode[j] === 0) doc.deleteIn(keys);
          else if (mode[j] === 2) doc.setIn(keys, 'unknown');
        });
        const partial = parseCase(doc.toString(), ref.file);
        const v = await evaluateCase(partial, rules);
        const p = await planQuestions(partial.data, v, rules, questions, { all });
        if (p.next) expect([p.next.fact, holds(partial.data, p.next.fact)]).toEqual([p.next.fact, false]);
        else expect(p.facts.filter((f) => !f.held && f.question)).toEqual([]);
      }),
      { numRuns: 200, seed: 7 },
    );
  });
});
