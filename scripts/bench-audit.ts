// npm run bench: audit N generated cases (default 10,000) in one process and print cases/s,
// peak RSS, and the cost of only reading and parsing the same files, as a ratio.
// Targets (issue 2): >= 2,000 cases/s on a 2-core machine, and under 3x the parse-only cost.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { evaluateCase, loadRules } from '../src/index.js';
import { formatCaseJson } from '../src/report/json.js';
import { expandCasePaths, loadCases } from '../src/case/load.js';

const N = Number(process.argv[2] ?? 10_000);
const root = path.resolve(import.meta.dirname, '..', '..');

// Realistic inputs: the shipped reference cases, renamed and with their numbers varied.
const templates = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => fs.readFile(f, 'utf8')));
let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-bench-'));
const files: string[] = [];
for (let i = 0; i < N; i++) {
  const t = templates[i % templates.length]!;
  const text = t
    .replace(/^id: .*$/m, `id: bench-${i}`)
    .replace(/^expected:[\s\S]*$/m, '')
    .replace(/(eligible|entries|returns|entry_events|observed_high_water|estimated_max_overlap): (\d+)/g, (_, k: string, v: string) => `${k}: ${Number(v) + rand(40)}`)
    .replace(/nmissed: (\d+) \}\n  end: \{ (epoch: [\w-]+), nmissed: (\d+)/, (_, a: string, e: string, b: string) => `nmissed: ${a} }\n  end: { ${e}, nmissed: ${Number(b) + rand(8)}`);
  const file = path.join(dir, `case-${String(i).padStart(5, '0')}.yaml`);
  await fs.writeFile(file, text);
  files.push(file);
}

async function parseOnly(): Promise<number> {
  const t0 = performance.now();
  // The same reading path as `audit` (loadCases), without evaluating.
  for await (const loaded of loadCases(files)) void loaded;
  return performance.now() - t0;
}

let stats = { memoHits: 0, engineRuns: 0 };
async function audit(memo = true): Promise<{ ms: number; verdicts: Map<string, number> }> {
  const rules = await loadRules(path.join(root, 'rules'), { memo });
  stats = rules.runner.stats;
  const verdicts = new Map<string, number>();
  let bytes = 0;
  const t0 = performance.now();
  for await (const loaded of loadCases(files)) {
    const v = await evaluateCase(loaded, rules);
    bytes += formatCaseJson(v).length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
  }
  void bytes;
  return { ms: performance.now() - t0, verdicts };
}

// One warm-up pass of each so the JIT is comparable, then the measured passes.
await parseOnly();
await audit();
const parseMs = await parseOnly();
const { ms: coldMs } = await audit(false);
const { ms: auditMs, verdicts } = await audit();
const rssMb = process.resourceUsage().maxRSS / 1024;

console.log(`cases:              ${N} (from ${templates.length} reference cases, varied)`);
console.log(`audit:              ${auditMs.toFixed(0)} ms  = ${(N / (auditMs / 1000)).toFixed(0)} cases/s   (target >= 2000)`);
console.log(`read+parse only:    ${parseMs.toFixed(0)} ms  = ${(N / (parseMs / 1000)).toFixed(0)} cases/s`);
console.log(`audit / parse-only: ${(auditMs / parseMs).toFixed(2)}x   (target < 3x)`);
console.log(`peak RSS:           ${rssMb.toFixed(0)} MB`);
console.log(`engine runs:        ${stats.engineRuns} of ${stats.engineRuns + stats.memoHits} cases (the rest answered from the per-rule memo)`);
console.log(`without the memo:   ${coldMs.toFixed(0)} ms  = ${(N / (coldMs / 1000)).toFixed(0)} cases/s, ${(coldMs / parseMs).toFixed(2)}x parse-only (every case runs json-rules-engine)`);
console.log(`verdicts:           ${[...verdicts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
await fs.rm(dir, { recursive: true, force: true });
