import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadRules, type CaseVerdict, type Rules } from '../../src/index.js';

// An unknown fact in a rule's explanation or next step is printed as the word "unknown"; in a
// sentence that reads as if it were the value ("The probe on unknown was not armed"). A template
// puts such a fact in `[[ ... ]]`, dropped when it is unknown, or says the sentence without it.
// The renderer reports the placeholders it filled with "unknown" (Finding.unknown); every shipped
// case is judged as `audit cases/` judges it, and none may carry one outside the list below.
const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
let verdicts: Array<{ file: string; v: CaseVerdict }>;

/**
 * (rule, fact) pairs where "unknown" is the point, not a value standing in for one in a sentence.
 * They print a figure term by term, and a term the case does not give is what they report.
 */
const ALLOWED = new Set<string>([
  // The accounting identity, term by term: an unknown term is what leaves it unsettled.
  ...['eligible', 'returned', 'filtered', 'in_flight_at_stop', 'capacity_missed', 'not_covered', 'unexplained', 'sum'].map((t) => `ledger/accounting-unbalanced accounting.${t}`),
  // A summed miss figure split into its two parts "as far as the case allows": a part the case
  // cannot split off is shown as unknown.
  'counters/profile-misses-are-a-sum counters.delta.nmissed',
  'counters/profile-misses-are-a-sum counters.delta.kprobe_nmissed',
]);

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  const [{ expandInputs, loadInputs }, { judgeInput }] = await Promise.all([import('../../src/audit/inputs.js'), import('../../src/writeup/audit.js')]);
  verdicts = [];
  const noStdin = () => Promise.reject(new Error('no stdin here'));
  for await (const input of loadInputs(expandInputs([path.join(root, 'cases')], { cwd: root }), noStdin)) {
    if (input instanceof Error) throw input;
    verdicts.push({ file: path.relative(root, input.file).split(path.sep).join('/'), v: await judgeInput(input, rules, evaluateCase) });
  }
}, 300_000);

describe('the shipped explanations', () => {
  it('are judged for every shipped case', () => {
    expect(verdicts.length).toBeGreaterThanOrEqual(200);
  });

  it('never print an unknown fact as a word outside [[ ... ]]', () => {
    // Each offending (rule, fact) once, with the first case that shows it.
    const offending = new Map<string, string>();
    for (const { file, v } of verdicts) {
      for (const f of v.findings) {
        for (const name of f.unknown ?? []) {
          const key = `${f.rule} ${name}`;
          if (!ALLOWED.has(key) && !offending.has(key)) offending.set(key, file);
        }
      }
      for (const c of v.claims) {
        for (const name of c.unknown ?? []) {
          const key = `${c.rule} ${name}`;
          if (!ALLOWED.has(key) && !offending.has(key)) offending.set(key, file);
        }
      }
    }
    expect([...offending].sort()).toEqual([]);
  });
});
