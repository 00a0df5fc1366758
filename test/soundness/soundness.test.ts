import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type Case, type CaseVerdict, type Rules } from '../../src/index.js';
import { BASE_FACTS, caseFacts } from '../../src/facts/facts.js';
import { getPath, setPath } from '../../src/dotted.js';
import { completion } from './completions.js';

// The soundness property of issue 9: a definite verdict is the same for every completion of its
// unknown facts, and a supported claim stays supported. Checked over every shipped case and over
// cases generated from them by forgetting known fields. The seed is fixed and printed, so a
// failure can be replayed; the counts below add up to well over 10,000 completions per run.
const SEED = 20261201;
const PER_SHIPPED = 120;
const GENERATED = 400;
const PER_GENERATED = 20;

const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
let shipped: Case[];
let completions = 0;

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  shipped = [];
  for (const f of await expandCasePaths([path.join(root, 'cases')])) shipped.push((await loadCase(f)).data);
  console.log(`soundness: fast-check seed ${SEED}`);
});

const definite = (v: CaseVerdict) => v.verdict !== 'insufficient-evidence';

async function holds(base: Case, v: CaseVerdict, done: Case): Promise<string | undefined> {
  // A completion whose miss figure contradicts its own demand or stated split is not a possible
  // world (counters.split_contradiction, issue 20 class 1).
  if (caseFacts(done).values.get('counters.split_contradiction') === true) return undefined;
  completions++;
  const w = await evaluateCase(done, rules);
  if (definite(v) && w.verdict !== v.verdict) return `${base.id}: ${v.verdict} became ${w.verdict} (possible was [${v.possible.join(', ')}])`;
  for (const [i, c] of v.claims.entries()) {
    if (c.judgement === 'supported' && w.claims[i]?.judgement !== 'supported') return `${base.id}: claim ${c.kind} supported became ${w.claims[i]?.judgement}`;
  }
  return undefined;
}

/** A shipped case with some of its known fields forgotten (set unknown). */
function forgetting(c: Case): fc.Arbitrary<Case> {
  const facts = caseFacts(c);
  const known = BASE_FACTS.map((b) => b.name).filter((n) => facts.values.has(n));
  return fc.subarray(known, { maxLength: Math.min(4, known.length) }).map((drop) => {
    const out = structuredClone(c) as unknown as Record<string, unknown>;
    for (const n of drop) if (getPath(out, n) !== undefined) setPath(out, n, 'unknown');
    delete out.expected;
    return out as unknown as Case;
  });
}

describe('soundness: a definite verdict never rests on an unknown', () => {
  it('holds for every shipped case under completions of its unknown fields', async () => {
    const failures: string[] = [];
    for (const [n, c] of shipped.entries()) {
      const v = await evaluateCase(c, rules);
      if (!definite(v) && !v.claims.some((x) => x.judgement === 'supported')) continue;
      for (const done of fc.sample(completion(c), { numRuns: PER_SHIPPED, seed: SEED + n })) {
        const bad = await holds(c, v, done);
        if (bad) failures.push(bad);
      }
    }
    expect([...new Set(failures)].slice(0, 10)).toEqual([]);
  }, 120_000);

  it('holds for cases generated from the shipped ones by forgetting fields', async () => {
    const failures: string[] = [];
    const gen = fc.integer({ min: 0, max: shipped.length - 1 }).chain((i) => forgetting(shipped[i]!));
    for (const [n, c] of fc.sample(gen, { numRuns: GENERATED, seed: SEED }).entries()) {
      const v = await evaluateCase(c, rules);
      if (!definite(v) && !v.claims.some((x) => x.judgement === 'supported')) continue;
      for (const done of fc.sample(completion(c), { numRuns: PER_GENERATED, seed: SEED + 1000 + n })) {
        const bad = await holds(c, v, done);
        if (bad) failures.push(bad);
      }
    }
    expect([...new Set(failures)].slice(0, 10)).toEqual([]);
    console.log(`soundness: ${completions} completions checked`);
    expect(completions).toBeGreaterThanOrEqual(10_000);
  }, 240_000);

  it('lists as missing only facts that are unknown, and is definite exactly when one verdict is possible', async () => {
    for (const c of shipped) {
      const v = await evaluateCase(c, rules);
      const facts = caseFacts(c);
      expect([c.id, v.missing.filter((m) => facts.values.has(m))]).toEqual([c.id, []]);
      expect([c.id, definite(v) ? v.possible : 'n/a']).toEqual([c.id, definite(v) ? [v.verdict] : 'n/a']);
    }
  });
});
