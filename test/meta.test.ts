import { promises as fs } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type CaseVerdict, type LoadedCase, type Rules } from '../src/index.js';
import { SEED_SECTIONS } from '../src/rules/seed.js';

// Walks everything shipped in rules/ and cases/: each file parses, ids are unique and match
// their paths, every rule both fires and stays quiet somewhere, every reference case holds.
const root = path.resolve(import.meta.dirname, '..');
let rules: Rules;
let cases: Array<{ loaded: LoadedCase; verdict: CaseVerdict }>;

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  const files = await expandCasePaths([path.join(root, 'cases')]);
  cases = [];
  for (const file of files) {
    const loaded = await loadCase(file);
    cases.push({ loaded, verdict: await evaluateCase(loaded, rules) });
  }
}, 300_000);

describe('shipped rules', () => {
  it('cover every section of the article', () => {
    const folders = new Set(rules.set.rules.map((r) => r.spec.id.split('/')[0]));
    for (const folder of Object.keys(SEED_SECTIONS)) expect([folder, folders.has(folder)]).toEqual([folder, true]);
  });

  it('have ids equal to their paths, and unique', async () => {
    const ids = [...rules.set.rules, ...rules.set.claims].map((r) => r.spec.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of [...rules.set.rules, ...rules.set.claims]) {
      expect(path.relative(path.join(root, 'rules'), r.file).replace(/\\/g, '/')).toBe(`${r.spec.id}.yaml`);
    }
  });

  it('each fire in at least one shipped case and stay quiet in at least one', () => {
    for (const r of rules.set.rules) {
      const firing = cases.filter((c) => c.verdict.findings.some((f) => f.rule === r.spec.id)).length;
      expect([r.spec.id, firing > 0, firing < cases.length]).toEqual([r.spec.id, true, true]);
    }
  });

  it('judge every claim kind, and every judgement a claim rule can give appears in some case', () => {
    for (const r of rules.set.claims) {
      const given = new Set(cases.flatMap((c) => c.verdict.claims.filter((x) => x.rule === r.spec.id).map((x) => x.judgement)));
      const possible = new Set([...r.spec.judge.map((j) => j.judgement), r.spec.otherwise.judgement]);
      for (const j of possible) expect([r.spec.id, j, given.has(j)]).toEqual([r.spec.id, j, true]);
    }
  });
});

describe('shipped cases', () => {
  it('have unique ids and an expected: block each', () => {
    const ids = cases.map((c) => c.loaded.data.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const c of cases) expect([c.loaded.data.id, c.loaded.data.expected !== undefined]).toEqual([c.loaded.data.id, true]);
  });

  it('cover every verdict of the vocabulary', async () => {
    const { VERDICTS } = await import('../src/case/schema.js');
    const seen = new Set(cases.map((c) => c.verdict.verdict));
    for (const v of VERDICTS) expect([v, seen.has(v)]).toEqual([v, true]);
  });

  it('each get what they expect', () => {
    for (const c of cases) expect([c.loaded.data.id, c.verdict.expected?.problems ?? []]).toEqual([c.loaded.data.id, []]);
  });

  it('do not expect rules that do not exist', () => {
    const known = new Set([...rules.set.rules, ...rules.set.constraints].map((r) => r.spec.id));
    for (const c of cases) for (const r of c.loaded.data.expected?.rules ?? []) expect([c.loaded.data.id, r, known.has(r)]).toEqual([c.loaded.data.id, r, true]);
  });

  it('include one for each lab scenario of kernel-notes.md', async () => {
    const dir = await fs.readdir(path.join(root, 'cases', 'kernel-notes'));
    expect(dir.sort()).toEqual(['counters-kept-across-runs.yaml', 'r2-constrained.yaml', 'r8-adequate.yaml', 'r8-capture-stopped.yaml']);
  });
});

describe('shipped write-ups (cases/writeups, judged like cases through src/writeup)', () => {
  it('each get what their sidecar expects, with ids unique among all cases', async () => {
    const { judgeWriteup, loadLexicon, loadWriteup } = await import('../src/writeup/index.js');
    const { expandInputs } = await import('../src/audit/inputs.js');
    const lex = await loadLexicon(path.join(root, 'rules'));
    const entries: Array<{ file: string }> = [];
    // cases/writeups/real holds real threads scored against an expert's expectations, not
    // sidecars (test/writeup/corpus.test.ts).
    for await (const ref of expandInputs([path.join(root, 'cases')], { cwd: root, exclude: ['cases/writeups/real'] })) if (!(ref instanceof Error) && ref.kind === 'writeup') entries.push(ref);
    expect(entries.length).toBeGreaterThanOrEqual(15);
    const ids = new Set(cases.map((c) => c.loaded.data.id));
    for (const e of entries) {
      const { extraction, sidecar } = await loadWriteup(e.file, lex);
      const v = await judgeWriteup(extraction, rules, lex, sidecar);
      expect([e.file, sidecar !== undefined, v.expected?.problems ?? ['no expectations']]).toEqual([e.file, true, []]);
      expect([e.file, ids.has(v.id)]).toEqual([e.file, false]);
      ids.add(v.id);
    }
  });
});
