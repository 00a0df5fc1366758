// npm run bench:writeups: audit N generated write-ups (default 1,000) of about 300 lines each,
// in one process, and print write-ups/s for the whole path (read facts and claims, build the
// case, judge it, render the JSON) against the cost of only parsing the same Markdown.
// Targets (issue 10): >= 500 write-ups/s on a 2-core machine, and under 3x the parse-only cost.
// First it prints the figures of the real-thread corpus (cases/writeups/real/, issue 21): fact
// precision and recall, claims found vs expected, definite and acceptable verdicts
// (scripts/writeup-corpus.ts). `bench:writeups corpus` prints only those.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import MarkdownIt from 'markdown-it';
import { loadRules } from '../src/index.js';
import { extractWriteup, formatWriteupJson, judgeWriteup, loadLexicon, parseBlocks } from '../src/writeup/index.js';
import { toVerdictJson } from '../src/report/json.js';
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
const vary = (t: string) => t.replace(/\b(\d{2,5})\b(?![.\d-])/g, (d) => String(Number(d) + rand(50)));
const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;

// Prose of a postmortem around the investigation: words the lexicons look for ("return",
// "threads", "stuck", "latency", "worker") occur, as they do in real prose, so the sentence
// patterns really run; numbers are dates, durations and ticket ids.
const SERVICES = ['the build farm', 'the object store', 'the NFS gateway', 'the ingest pipeline', 'the CI runners', 'the metrics cluster'];
const PEOPLE = ['Ana', 'Bram', 'Chen', 'Dara', 'Emeka', 'Farah', 'Goran', 'Hana'];
const PROSE: Array<() => string> = [
  () => `Around ${rand(24)}:${10 + rand(50)} UTC the on-call engineer was paged because requests to ${pick(SERVICES)} took longer than the alert threshold of ${1 + rand(9)} seconds.`,
  () => `${pick(PEOPLE)} looked at the dashboards first and saw that the queue depth grew steadily while the request rate stayed flat, which pointed at something slow rather than something overloaded.`,
  () => `The first theory was a network problem between the racks, so we compared packet loss on both sides and found nothing out of the ordinary for the whole window.`,
  () => `We restarted one of the worker processes to see whether the slowdown followed the process or the host; it followed the host, which narrowed the search to the kernel and the storage below it.`,
  () => `Customers noticed: ${rand(40) + 3} support tickets were opened during the incident, most of them about uploads that timed out after the client's retry budget ran out.`,
  () => `The latency of the affected calls was visible in the application metrics long before the kernel side was looked at, and the graphs from that time are attached to ticket OPS-${1000 + rand(8000)}.`,
  () => `Nobody changed the configuration of ${pick(SERVICES)} in the week before the incident, and the last kernel update on these hosts was rolled out ${2 + rand(20)} days earlier.`,
  () => `${pick(PEOPLE)} wrote a small reproducer that opens files in a loop from several threads and measures how long each call takes to come back to user space.`,
  () => `The reproducer showed the same pattern on a spare host, which meant we could experiment without touching production traffic any further.`,
  () => `We agreed to keep the timeline in this document and the raw notes in the incident channel, so that the review could follow what was known at each point.`,
  () => `The storage team confirmed that the disks reported no errors and that the controller firmware had not changed since the spring.`,
  () => `At the incident review we went through every step below and marked which conclusions were supported by data and which were guesses made under time pressure.`,
  () => `Rolling back the last application release made no difference, which ruled out our own code as the trigger and moved attention to the host.`,
  () => `The on-call rotation was handed over at ${rand(24)}:00 and the new engineer continued from the notes without having to repeat any measurement.`,
  () => `Error budgets for the quarter were affected: the service spent about ${rand(30) + 5} percent of its monthly budget during the incident.`,
  () => `We also looked at memory pressure and swap activity on the hosts, and both stayed well within their normal ranges for the whole period.`,
  () => `A second alert fired for the batch jobs, but it turned out to be a consequence of the same slowdown rather than a separate problem.`,
  () => `The team lead asked for a written summary before the end of the day, which is the origin of this document.`,
];
const BLOCKS: Array<() => string[]> = [
  () => ['```', `$ uptime`, ` ${rand(24)}:${10 + rand(50)}:0${rand(9)} up ${rand(300)} days,  3 users,  load average: ${rand(20)}.${rand(99)}, ${rand(20)}.${rand(99)}, ${rand(20)}.${rand(99)}`, `$ free -m`, `               total        used        free      shared  buff/cache   available`, `Mem:           ${64000 + rand(900)}       ${20000 + rand(900)}        ${1000 + rand(900)}         ${rand(900)}       ${40000 + rand(900)}       ${42000 + rand(900)}`, '```'],
  () => ['```', ...Array.from({ length: 6 }, (_, i) => `2024-05-${10 + rand(18)}T0${rand(9)}:${10 + i * 7}:${10 + rand(49)}Z app[${1000 + rand(9000)}]: request ${rand(99999)} took ${100 + rand(9000)} ms (limit 1000 ms)`), '```'],
  () => ['```', `$ cat /proc/${1000 + rand(9000)}/stack`, `[<0>] io_schedule+0x42/0x70`, `[<0>] folio_wait_bit_common+0x13d/0x350`, `[<0>] filemap_get_pages+0x5e1/0x620`, `[<0>] filemap_read+0xd2/0x340`, `[<0>] vfs_read+0x1e8/0x2c0`, `[<0>] ksys_read+0x6f/0xf0`, `[<0>] do_syscall_64+0x59/0x90`, '```'],
  () => ['```ini', '[global]', `ioengine=libaio`, `direct=1`, `runtime=${60 + rand(240)}`, '', '[randread]', `rw=randread`, `bs=4k`, `iodepth=${1 << rand(6)}`, '```'],
];
const HEADINGS = ['## Timeline', '## Impact', '## Background', '## What we tried first', '## Root cause analysis', '## Follow-ups', '## Lessons learned', '## Appendix: notes'];

function paragraph(): string[] {
  const sentences = Array.from({ length: 2 + rand(4) }, () => pick(PROSE)());
  // Wrapped at ~100 columns, as an editor does.
  const lines: string[] = [];
  let line = '';
  for (const w of sentences.join(' ').split(' ')) {
    if (line && line.length + w.length + 1 > 100) { lines.push(line); line = w; } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return [...lines, ''];
}

function realistic(i: number): string {
  const core = vary(parts[i % parts.length]!).split('\n').filter((l) => !/^# /.test(l));
  const out: string[] = [`# Postmortem ${i}: slow requests on ${pick(SERVICES)}`, '', '## Summary', '', ...paragraph()];
  const at = 60 + rand(120);
  let blocks = 0;
  let inserted = false;
  while (out.length < LINES) {
    if (!inserted && out.length >= at) {
      out.push('## The return probe investigation', '', ...core, '');
      inserted = true;
      continue;
    }
    if (rand(6) === 0) out.push(pick(HEADINGS), '');
    out.push(...paragraph());
    if (blocks < 4 && rand(5) === 0) {
      blocks++;
      out.push(...pick(BLOCKS)(), '');
    }
  }
  if (!inserted) out.splice(out.length - core.length - 2, core.length + 2, '## The return probe investigation', '', ...core);
  return `${out.slice(0, LINES).join('\n')}\n`;
}

function stitched(i: number): string {
  const out: string[] = [`# Generated write-up ${i}`, ''];
  let k = i;
  while (out.length < LINES) out.push(...vary(parts[k++ % parts.length]!).split('\n'));
  return `${out.slice(0, LINES).join('\n')}\n`;
}

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
