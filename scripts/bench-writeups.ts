// npm run bench:writeups: audit N generated write-ups (default 1,000) of about 300 lines each,
// in one process, and print write-ups/s for the whole path (read facts and claims, build the
// case, judge it, render the JSON) against the cost of only parsing the same Markdown.
// Targets (issue 10): >= 500 write-ups/s on a 2-core machine, and under 3x the parse-only cost.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import MarkdownIt from 'markdown-it';
import { loadRules } from '../src/index.js';
import { extractWriteup, formatWriteupJson, judgeWriteup, loadLexicon, parseBlocks } from '../src/writeup/index.js';
import { toVerdictJson } from '../src/report/json.js';

const N = Number(process.argv[2] ?? 1_000);
const LINES = 300;
const root = path.resolve(import.meta.dirname, '..', '..');
const dir = path.join(root, 'cases', 'writeups');

// Realistic inputs: the shipped Markdown write-ups (front matter dropped), their numbers varied,
// stitched together until a document has about 300 lines.
const parts: string[] = [];
for (const name of (await fs.readdir(dir)).filter((n) => n.endsWith('.md')).sort()) {
  const text = await fs.readFile(path.join(dir, name), 'utf8');
  parts.push(text.replace(/^---\n[\s\S]*?\n---\n/, ''));
}
let seed = 7;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
const docs: string[] = [];
for (let i = 0; i < N; i++) {
  const out: string[] = [`# Generated write-up ${i}`, ''];
  let k = i;
  while (out.length < LINES) {
    const p = parts[k++ % parts.length]!.replace(/\b(\d{2,5})\b(?![.\d-])/g, (d) => String(Number(d) + rand(50)));
    out.push(...p.split('\n'));
  }
  docs.push(`${out.slice(0, LINES).join('\n')}\n`);
}
const bytes = docs.reduce((s, d) => s + d.length, 0);

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
const parseOnlyFull = () => measure(() => { for (const d of docs) void md.parse(d, {}); });
const parseOnlyBlocks = () => measure(() => { for (const d of docs) void parseBlocks(d, 'markdown'); });

const rules = await loadRules(path.join(root, 'rules'));
const lex = await loadLexicon(path.join(root, 'rules'));
async function audit(): Promise<{ ms: number; cpuMs: number; extractMs: number; facts: number; claims: number; verdicts: Map<string, number> }> {
  const verdicts = new Map<string, number>();
  let facts = 0;
  let claims = 0;
  let extractMs = 0;
  let out = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i++) {
    const e0 = process.cpuUsage();
    const x = extractWriteup(docs[i]!, `bench-${i}.md`, lex);
    const e = process.cpuUsage(e0);
    extractMs += (e.user + e.system) / 1000;
    const v = await judgeWriteup(x, rules, lex);
    out += formatWriteupJson(x, v, toVerdictJson(v)).length;
    facts += x.facts.length;
    claims += x.claims.length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
  }
  void out;
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ms, cpuMs: (c.user + c.system) / 1000, extractMs, facts, claims, verdicts };
}

// One warm-up pass of each so the JIT is comparable, then the measured passes.
parseOnlyFull();
parseOnlyBlocks();
await audit();
const full = parseOnlyFull();
const blocks = parseOnlyBlocks();
const run = await audit();
const rate = (ms: number) => Math.round((N / ms) * 1000);
const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
console.log(`write-ups: ${N} generated, ${LINES} lines each, ${(bytes / 1024 / 1024).toFixed(1)} MB; load average ${load}`);
console.log(`audit (extract + judge + JSON): wall ${run.ms.toFixed(0)} ms = ${rate(run.ms)} write-ups/s; CPU ${run.cpuMs.toFixed(0)} ms = ${rate(run.cpuMs)} write-ups/s (target >= 500)`);
console.log(`  of which extraction (CPU):    ${run.extractMs.toFixed(0)} ms = ${rate(run.extractMs)} write-ups/s; judging and JSON: ${(run.cpuMs - run.extractMs).toFixed(0)} ms`);
console.log(`parse only, markdown-it parse:  wall ${full.ms.toFixed(0)} ms = ${rate(full.ms)} write-ups/s; CPU ${full.cpuMs.toFixed(0)} ms`);
console.log(`parse only, block structure:    wall ${blocks.ms.toFixed(0)} ms = ${rate(blocks.ms)} write-ups/s; CPU ${blocks.cpuMs.toFixed(0)} ms`);
console.log(`ratio audit / markdown parse:   wall ${(run.ms / full.ms).toFixed(2)}x, CPU ${(run.cpuMs / full.cpuMs).toFixed(2)}x (target < 3x); extraction alone / parse, CPU: ${(run.extractMs / full.cpuMs).toFixed(2)}x`);
console.log(`facts ${run.facts}, claims ${run.claims}; verdicts ${[...run.verdicts].map(([v, n]) => `${n} ${v}`).join(', ')}`);
