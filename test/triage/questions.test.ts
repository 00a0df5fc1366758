import { promises as fs } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { expandCasePaths, loadCase, loadRules, evaluateCase, parseCase, type LoadedCase, type Rules } from '../../src/index.js';
import { BASE_FACTS, caseFacts, FACT_CATALOGUE } from '../../src/facts/facts.js';
import { factsOf } from '../../src/engine/evaluate.js';
import { InputError } from '../../src/errors.js';
import { SEED_SECTIONS } from '../../src/rules/seed.js';
import { loadQuestions, parseQuestionFile, type QuestionSet } from '../../src/triage/questions.js';
import { planQuestions } from '../../src/triage/select.js';
import { root } from './helpers.js';

let rules: Rules;
let questions: QuestionSet;
let cases: LoadedCase[];
const BASE = new Set(BASE_FACTS.map((f) => f.name));

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  questions = await loadQuestions(path.join(root, 'rules', 'questions'));
  cases = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => loadCase(f)));
});

/** Case fields a fact name stands for: itself, or what a derived fact is computed from. */
function caseFieldsOf(name: string): string[] {
  if (BASE.has(name)) return [name];
  const empty = caseFacts({ format: 'kretprobe-case/v1', id: 'x' });
  return [...new Set([...(empty.needs.get(name) ?? []), ...(empty.inputs.get(name) ?? [])])].filter((n) => BASE.has(n));
}

describe('shipped questions', () => {
  it('follow the article: one file per seed section, named after its folder', async () => {
    const files = (await fs.readdir(path.join(root, 'rules', 'questions'))).filter((f) => f.endsWith('.yaml'));
    for (const f of files) expect(Object.keys(SEED_SECTIONS)).toContain(f.replace(/\.yaml$/, ''));
    expect(new Set(questions.list.map((q) => q.file)).size).toBe(files.length);
  });

  it('set a case field of the catalogue each, with unique ids and one question per field', () => {
    for (const q of questions.list) {
      const entry = FACT_CATALOGUE.get(q.fact);
      expect([q.id, entry !== undefined && !entry.derived]).toEqual([q.id, true]);
    }
    expect(new Set(questions.list.map((q) => q.id)).size).toBe(questions.list.length);
    expect(new Set(questions.list.map((q) => q.fact)).size).toBe(questions.list.length);
  });

  it('say how to collect every answer, and cite a seed section or kernel fact', () => {
    for (const q of questions.list) {
      expect([q.id, q.collect.length > 0, q.why.length > 0]).toEqual([q.id, true, true]);
      expect([q.id, Object.values(SEED_SECTIONS).includes(q.source as never) || /^kernel-(facts|notes|history)\.md/.test(q.source)]).toEqual([q.id, true]);
    }
  });

  it('cover every case field a rule reads, directly or through a derived fact', () => {
    const read = new Set<string>();
    for (const r of rules.set.rules) {
      for (const f of [...factsOf(r.spec.when), ...(r.spec.requires ?? [])]) for (const c of caseFieldsOf(f)) read.add(c);
    }
    for (const r of rules.set.claims) for (const j of r.spec.judge) for (const f of factsOf(j.when)) for (const c of caseFieldsOf(f)) read.add(c);
    expect(read.size).toBeGreaterThan(20);
    const unasked = [...read].filter((f) => !questions.byFact.has(f)).sort();
    expect(unasked).toEqual([]);
  });

  it('can ask about everything an evaluation reports missing, for any part of any reference case', async () => {
    // Property: drop a random subset of a reference case's fields; whatever the verdict then says
    // is missing (and what undecided rules need) has a question.
    const leaves = (c: LoadedCase) => BASE_FACTS.map((f) => f.name).filter((n) => n.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], c.data) !== undefined);
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: cases.length - 1 }), fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }), async (i, keep) => {
        const ref = cases[i]!;
        const updates: Record<string, unknown> = {};
        leaves(ref).forEach((name, j) => { if (!keep[j]) updates[name] = undefined; });
        const doc = ref.yaml.doc.clone();
        for (const [k] of Object.entries(updates)) doc.deleteIn(k.split('.'));
        const partial = parseCase(doc.toString(), ref.file);
        const v = await evaluateCase(partial, rules);
        const asked = [...v.missing, ...v.undecided.flatMap((u) => u.needs)].filter((n) => BASE.has(n));
        expect(asked.filter((n) => !questions.byFact.has(n))).toEqual([]);
        const plan = await planQuestions(partial.data, v, rules, questions, { all: true });
        expect(plan.facts.filter((p) => !p.question).map((p) => p.fact)).toEqual([]);
      }),
      { numRuns: 150, seed: 3 },
    );
  }, 120_000); // 150 partial cases, each searched over its completions: ~30 s on a loaded 2-core machine
});

describe('parseQuestionFile', () => {
  const good = `section: Establish the probe’s actual scope
questions:
  - id: armed
    fact: probe.armed
    ask: Was the probe live on {probe.target}?
    why: A disabled probe records nothing.
    collect: grep -w '{probe.target}' /sys/kernel/debug/kprobes/list
    answer: { type: boolean }
`;
  it('reads a valid file', () => {
    const [q] = parseQuestionFile(good, 'scope.yaml');
    expect(q).toMatchObject({ id: 'armed', fact: 'probe.armed', answer: { type: 'boolean' }, source: 'Establish the probe’s actual scope', line: 3 });
  });

  it.each([
    ['a fact that is no case field', good.replace('fact: probe.armed', 'fact: probe.armd'), 4, 11, 'probe.armd'],
    ['a derived fact', good.replace('fact: probe.armed', 'fact: probe.was_armed'), 4, 11, 'probe.was_armed'],
    ['an answer type that does not fit the fact', good.replace('type: boolean', 'type: count'), 8, 21, 'count'],
    ['a placeholder naming no field', good.replace('{probe.target}?', '{probe.targt}?'), 5, 10, '{probe.targt}'],
    ['an unknown key', good.replace('    answer:', '    answr: x\n    answer:'), 8, 5, 'answr'],
    ['a section that is not the file\'s', good.replace('section: Establish the probe’s actual scope', 'section: Build an independent operation ledger'), 1, 10, 'Build an independent operation ledger'],
    ['choice values other than the fact takes', good.replace('fact: probe.armed', 'fact: probe.interface').replace('{ type: boolean }', '{ type: choice, values: [module, tracefs] }'), 8, 37, 'module, tracefs'],
  ])('rejects %s with its position', (_name, text, line, col, got) => {
    let err: unknown;
    try {
      parseQuestionFile(text, 'scope.yaml', 'rules/questions/scope.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    const e = err as InputError;
    expect([e.file, e.line, e.col]).toEqual(['rules/questions/scope.yaml', line, col]);
    expect(e.message).toMatch(/^rules\/questions\/scope\.yaml:\d+:\d+: expected .*; got /);
    expect(e.got).toContain(got);
  });

  it('refuses a file named after no seed section', () => {
    expect(() => parseQuestionFile(good, 'misc.yaml')).toThrow(/named after a seed section/);
  });
});
