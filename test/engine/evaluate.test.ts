import { describe, expect, it } from 'vitest';
import { ConditionRunner } from '../../src/engine/evaluate.js';
import type { Facts, FactValue } from '../../src/facts/facts.js';
import type { Condition } from '../../src/rules/schema.js';

function factsOf(values: Record<string, FactValue | undefined>): Facts {
  const f: Facts = { values: new Map(), needs: new Map(), inputs: new Map() };
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) f.needs.set(k, [k]);
    else f.values.set(k, v);
  }
  return f;
}

const a = (v: number) => ({ fact: 'ledger.eligible', operator: 'greaterThan' as const, value: v });
const b = (v: boolean) => ({ fact: 'probe.armed', operator: 'equal' as const, value: v });

async function truth(when: Condition, values: Record<string, FactValue | undefined>) {
  const runner = new ConditionRunner([{ id: 'x', when }]);
  return (await runner.run(factsOf(values))).get('x')!;
}

// Kleene logic: unknown only where the known parts cannot decide.
describe('three-valued evaluation over json-rules-engine', () => {
  it.each([
    ['all: a false part decides, whatever is unknown', { all: [a(5), b(true)] }, { 'ledger.eligible': 1, 'probe.armed': undefined }, 'false'],
    ['all: true parts and an unknown part stay unknown', { all: [a(0), b(true)] }, { 'ledger.eligible': 1, 'probe.armed': undefined }, 'unknown'],
    ['any: a true part decides, whatever is unknown', { any: [a(0), b(true)] }, { 'ledger.eligible': 1, 'probe.armed': undefined }, 'true'],
    ['any: false parts and an unknown part stay unknown', { any: [a(5), b(true)] }, { 'ledger.eligible': 1, 'probe.armed': undefined }, 'unknown'],
    ['not of unknown is unknown', { not: b(true) }, { 'probe.armed': undefined }, 'unknown'],
    ['not of false is true', { not: b(true) }, { 'probe.armed': false }, 'true'],
    ['notEqual over an unknown fact is unknown, not true', { all: [{ fact: 'probe.armed', operator: 'notEqual', value: true }] }, { 'probe.armed': undefined }, 'unknown'],
    ['a comparison with an unknown fact on the right is unknown', { all: [{ fact: 'ledger.eligible', operator: 'greaterThan', value: { fact: 'ledger.returns' } }] }, { 'ledger.eligible': 3, 'ledger.returns': undefined }, 'unknown'],
    ['a comparison between two known facts decides', { all: [{ fact: 'ledger.eligible', operator: 'greaterThan', value: { fact: 'ledger.returns' } }] }, { 'ledger.eligible': 3, 'ledger.returns': 2 }, 'true'],
  ] as Array<[string, Condition, Record<string, FactValue | undefined>, string]>)('%s', async (_, when, values, expected) => {
    expect((await truth(when, values)).truth).toBe(expected);
  });

  it('an undecided condition names exactly the unknown facts that could decide it', async () => {
    const o = await truth({ all: [a(0), b(true), { fact: 'ledger.returns', operator: 'equal', value: 1 }] }, { 'ledger.eligible': 1, 'probe.armed': undefined, 'ledger.returns': undefined });
    expect(o.unknownFacts.sort()).toEqual(['ledger.returns', 'probe.armed']);
  });

  it('a true any keeps only the facts of the parts that made it true', async () => {
    const o = await truth({ any: [a(0), b(true)] }, { 'ledger.eligible': 4, 'probe.armed': false });
    expect(o.facts).toEqual({ 'ledger.eligible': 4 });
  });

  it('the same runner gives independent answers to consecutive cases', async () => {
    const runner = new ConditionRunner([{ id: 'x', when: { all: [a(2)] } }]);
    const [r1, r2] = await Promise.all([runner.run(factsOf({ 'ledger.eligible': 5 })), runner.run(factsOf({ 'ledger.eligible': 1 }))]);
    expect([r1.get('x')!.truth, r2.get('x')!.truth]).toEqual(['true', 'false']);
  });
});
