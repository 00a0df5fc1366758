import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseFacts, factsOfValues } from '../../src/facts/facts.js';
import { slotCondition, truth3, truthAt, truthOf, unknownFactsOf, unknownSlotsAt } from '../../src/engine/evaluate.js';
import { expandCasePaths, loadCase, loadRules } from '../../src/index.js';
import { BASE_BY_NAME, searchFacts, slotName, slotOf } from '../../src/facts/facts.js';

// The search's lean evaluators (src/verdict/worlds.ts) must give what truthOf gives: truth3 its
// truth, unknownFactsOf its unknown facts in its order, on every rule and constraint, over every
// shipped case and over the same cases with some known fields forgotten (so that conditions are
// left unknown in many ways). Their forms over slots (truthAt, unknownFactsAt: the search reads
// facts by place) must give the same again, on conditions whose every fact has a place.
describe('truth3 and unknownFactsOf agree with truthOf', () => {
  it('on every condition of the rules, over the shipped cases and partial copies of them', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    const rules = await loadRules(path.join(root, 'rules'));
    const conditions = [...rules.set.rules.map((r) => r.spec.when), ...rules.set.constraints.map((k) => k.spec.broken_when)];
    const slotted = conditions.map((c) => slotCondition(c, slotOf));
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    let unknown = 0;
    let compared = 0;
    const mismatches: string[] = [];
    for (const file of await expandCasePaths([path.join(root, 'cases')])) {
      const given = caseFacts((await loadCase(file)).data);
      const base = [...given.values].filter(([k]) => BASE_BY_NAME.has(k));
      const variants = [given, ...[1, 2, 3].map(() => factsOfValues(new Map(base.filter(() => rand(3) !== 0))))];
      for (const facts of variants) {
        const slots = searchFacts(facts).values.slots;
        for (const [i, c] of conditions.entries()) {
          const o = truthOf(c, facts.values);
          const t = truth3(c, facts.values);
          const at = truthAt(slotted[i]!, slots);
          compared++;
          if (t !== o.truth) mismatches.push(`${file}: truth3 ${t}, truthOf ${o.truth}`);
          if (at !== o.truth) mismatches.push(`${file}: truthAt ${at}, truthOf ${o.truth}`);
          if (t !== 'unknown') continue;
          unknown++;
          const lean = unknownFactsOf(c, facts.values);
          if (JSON.stringify(lean) !== JSON.stringify(o.unknownFacts)) mismatches.push(`${file}: unknownFactsOf [${lean.join(', ')}], truthOf [${o.unknownFacts.join(', ')}]`);
          const leanAt = unknownSlotsAt(slotted[i]!, slots).map(slotName);
          if (JSON.stringify(leanAt) !== JSON.stringify(o.unknownFacts)) mismatches.push(`${file}: unknownSlotsAt [${leanAt.join(', ')}], truthOf [${o.unknownFacts.join(', ')}]`);
        }
      }
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    // The comparison ran over many unknown conditions, not only decided ones.
    expect(unknown).toBeGreaterThan(compared / 10);
  }, 120_000);
});
