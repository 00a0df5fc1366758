import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BASE_BY_NAME, caseFacts, factsOfValues, factsWith, FACT_CATALOGUE, searchFacts, slotName, type FactValue } from '../../src/facts/facts.js';
import { domainOf } from '../../src/engine/domains.js';
import { expandCasePaths, loadCase } from '../../src/index.js';

// The search's step (one more field set on a partial completion) must give exactly what working
// the facts out from scratch gives: the same values, the same fields behind each unknown fact,
// and as `changed` exactly the facts whose value differs from the parent's.
const same = (a: FactValue | undefined, b: FactValue | undefined) => JSON.stringify(a) === JSON.stringify(b);

describe('factsWith', () => {
  it('gives the facts, needs and changes that working out the whole case gives', async () => {
    const root = path.resolve(import.meta.dirname, '../..');
    let seed = 11;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const problems: string[] = [];
    let steps = 0;
    let changedSome = 0;
    for (const file of await expandCasePaths([path.join(root, 'cases')])) {
      const given = caseFacts((await loadCase(file)).data);
      const base = [...given.values].filter(([k]) => BASE_BY_NAME.has(k)).filter(() => rand(2) === 0);
      let parent = searchFacts(factsOfValues(new Map(base)));
      const unknown = [...BASE_BY_NAME.keys()].filter((f) => !parent.values.has(f) && domainOf(f, new Map(parent.values)).length);
      // A chain of three steps, so a step's parent is itself a step.
      for (let k = 0; k < 3 && unknown.length; k++) {
        const field = unknown.splice(rand(unknown.length), 1)[0]!;
        const d = domainOf(field, new Map(parent.values));
        const value = d[rand(d.length)]!;
        const step = factsWith(parent, field, value);
        const facts = step.facts;
        const changed = step.changed.map(slotName);
        const whole = factsOfValues(new Map([...[...parent.values].filter(([n]) => BASE_BY_NAME.has(n)), [field, value]]));
        steps++;
        const names = new Set([...facts.values.keys(), ...whole.values.keys()]);
        for (const n of names) if (!same(facts.values.get(n), whole.values.get(n))) problems.push(`${file} ${field}=${JSON.stringify(value)}: ${n} is ${JSON.stringify(facts.values.get(n))}, from scratch ${JSON.stringify(whole.values.get(n))}`);
        const differs = [...FACT_CATALOGUE.keys()].filter((n) => !same(parent.values.get(n), facts.values.get(n))).sort();
        if (JSON.stringify([...changed].sort()) !== JSON.stringify(differs)) problems.push(`${file} ${field}: changed [${changed.join(', ')}], differ [${differs.join(', ')}]`);
        if (changed.length > 1) changedSome++;
        for (const n of FACT_CATALOGUE.keys()) {
          if (whole.values.has(n)) continue;
          if (JSON.stringify(facts.needs.get(n)) !== JSON.stringify(whole.needs.get(n))) problems.push(`${file} ${field}: needs of ${n} [${facts.needs.get(n)?.join(', ')}], from scratch [${whole.needs.get(n)?.join(', ')}]`);
        }
        parent = facts;
      }
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect(steps).toBeGreaterThan(300);
    // Most steps change some derived fact, so the comparison of `changed` is not vacuous.
    expect(changedSome).toBeGreaterThan(steps / 8);
  }, 120_000);
});
