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
import { collectFor } from '../src/writeup/judge.js';

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

const md = new MarkdownIt('default', { html: false, linkify: false });
function parseOnlyFull(): number {
  const t0 = performance.now();
  for (const d of docs) void md.parse(d, {});
  return performance.now() - t0;
}
function parseOnlyBlocks(): number {
  const t0 = performance.now();
  for (const d of docs) void parseBlocks(d, 'markdown');
  return performance.now() - t0;
}

const rules = await loadRules(path.join(root, 'rules'));
const lex = await loadLexicon(path.join(root, 'rules'));
async function audit(): Promise<{ ms: number; extractMs: number; facts: number; claims: number; verdicts: Map<string, number> }> {
  const verdicts = new Map<string, number>();
  let facts = 0;
  let claims = 0;
  let extractMs = 0;
  let out = 0;
  const t0 = performance.now();
  for (let i = 0; i < docs.length; i++) {
    const e0 = performance.now();
    const x = extractWriteup(docs[i]!, `bench-${i}.md`, lex);
    extractMs += performance.now() - e0;
    const v = await judgeWriteup(x, rules, lex);
    out += formatWriteupJson(x, v, collectFor(v.missing, undefined, lex)).length;
    facts += x.facts.length;
    claims += x.claims.length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
  }
  void out;
  return { ms: performance.now() - t0, extractMs, facts, claims, verdicts };
}

// One warm-up pass of each so the JIT is comparable, then the measured passes.
parseOnlyFull();
parseOnlyBlocks();
await audit();
const full = parseOnlyFull();
const blocks = parseOnlyBlocks();
const run = await audit();
const rate = (ms: number) => Math.round((N / ms) * 1000);
console.log(`write-ups: ${N} generated, ${LINES} lines each, ${(bytes / 1024 / 1024).toFixed(1)} MB`);
console.log(`audit (extract + judge + JSON): ${run.ms.toFixed(0)} ms = ${rate(run.ms)} write-ups/s (target >= 500)`);
console.log(`  of which extraction:          ${run.extractMs.toFixed(0)} ms = ${rate(run.extractMs)} write-ups/s`);
console.log(`parse only, markdown-it parse:  ${full.toFixed(0)} ms = ${rate(full)} write-ups/s`);
console.log(`parse only, block structure:    ${blocks.toFixed(0)} ms = ${rate(blocks)} write-ups/s`);
console.log(`ratio audit / markdown parse:   ${(run.ms / full).toFixed(2)}x (target < 3x); extraction / markdown parse: ${(run.extractMs / full).toFixed(2)}x`);
console.log(`facts ${run.facts}, claims ${run.claims}; verdicts ${[...run.verdicts].map(([v, n]) => `${n} ${v}`).join(', ')}`);
