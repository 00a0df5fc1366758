// npm run bench:writeups: audit N generated write-ups (default 1,000) of about 300 lines each,
// in one process, and print write-ups/s for the whole path (read facts and claims, build the
// case, judge it, render the JSON) against the cost of only parsing the same Markdown.
// Targets (issue 10): >= 500 write-ups/s on a 2-core machine, and under 3x the parse-only cost.
// First it prints the figures of the real-thread corpus (cases/writeups/real/, issue 21): fact
// precision and recall, claims found vs expected, definite and acceptable verdicts
// (scripts/writeup-corpus.ts). `bench:writeups corpus` prints only those.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import MarkdownIt from 'markdown-it';
import { loadRules } from '../src/index.js';
import { extractWriteup, formatWriteupJson, judgeWriteup, loadLexicon, parseBlocks } from '../src/writeup/index.js';
import { toVerdictJson } from '../src/report/json.js';
import { writeupGenerator } from './bench-inputs.js';
import { auditCorpus, corpusFigures, formatCorpusFigures, loadCorpus } from './writeup-corpus.js';

const corpusOnly = process.argv[2] === 'corpus';
const N = corpusOnly ? 0 : Number(process.argv[2] ?? 1_000);
const LINES = 300;
const root = path.resolve(import.meta.dirname, '..', '..');
const dir = path.join(root, 'cases', 'writeups');

// Two sets of inputs, both about 300 lines:
// - realistic: one investigation as people write it up, a postmortem of ~300 lines that is
//   mostly prose (summary, timeline, impact, follow-ups) around a few pasted blocks (a shell
//   session, a log excerpt, a stack, a config), with the findings of one shipped write-up
//   (numbers varied) in the middle: about a dozen facts and a few claims. This is what the
//   issue's target is about.
// - worst case: shipped write-ups (front matter dropped) stitched one after another until the
//   document has 300 lines: every line is dense with facts (~165 facts and ~10 disagreements a
//   document), which no single write-up has. Printed too, so the dense case stays visible.
const { realistic, stitched } = await writeupGenerator(dir, LINES);

const sets = [
  { name: 'realistic postmortems', docs: Array.from({ length: N }, (_, i) => realistic(i)) },
  { name: 'worst case (write-ups stitched)', docs: Array.from({ length: N }, (_, i) => stitched(i)) },
];
// Wall time and CPU time of each phase: the machine is shared, so wall time includes waiting for
// a core while CPU time is what this process spent.
interface Cost { ms: number; cpuMs: number }
function measure(fn: () => void): Cost {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const c = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (c.user + c.system) / 1000 };
}
const md = new MarkdownIt('default', { html: false, linkify: false });
const parseOnlyFull = (docs: string[]) => measure(() => { for (const d of docs) void md.parse(d, {}); });
const parseOnlyBlocks = (docs: string[]) => measure(() => { for (const d of docs) void parseBlocks(d, 'markdown'); });

const rules = await loadRules(path.join(root, 'rules'));
const lex = await loadLexicon(path.join(root, 'rules'));
for (const line of formatCorpusFigures(corpusFigures(await auditCorpus(await loadCorpus(path.join(dir, 'real')), rules, lex)))) console.log(line);
interface Run extends Cost { facts: number; claims: number; conflicts: number; verdicts: Map<string, number> }
async function audit(docs: string[]): Promise<Run> {
  // A rule set of its own for each pass (loaded before the clock starts): the completion search
  // remembers its answers per loaded rule set, and a pass must not be answered from the last one.
  const rules = await loadRules(path.join(root, 'rules'));
  const verdicts = new Map<string, number>();
  let facts = 0;
  let claims = 0;
  let conflicts = 0;
  let out = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i++) {
    const x = extractWriteup(docs[i]!, `bench-${i}.md`, lex);
    const v = await judgeWriteup(x, rules, lex);
    out += formatWriteupJson(x, v, toVerdictJson(v)).length;
    facts += x.facts.length;
    claims += x.claims.length;
    conflicts += x.conflicts.length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
  }
  void out;
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ms, cpuMs: (c.user + c.system) / 1000, facts, claims, conflicts, verdicts };
}
/** Extraction alone (no judging), to show where the time goes. */
const extractOnly = (docs: string[]) => measure(() => { for (let i = 0; i < docs.length; i++) void extractWriteup(docs[i]!, `bench-${i}.md`, lex); });

// Each figure is the median of ROUNDS passes over the same documents, the passes of the
// different measurements interleaved, so a busy moment on this shared machine lands on one pass
// of each rather than on one whole measurement. CPU time counts every thread of the process
// (V8's garbage collector and compiler threads too); wall time is what a user waits.
const ROUNDS = 7;
const WARMUP = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const med = (xs: Cost[]): Cost => ({ ms: median(xs.map((x) => x.ms)), cpuMs: median(xs.map((x) => x.cpuMs)) });
const rate = (ms: number) => Math.round((N / ms) * 1000);
const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
if (!corpusOnly) console.log(`\nwrite-ups: ${N} generated per set, ${LINES} lines each; load average ${load}`);
const only = process.argv[3]; // optional: run one set, by the first word of its name
for (const { name, docs } of corpusOnly ? [] : sets.filter((s) => !only || s.name.startsWith(only))) {
  const bytes = docs.reduce((s, d) => s + d.length, 0);
  // Warm-up passes of each before the measured ones, so both sides are measured with the JIT
  // settled: the audit path has far more code than a Markdown parse, and V8 is still optimizing
  // parts of it (on its background threads, which CPU time counts) through the third pass. The
  // first pass, JIT cold, is printed too.
  const cold = { full: parseOnlyFull(docs), audit: await audit(docs) };
  for (let w = 1; w < WARMUP; w++) {
    parseOnlyFull(docs);
    await audit(docs);
  }
  parseOnlyBlocks(docs);
  extractOnly(docs);
  const passes = { full: [] as Cost[], blocks: [] as Cost[], extract: [] as Cost[], audit: [] as Run[] };
  for (let r = 0; r < ROUNDS; r++) {
    passes.full.push(parseOnlyFull(docs));
    passes.audit.push(await audit(docs));
    passes.blocks.push(parseOnlyBlocks(docs));
    passes.extract.push(extractOnly(docs));
  }
  const run = passes.audit[0]!;
  const [full, blocks, extract, all] = [med(passes.full), med(passes.blocks), med(passes.extract), med(passes.audit)];
  console.log(`\n${name}: ${(bytes / 1024 / 1024).toFixed(1)} MB; per write-up ${(run.facts / N).toFixed(1)} facts, ${(run.claims / N).toFixed(1)} claims, ${(run.conflicts / N).toFixed(1)} disagreements; verdicts ${[...run.verdicts].map(([v, n]) => `${n} ${v}`).join(', ')}`);
  console.log(`  medians of ${ROUNDS} passes each, after ${WARMUP} warm-up passes:`);
  console.log(`  audit (extract + judge + JSON): wall ${all.ms.toFixed(0)} ms = ${rate(all.ms)} write-ups/s; CPU ${all.cpuMs.toFixed(0)} ms = ${rate(all.cpuMs)} write-ups/s (target >= 500)`);
  console.log(`    extraction alone:             wall ${extract.ms.toFixed(0)} ms = ${rate(extract.ms)} write-ups/s; CPU ${extract.cpuMs.toFixed(0)} ms`);
  console.log(`  parse only, markdown-it parse:  wall ${full.ms.toFixed(0)} ms = ${rate(full.ms)} write-ups/s; CPU ${full.cpuMs.toFixed(0)} ms`);
  console.log(`  parse only, block structure:    wall ${blocks.ms.toFixed(0)} ms = ${rate(blocks.ms)} write-ups/s; CPU ${blocks.cpuMs.toFixed(0)} ms`);
  console.log(`  ratio audit / markdown parse:   wall ${(all.ms / full.ms).toFixed(2)}x, CPU ${(all.cpuMs / full.cpuMs).toFixed(2)}x (target < 3x); extraction alone / parse: wall ${(extract.ms / full.ms).toFixed(2)}x, CPU ${(extract.cpuMs / full.cpuMs).toFixed(2)}x`);
  console.log(`  first pass (JIT cold):          audit wall ${cold.audit.ms.toFixed(0)} ms, parse ${cold.full.ms.toFixed(0)} ms: ${(cold.audit.ms / cold.full.ms).toFixed(2)}x wall, ${(cold.audit.cpuMs / cold.full.cpuMs).toFixed(2)}x CPU`);
}
