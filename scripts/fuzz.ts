/**
 * `npm run fuzz`: at least 10^5 mutated inputs per parser family (cases, rules, answers, bundle
 * files, trace text, trace lines, probe/ops JSONL), in-process, within a time budget per family. Prints the
 * seed (so a failure reproduces), and per family: inputs, crashes, hangs, disagreements.
 * Exit 1 when anything was found.
 *
 *   node dist/scripts/fuzz.js [--count 100000] [--seed N] [--budget-s 900] [--family cases] [--max-seed-lines 60]
 * (npm test's run is --count 10000 --seed 20261201 --max-seed-lines 60)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadQuestions } from '../src/triage/questions.js';
import { families, runFamily } from './fuzz-lib.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const count = Number(arg('count', '100000'));
const seed = Number(arg('seed', String(Date.now() % 2 ** 31)));
const budgetS = Number(arg('budget-s', '900'));
const only = arg('family', '');
const maxSeedLines = arg('max-seed-lines', '');

console.log(`fuzz: seed ${seed}, ${count} inputs per family, budget ${budgetS} s per family`);
const questions = await loadQuestions(path.join(root, 'rules', 'questions'));
let bad = 0;
for (const family of families(root, questions, maxSeedLines ? { maxSeedLines: Number(maxSeedLines) } : {})) {
  if (only && family.name !== only) continue;
  const r = runFamily(family, seed, count, Date.now() + budgetS * 1000);
  bad += r.crashes + r.hangs + r.disagreements;
  const rate = (r.inputs / Math.max(r.ms, 1)) * 1000;
  console.log(`${r.family.padEnd(16)} inputs ${String(r.inputs).padStart(7)}  crashes ${r.crashes}  hangs ${r.hangs}  disagreements ${r.disagreements}  (${(r.ms / 1000).toFixed(1)} s, ${rate.toFixed(0)}/s)${r.inputs < count ? '  [budget ran out]' : ''}`);
  for (const e of r.examples) console.log(`  ${e}`);
}
process.exitCode = bad > 0 ? 1 : 0;
