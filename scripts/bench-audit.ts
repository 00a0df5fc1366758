// npm run bench: audit N generated cases (default 10,000) in one process and print cases/s,
// peak RSS, and the cost of only reading and parsing the same files with js-yaml (the floor), as
// a ratio, with what validation adds. Targets (issues 2, 20): >= 2,000 cases/s on a 2-core
// machine, and under 3x the parse-only cost. The CLI as a whole process: npm run bench:cli.
import { promises as fs, readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { evaluateCase, loadRules } from '../src/index.js';
import { formatCaseJson } from '../src/report/json.js';
import { loadCases } from '../src/case/load.js';
import { parseCaseQuick } from '../src/case/fast.js';
import { caseSchema } from '../src/case/schema.js';
import { parseYamlFast } from '../src/yamlfile.js';
import { caseGenerator, root, writeTree } from './bench-inputs.js';
import { SEARCH_STATS } from '../src/verdict/worlds.js';

const N = Number(process.argv[2] ?? 10_000);
// Realistic inputs: the shipped reference cases, renamed and with their numbers varied.
const gen = await caseGenerator();
const { dir, files } = await writeTree('krt-bench-', N, gen.text, 'yaml');

// The floor: read + js-yaml parse of the same files (parseYamlFast: the parser and options the
// audit reads a case with), no validation. Then the same with the case check without zod (the
// plain-data schema, src/case/shape.ts) and with zod, to show what validation costs.
function parseOnly(): number {
  const t0 = performance.now();
  for (const f of files) void parseYamlFast(readFileSync(f, 'utf8'), 'case file', f);
  return performance.now() - t0;
}
function validated(how: 'shape' | 'zod'): number {
  const t0 = performance.now();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    if (how === 'shape') void parseCaseQuick(text, f);
    else void caseSchema.safeParse(parseYamlFast(text, 'case file', f));
  }
  return performance.now() - t0;
}

let stats = { memoHits: 0, engineRuns: 0 };
async function audit(memo = true): Promise<{ ms: number; verdicts: Map<string, number>; same: number }> {
  const rules = await loadRules(path.join(root, 'rules'), { memo });
  stats = rules.runner.stats;
  const verdicts = new Map<string, number>();
  let bytes = 0;
  let same = 0;
  let i = 0;
  const t0 = performance.now();
  for await (const loaded of loadCases(files)) {
    const v = await evaluateCase(loaded, rules);
    bytes += formatCaseJson(v).length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
    if (v.verdict === gen.expected(i++)) same++;
  }
  void bytes;
  return { ms: performance.now() - t0, verdicts, same };
}

// One warm-up pass of each so the JIT is comparable, then the measured passes.
parseOnly();
validated('shape');
validated('zod');
await audit();
const parseMs = parseOnly();
const shapeMs = validated('shape');
const zodMs = validated('zod');
const { ms: coldMs } = await audit(false);
const before = { ...SEARCH_STATS };
const { ms: auditMs, verdicts, same } = await audit();
const searched = { cases: SEARCH_STATS.cases - before.cases, judgements: SEARCH_STATS.judgements - before.judgements, inexact: SEARCH_STATS.inexact - before.inexact, ranking: SEARCH_STATS.ranking - before.ranking, remembered: SEARCH_STATS.remembered - before.remembered };
const rssMb = process.resourceUsage().maxRSS / 1024;

console.log(`cases:              ${N} (from ${gen.templates} reference cases, varied)`);
console.log(`audit:              ${auditMs.toFixed(0)} ms  = ${(N / (auditMs / 1000)).toFixed(0)} cases/s   (target >= 2000)`);
console.log(`read+parse only:    ${parseMs.toFixed(0)} ms  = ${(N / (parseMs / 1000)).toFixed(0)} cases/s   (the floor: read + js-yaml, no validation)`);
console.log(`+ validation:       ${(shapeMs - parseMs).toFixed(0)} ms without zod (the schema as plain data, every case it accepts), ${(zodMs - parseMs).toFixed(0)} ms with zod`);
console.log(`audit / parse-only: ${(auditMs / parseMs).toFixed(2)}x   (target < 3x)`);
console.log(`search:             ${searched.cases} of ${N} cases searched their completions (the fold not definite), ${(searched.judgements / Math.max(1, searched.cases)).toFixed(0)} judgements each (${(searched.ranking / Math.max(1, searched.cases)).toFixed(0)} of them ranking \`decides\`), ${searched.inexact} ran out of budget; ${searched.remembered} more answered from an earlier search of the same evidence (the memo is per loaded rule set: each pass starts empty)`);
console.log(`peak RSS:           ${rssMb.toFixed(0)} MB`);
console.log(`engine runs:        ${stats.engineRuns} of ${stats.engineRuns + stats.memoHits} cases (the rest answered from the per-rule memo)`);
console.log(`without the memo:   ${coldMs.toFixed(0)} ms  = ${(N / (coldMs / 1000)).toFixed(0)} cases/s, ${(coldMs / parseMs).toFixed(2)}x parse-only (every case runs json-rules-engine)`);
console.log(`verdicts:           ${[...verdicts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`same meaning:       ${same} of ${N} generated cases get their reference case's expected verdict (the variation keeps what a case is about)`);
await fs.rm(dir, { recursive: true, force: true });

// The CLI as users run it (whole processes, against floor processes): npm run bench:cli.
