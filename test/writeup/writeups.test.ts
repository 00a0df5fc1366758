import { promises as fs } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_KINDS, loadRules, type Rules } from '../../src/index.js';
import { compareClaims, compareFacts, judgeWriteup, loadLexicon, loadWriteup, type Extraction, type Lexicon, type Sidecar } from '../../src/writeup/index.js';
import type { CaseVerdict } from '../../src/verdict/verdict.js';

// The shipped write-ups, judged per fact against their sidecars, and covered like the cases.
const root = path.resolve(import.meta.dirname, '../..');
const dir = path.join(root, 'cases', 'writeups');
let rules: Rules;
let lex: Lexicon;
let all: Array<{ file: string; x: Extraction; sidecar: Sidecar | undefined; v: CaseVerdict }>;

/** The write-ups under `dir`, as `audit DIR` finds them (src/audit/inputs.ts owns the walk). */
async function writeupFiles(dir: string): Promise<string[]> {
  const { expandInputs } = await import('../../src/audit/inputs.js');
  const out: string[] = [];
  // real/ holds real threads, scored against an expert's expectations (corpus.test.ts).
  for await (const ref of expandInputs([dir], { cwd: dir, exclude: ['real'] })) if (!(ref instanceof Error) && ref.kind === 'writeup') out.push(ref.file);
  return out;
}

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  lex = await loadLexicon(path.join(root, 'rules'));
  all = [];
  for (const file of await writeupFiles(dir)) {
    const { extraction: x, sidecar } = await loadWriteup(file, lex);
    all.push({ file: path.basename(file), x, sidecar, v: await judgeWriteup(x, rules, lex, sidecar) });
  }
});

describe('shipped write-ups', () => {
  it('are at least 15, each with a sidecar', () => {
    expect(all.length).toBeGreaterThanOrEqual(15);
    for (const w of all) expect([w.file, w.sidecar !== undefined]).toEqual([w.file, true]);
  });

  it('extract exactly the facts their sidecar lists: none invented, none missed', () => {
    for (const w of all) expect([w.file, compareFacts(w.x.facts, w.sidecar!.facts)]).toEqual([w.file, []]);
  });

  it('find exactly the claims their sidecar lists, at those lines, with those judgements', () => {
    for (const w of all) expect([w.file, compareClaims(w.x, w.v, w.sidecar!.claims)]).toEqual([w.file, []]);
  });

  it('get their expected verdict and everything else the sidecar expects', () => {
    for (const w of all) expect([w.file, w.v.verdict, w.v.expected?.problems]).toEqual([w.file, w.sidecar!.verdict, []]);
  });

  it('cover every claim kind but other, and all three judgements', () => {
    const kinds = new Set(all.flatMap((w) => w.x.claims.map((c) => c.kind)));
    for (const k of CLAIM_KINDS.filter((k) => k !== 'other')) expect([k, kinds.has(k)]).toEqual([k, true]);
    const judgements = new Set(all.flatMap((w) => w.v.claims.map((c) => c.judgement)));
    expect([...judgements].sort()).toEqual(['overreach', 'supported', 'unsupported']);
  });

  it('cover every artifact kind the project parses', () => {
    const via = new Set(all.flatMap((w) => w.x.facts.filter((f) => f.origin === 'artifact').map((f) => f.via)));
    for (const k of ['kprobe_profile', 'kprobe_events', 'kprobe_events-write', 'error_log', 'kprobes_list', 'uname', 'cpu_possible', 'bpftool-link', 'bpftool-prog', 'bpftrace', 'dmesg', 'perf-probe', 'module-source']) {
      expect([k, via.has(k)]).toEqual([k, true]);
    }
  });

  it('cover every interface, fexit included, and kernels 4.x to 7.x', () => {
    const ifaces = new Set(all.map((w) => w.x.case.probe?.interface));
    for (const i of ['module', 'tracefs', 'perf-probe', 'bpftrace', 'bpf-link', 'other']) expect([i, ifaces.has(i as never)]).toEqual([i, true]);
    const majors = new Set(all.map((w) => String(w.x.case.kernel?.release ?? '').split('.')[0]));
    for (const m of ['4', '5', '6', '7']) expect([m, majors.has(m)]).toEqual([m, true]);
  });

  it('include the negatives: a careful stall, a write-up with no facts, one quoting the article table', () => {
    const byFile = new Map(all.map((w) => [w.file, w]));
    const careful = byFile.get('careful-stall-7x.md')!;
    expect(careful.v.verdict).toBe('evidence-of-stall');
    expect(careful.v.claims.map((c) => [c.kind, c.judgement])).toEqual([['function-stuck', 'supported'], ['function-stuck', 'supported'], ['deadlock', 'overreach']]);
    const none = byFile.get('no-facts-at-all.txt')!;
    expect([none.x.facts.length, none.x.claims.length, none.v.verdict]).toEqual([0, 0, 'insufficient-evidence']);
    expect(none.v.missing.length).toBeGreaterThan(0);
    const table = byFile.get('quotes-the-article-table.md')!;
    expect(table.x.claims).toEqual([]);
    expect(table.x.facts.some((f) => f.path.startsWith('counters.'))).toBe(false);
  });

  it('cite every fact of the built case with file:line:col', () => {
    for (const w of all) {
      for (const [field, at] of Object.entries(w.x.case.provenance ?? {})) expect([w.file, field, /:\d+:\d+$/.test(at)]).toEqual([w.file, field, true]);
      for (const c of w.x.case.claims ?? []) expect([w.file, /:\d+:\d+$/.test(c.at ?? '')]).toEqual([w.file, true]);
    }
  });

  it('build exactly the case the case schema parses them to (fields in format order)', async () => {
    const { caseSchema } = await import('../../src/case/schema.js');
    for (const w of all) expect([w.file, JSON.stringify(w.x.case)]).toEqual([w.file, JSON.stringify(caseSchema.parse(w.x.case))]);
  });

  it('report disagreeing values as a finding, and explicit facts win', () => {
    const nfsd = all.find((w) => w.file === 'nfsd-module-postmortem.md')!;
    expect(nfsd.v.findings.map((f) => f.rule)).toContain('writeup/facts-disagree');
    expect(nfsd.x.case.counters?.end?.nmissed).toBe(28);
    const fenced = all.find((w) => w.file === 'fenced-case-block.md')!;
    expect(fenced.x.conflicts.map((c) => [c.path, c.chosen.origin, c.chosen.value])).toEqual([['probe.maxactive.requested', 'explicit', 8]]);
  });
});

describe('sidecars', () => {
  it('sit next to a write-up each', async () => {
    const names = await fs.readdir(dir);
    for (const n of names.filter((x) => x.endsWith('.expect'))) expect([n, names.includes(n.slice(0, -'.expect'.length))]).toEqual([n, true]);
  });
});
