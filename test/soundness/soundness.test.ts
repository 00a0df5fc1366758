import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type Case, type Rules } from '../../src/index.js';
import { caseFacts } from '../../src/facts/facts.js';

// The soundness property of issue 9 completed unknown fields the way the derivations do and
// checked the engine against itself; issue 20 replaces it with the oracle in test/oracle/, which
// shares none of the engine's machinery. What stays here is the shape of every shipped verdict.

const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
let shipped: Case[];

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  shipped = [];
  for (const f of await expandCasePaths([path.join(root, 'cases')])) shipped.push((await loadCase(f)).data);
}, 300_000);

describe('the shape of a verdict', () => {
  it('lists as missing only facts that are unknown (or set aside by a contradiction), and is definite exactly when one verdict is possible', async () => {
    for (const c of shipped) {
      const v = await evaluateCase(c, rules);
      const facts = caseFacts(c);
      const known = v.contradictions.length ? [] : v.missing.filter((m) => facts.values.has(m));
      expect([c.id, known]).toEqual([c.id, []]);
      expect([c.id, v.possible.length === 1 ? v.verdict : 'n/a']).toEqual([c.id, v.possible.length === 1 ? v.possible[0] : 'n/a']);
      expect([c.id, v.possible.length > 1 ? v.verdict : 'definite']).toEqual([c.id, v.possible.length > 1 ? 'insufficient-evidence' : 'definite']);
    }
  }, 300_000);

  it('judges definite every shipped case whose expected verdict is definite', async () => {
    const files = await expandCasePaths([path.join(root, 'cases')]);
    const indefinite: string[] = [];
    for (const f of files) {
      const c = await loadCase(f);
      const want = c.data.expected?.verdict;
      if (!want || want === 'insufficient-evidence') continue;
      const v = await evaluateCase(c, rules);
      if (v.possible.length !== 1) indefinite.push(c.data.id);
    }
    expect(indefinite).toEqual([]);
  }, 300_000);
});
