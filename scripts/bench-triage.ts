/**
 * How long a triage session makes someone wait between pressing Enter and seeing the next
 * question: save the answer (atomic write, .bak on the first write), re-evaluate the case, say
 * what changed and pick the next question. Target: under 50 ms (median), so it feels instant.
 *
 *   npm run bench:triage                     (builds, then runs this from dist/)
 *   node dist/scripts/bench-triage.js [--rounds 20] [--case cases/table/stall-after-quiesce.yaml]
 *
 * A long case: every question, warnings included (--all), answered from a reference case (its
 * value, or unknown), from an empty file to the end, several rounds.
 */
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCase, updateCaseFile } from '../src/case/load.js';
import { evaluateCase, loadRules } from '../src/index.js';
import { diffVerdicts } from '../src/triage/changes.js';
import { loadQuestions } from '../src/triage/questions.js';
import { planQuestions } from '../src/triage/select.js';
import { newCaseText } from '../src/triage/session.js';

const TARGET_MS = 50;
const here = path.dirname(fileURLToPath(import.meta.url));
// Run from dist/scripts/ after the build; the cases stay at the repository root.
const repo = path.resolve(here, here.split(path.sep).includes('dist') ? '../..' : '..');

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

function valueAt(data: unknown, fact: string): unknown {
  let cur: unknown = data;
  for (const key of fact.split('.')) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[key] : undefined;
  return cur;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const rounds = Number(arg('--rounds', '20'));
const refPath = path.resolve(repo, arg('--case', 'cases/table/stall-after-quiesce.yaml'));
const rules = await loadRules();
const questions = await loadQuestions();
const ref = await loadCase(refPath);
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-bench-triage-'));

const samples: number[] = [];
let perRound = 0;
try {
  for (let r = 0; r < rounds; r++) {
    const file = path.join(dir, `round-${r}.yaml`);
    let loaded = await updateCaseFile(file, {}, { initial: newCaseText(file), backup: false });
    let verdict = await evaluateCase(loaded, rules);
    let plan = await planQuestions(loaded.data, verdict, rules, questions, { all: true });
    let asked = 0;
    while (plan.next) {
      const q = plan.next;
      const v = valueAt(ref.data, q.fact);
      const value = v === undefined || v === null ? 'unknown' : v;
      // The clock starts when the answer is in and stops when the next question is known.
      const t0 = performance.now();
      loaded = await updateCaseFile(file, { [q.fact]: value }, { backup: true });
      const after = await evaluateCase(loaded, rules);
      diffVerdicts(verdict, after);
      verdict = after;
      plan = await planQuestions(loaded.data, verdict, rules, questions, { all: true });
      samples.push(performance.now() - t0);
      asked++;
    }
    perRound = asked;
  }
} finally {
  await fs.rm(dir, { recursive: true, force: true });
}

// The first round warms the JIT and the file system; people answer many questions per session.
const measured = samples.slice(perRound).sort((a, b) => a - b);
const median = percentile(measured, 50);
const p95 = percentile(measured, 95);
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;
process.stdout.write(
  `bench:triage  ${path.relative(repo, refPath)}  ${perRound} questions per session (--all), ${rounds} rounds, ${measured.length} answers measured (first round is warm-up)\n` +
    `  answer -> next question (save + evaluate + diff + select)\n` +
    `  median ${fmt(median)}   p95 ${fmt(p95)}   max ${fmt(measured[measured.length - 1]!)}   target median < ${TARGET_MS} ms: ${median < TARGET_MS ? 'met' : 'NOT MET'}\n`,
);
if (median >= TARGET_MS) process.exitCode = 1;
