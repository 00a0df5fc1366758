import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { families, runFamily } from '../../scripts/fuzz-lib.js';
import { loadQuestions } from '../../src/triage/questions.js';

/**
 * ≥ 10,000 mutated inputs per parser family, in-process, with a fixed seed (printed, so a
 * failure reproduces with `node dist/scripts/fuzz.js --count 10000 --seed 20261201
 * --max-seed-lines 60 --family NAME`). No crash (an error that is not an InputError), no input
 * slower than HANG_MS, no fast path disagreeing with its full parser. `npm run fuzz` runs 10^5
 * per family. The families are split over test files so that vitest runs them in parallel.
 */
export const SEED = 20261201;
export const COUNT = 10_000;
const ROOT = path.resolve(import.meta.dirname, '../..');

export function fuzzFamilies(names: string[]): void {
  describe(`fuzz (seed ${SEED}, ${COUNT} inputs per family)`, async () => {
    const questions = await loadQuestions(path.join(ROOT, 'rules', 'questions'));
    // Seeds of at most 60 lines keep the run short on a loaded machine; npm run fuzz uses them all.
    const all = families(ROOT, questions, { maxSeedLines: 60 }).filter((f) => names.includes(f.name));
    it('has every family asked for', () => expect(all.map((f) => f.name).sort()).toEqual([...names].sort()));
    it.each(all.map((f) => [f.name, f] as const))('%s: no crash, no hang, no disagreement', (_, family) => {
      expect(family.seeds.length).toBeGreaterThan(0);
      const r = runFamily(family, SEED, COUNT);
      console.log(`fuzz ${r.family}: seed ${SEED}, inputs ${r.inputs}, crashes ${r.crashes}, hangs ${r.hangs}, disagreements ${r.disagreements} (${r.ms} ms)`);
      expect(r.inputs).toBe(COUNT);
      expect(r.examples).toEqual([]);
      expect(r.crashes + r.hangs + r.disagreements).toBe(0);
    }, 180_000);
  });
}
