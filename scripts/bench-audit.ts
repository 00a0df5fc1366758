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
import { POOL_MIN_INPUTS } from '../src/audit/pool.js';
import { SEARCH_STATS } from '../src/verdict/worlds.js';
import { loadInputsOnThread, READER_STATS } from '../src/audit/reader.js';
import type { InputRef } from '../src/audit/inputs.js';
import { InputError } from '../src/errors.js';

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
/**
 * One audit pass: the cases read and parsed on this thread (loadCases), or on a second thread as
 * the CLI reads a big batch when a core is idle (src/audit/reader.ts), then judged and their
 * verdict JSON formatted here.
 */
async function audit(how: { memo?: boolean; thread?: boolean } = {}): Promise<{ ms: number; verdicts: Map<string, number>; same: number }> {
  const rules = await loadRules(path.join(root, 'rules'), { memo: how.memo ?? true });
  stats = rules.runner.stats;
  const verdicts = new Map<string, number>();
  let bytes = 0;
  let same = 0;
  let i = 0;
  const t0 = performance.now();
  const loaded = how.thread ? threadLoaded() : loadCases(files);
  for await (const l of loaded) {
    const v = await evaluateCase(l, rules);
    bytes += formatCaseJson(v).length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
    if (v.verdict === gen.expected(i++)) same++;
  }
  void bytes;
  return { ms: performance.now() - t0, verdicts, same };
}
async function* threadLoaded() {
  let i = 0;
  const refs: AsyncIterator<InputRef> = { next: async () => (i < files.length ? { done: false, value: { file: files[i++]!, kind: 'case' } } : { done: true, value: undefined }) };
  for await (const input of loadInputsOnThread(refs, () => Promise.reject(new Error('no stdin')))) {
    if (input instanceof InputError) throw input;
    yield input.loaded;
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// One warm-up pass of each so the JIT is comparable, then the measured passes: the floor and the
// audit interleaved, PAIRS times, each figure the median (the machine's speed drifts between runs).
const PAIRS = 3;
parseOnly();
validated('shape');
validated('zod');
await audit();
await audit({ thread: true });
const { ms: coldMs } = await audit({ memo: false });
const runs: Array<{ parse: number; shape: number; zod: number; one: number; two: number }> = [];
let before = { ...SEARCH_STATS };
let last = { verdicts: new Map<string, number>(), same: 0 };
let searched = { cases: 0, judgements: 0, inexact: 0, ranking: 0, remembered: 0 };
for (let k = 0; k < PAIRS; k++) {
  const parse = parseOnly();
  const shape = validated('shape');
  const zod = validated('zod');
  before = { ...SEARCH_STATS };
  const one = await audit();
  searched = { cases: SEARCH_STATS.cases - before.cases, judgements: SEARCH_STATS.judgements - before.judgements, inexact: SEARCH_STATS.inexact - before.inexact, ranking: SEARCH_STATS.ranking - before.ranking, remembered: SEARCH_STATS.remembered - before.remembered };
  last = one;
  const two = await audit({ thread: true });
  runs.push({ parse, shape, zod, one: one.ms, two: two.ms });
}
const parseMs = median(runs.map((r) => r.parse));
const auditMs = median(runs.map((r) => r.one));
const threadMs = median(runs.map((r) => r.two));
// What validation adds to the floor, each pass against the floor pass next to it.
const shapeAdds = median(runs.map((r) => r.shape - r.parse));
const zodAdds = median(runs.map((r) => r.zod - r.parse));
const ratioOne = median(runs.map((r) => r.one / r.parse));
const ratioTwo = median(runs.map((r) => r.two / r.parse));
const { verdicts, same } = last;
const rssMb = process.resourceUsage().maxRSS / 1024;

console.log(`cases:              ${N} (from ${gen.templates} reference cases, varied)`);
console.log(`audit, one thread:  ${auditMs.toFixed(0)} ms  = ${(N / (auditMs / 1000)).toFixed(0)} cases/s   (target >= 2000)`);
console.log(`audit, read on a second thread: ${threadMs.toFixed(0)} ms  = ${(N / (threadMs / 1000)).toFixed(0)} cases/s   (as the CLI reads a batch of ${POOL_MIN_INPUTS}+ files when a core is idle; ${READER_STATS.thread} of ${READER_STATS.thread + READER_STATS.here} cases over all passes read there)`);
console.log(`read+parse only:    ${parseMs.toFixed(0)} ms  = ${(N / (parseMs / 1000)).toFixed(0)} cases/s   (the floor: read + js-yaml on one thread, no validation)`);
console.log(`+ validation:       ${shapeAdds.toFixed(0)} ms without zod (the schema as plain data, every case it accepts), ${zodAdds.toFixed(0)} ms with zod (medians, each against the floor pass beside it)`);
console.log(`audit / parse-only: ${ratioOne.toFixed(2)}x on one thread, ${ratioTwo.toFixed(2)}x read on a second thread   (target < 3x; median of ${PAIRS} interleaved pairs)`);
console.log(`search:             ${searched.cases} of ${N} cases searched their completions (the fold not definite), ${(searched.judgements / Math.max(1, searched.cases)).toFixed(0)} judgements each (${(searched.ranking / Math.max(1, searched.cases)).toFixed(0)} of them ranking \`decides\`), ${searched.inexact} ran out of budget; ${searched.remembered} more answered from an earlier search of the same evidence (the memo is per loaded rule set: each pass starts empty)`);
console.log(`peak RSS:           ${rssMb.toFixed(0)} MB`);
console.log(`engine runs:        ${stats.engineRuns} of ${stats.engineRuns + stats.memoHits} cases (the rest answered from the per-rule memo)`);
console.log(`without the memo:   ${coldMs.toFixed(0)} ms  = ${(N / (coldMs / 1000)).toFixed(0)} cases/s, ${(coldMs / parseMs).toFixed(2)}x parse-only (every case runs json-rules-engine)`);
console.log(`verdicts:           ${[...verdicts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`same meaning:       ${same} of ${N} generated cases get their reference case's expected verdict (the variation keeps what a case is about)`);
await fs.rm(dir, { recursive: true, force: true });

// The CLI as users run it (whole processes, against floor processes): npm run bench:cli.
