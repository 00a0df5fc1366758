import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadCase, loadRules, evaluateCase } from '../../src/index.js';
import { caseFacts } from '../../src/facts/facts.js';
import { LogHistogram } from '../../src/ledger/histogram.js';
import { toVerdictJson } from '../../src/report/json.js';
import { investigationDocument, pointer, SECTION_IDS, type InvestigationInput } from '../../src/report/investigation/document.js';
import { formatInvestigationHtml } from '../../src/report/investigation/html.js';
import { formatInvestigationMarkdown } from '../../src/report/investigation/markdown.js';
import { InFlightSeries, ReportObserver } from '../../src/report/investigation/observe.js';
import { identityBarSvg, inFlightSvg } from '../../src/report/investigation/svg.js';
import { refText, type Unit } from '../../src/report/investigation/values.js';
import { cli, ROOT } from '../cli/helpers.js';

const FIX = 'test/fixtures/ledger';
const LAB = 'cases/lab/6.12/constrained.yaml';
const ledgerArgs = ['--ops', `${FIX}/fixture-r2.ops.jsonl`, '--trace', `${FIX}/fixture-r2.trace.txt`, '--capture-stop-ns', '6200000000'];

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every `data-k` element of an HTML or SVG text: key, raw value (data-v), null text and shown text. */
type Shown = { k: string; unit?: Unit; v?: string; nul?: string; text: string };
function refsOf(html: string): Shown[] {
  const out: Shown[] = [];
  const unesc = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  for (const m of html.matchAll(/<(?:span|tspan)(?: class="v")? data-k="([^"]*)"(?: data-unit="([^"]*)" data-v="([^"]*)")?(?: data-null="([^"]*)")?>([^<]*)</g)) {
    out.push({ k: unesc(m[1]!), ...(m[3] !== undefined ? { unit: m[2] as Unit, v: m[3] } : {}), ...(m[4] !== undefined ? { nul: unesc(m[4]) } : {}), text: unesc(m[5]!) });
  }
  return out;
}

describe('in-flight series', () => {
  it.each([
    ['a random walk of 20k records, 64 buckets', 20_000, 64, 1],
    ['bursts far apart, 16 buckets', 5_000, 16, 7],
  ])('%s: each bucket holds the exact min and max of its records, and the peak survives', (_name, n, size, seed) => {
    const rnd = mulberry(seed);
    const s = new InFlightSeries(size);
    const samples: Array<[number, number]> = [];
    let t = 1_000_000;
    let v = 0;
    for (let i = 0; i < n; i++) {
      t += rnd() < 0.001 ? Math.floor(rnd() * 1e9) : Math.floor(rnd() * 2000);
      v = Math.max(0, v + (rnd() < 0.5 ? -1 : 1));
      samples.push([v, t]);
      s.add(v, t);
    }
    const d = s.data();
    expect(d.buckets.length).toBeLessThanOrEqual(size);
    const peak = samples.reduce((m, x) => Math.max(m, x[0]), 0);
    expect(d.peak).toBe(peak);
    expect(d.peakAtNs).toBe(samples.find((x) => x[0] === peak)![1]);
    expect(d.buckets.reduce((m, b) => Math.max(m, b.max), 0)).toBe(peak);
    // Brute force per bucket.
    for (const b of d.buckets) {
      const inside = samples.filter(([, ts]) => ts >= b.startNs && ts < b.startNs + d.widthNs).map(([x]) => x);
      expect(b.n).toBe(inside.length);
      if (inside.length) {
        expect(b.min).toBe(inside.reduce((m, x) => Math.min(m, x), Infinity));
        expect(b.max).toBe(inside.reduce((m, x) => Math.max(m, x), 0));
        expect(b.last).toBe(inside[inside.length - 1]);
      }
    }
    expect(d.buckets.reduce((a, b) => a + b.n, 0)).toBe(n);
  });
});

describe('histogram bins', () => {
  it('add up to the count and cover min..max', () => {
    const h = new LogHistogram();
    const rnd = mulberry(3);
    for (let i = 0; i < 10_000; i++) h.add(Math.floor(Math.exp(rnd() * 20)));
    h.add(0);
    const bins = h.bins(4);
    expect(bins.reduce((a, b) => a + b.count, 0)).toBe(h.count);
    expect(bins[0]!.loNs).toBe(0);
    expect(bins[bins.length - 1]!.hiNs).toBeGreaterThan(h.max);
    expect(() => h.bins(5)).toThrow();
  });
});

describe('the ledger observer', () => {
  it('sees what the ledger sees: the series peak is the high-water mark, the durations the same distribution', async () => {
    const { runLedger } = await import('../../src/commands/ledger.js');
    const obs = new ReportObserver();
    const ctx = { io: { stdout: () => {}, stderr: () => {}, stdin: process.stdin, interactive: false, stderrIsTTY: false, env: {}, cwd: ROOT, color: false }, exit: () => {} };
    const { report } = await runLedger(ctx, { ops: `${FIX}/fixture-r2.ops.jsonl`, trace: `${FIX}/fixture-r2.trace.txt`, format: 'json', observe: obs });
    // Trace text with a separate entry event: the series counts open entry events, i.e. demand.
    const mark = report.result.demand ?? report.result.highWater;
    expect(obs.series.data().peak).toBe(report.result.demand ? report.result.demand.upper : mark.value);
    expect(obs.series.data().peakAtNs).toBe(mark.atNs);
    expect(obs.histogram.summary()).toEqual(report.result.durations);
  });
});

describe('pictures', () => {
  const series = (() => {
    const s = new InFlightSeries(8);
    [0, 1, 2, 3, 3, 2, 1, 0].forEach((v, i) => s.add(v, 1000 + i * 100));
    return s.data();
  })();

  it('in flight: the maxactive line, the pool-full stretch, misses, capture stop and peak are marked', () => {
    const svg = inFlightSvg({ series, counted: 'accepted', peak: { k: 'ledger:/highWater/value', v: 3 }, maxactive: { k: 'ledger:/effective_maxactive/value', v: 3 }, stopNs: 2000, misses: [{ tsNs: 1400, by: 1 }], missDelta: { k: 'ledger:/counters/nmissedDelta', v: 1 }, bucket: { k: 'observed:/series/widthNs', v: series.widthNs, unit: 'ns' } });
    expect(svg.match(/class="maxactive"/g)).toHaveLength(1);
    expect(svg.match(/class="pool-full"/g)).toHaveLength(1);
    expect(svg.match(/class="miss"/g)).toHaveLength(1);
    expect(svg.match(/class="capture-stop"/g)).toHaveLength(1);
    expect(svg.match(/class="peak"/g)).toHaveLength(1);
    expect(svg).not.toMatch(/<script|href=|xlink/);
    expect(refsOf(svg).map((r) => r.k)).toEqual(expect.arrayContaining(['ledger:/highWater/value', 'ledger:/effective_maxactive/value']));
  });

  it.each([
    ['balanced, every term known', { returned: 6, filtered: 1, in_flight_at_stop: 0, capacity_missed: 3, not_covered: 0, unexplained: 0 }, 10, ['returned', 'filtered', 'capacity_missed']],
    ['a term unknown: the rest is hatched', { returned: 6, filtered: 1, in_flight_at_stop: null, capacity_missed: 3, not_covered: null, unexplained: null }, 12, ['returned', 'filtered', 'capacity_missed', 'unknown']],
  ])('identity bar, %s', (_n, terms, eligible, drawn) => {
    const svg = identityBarSvg({ k: 'e', v: eligible }, Object.entries(terms).map(([name, v]) => ({ name, ref: { k: name, v } })), { k: 'b', v: null });
    const rects = [...svg.matchAll(/data-term="([^"]+)" x="[^"]+" y="[^"]+" width="([^"]+)"/g)].map((m) => [m[1]!, Number(m[2])] as const);
    expect(rects.map((r) => r[0])).toEqual(drawn);
    // Widths are proportional to the terms (the bar is 760 wide).
    const known = rects.filter((r) => r[0] !== 'unknown');
    for (const [name, w] of known) expect(w).toBeCloseTo((terms[name as keyof typeof terms]! / eligible) * 760, 0);
  });
});

describe('report document', () => {
  let input: InvestigationInput;
  beforeAll(async () => {
    const rules = await loadRules(path.join(ROOT, 'rules'));
    const loaded = await loadCase(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'));
    const verdict = await evaluateCase(loaded, rules);
    verdict.file = 'cases/kernel-notes/r2-constrained.yaml';
    input = { file: verdict.file, case: loaded.data, facts: caseFacts(loaded.data), verdict, verdictJson: toVerdictJson(verdict) };
  });

  it('HTML: every section, its figures, no script, no external reference', () => {
    const html = formatInvestigationHtml(investigationDocument(input));
    for (const id of SECTION_IDS) expect(html).toContain(`<section id="${id}">`);
    expect(html.match(/<svg /g)).toHaveLength(1); // no trace and no latency figures: the identity bar only (an empty histogram is left out)
    expect(html).not.toMatch(/<script|<link|<img|src=|url\((?!#)/i);
  });

  it('HTML: every value shown is the one at its key in the verdict JSON, the case or the facts', () => {
    const html = formatInvestigationHtml(investigationDocument(input));
    const refs = refsOf(html);
    expect(refs.length).toBeGreaterThan(60);
    for (const r of refs) {
      const [src, p] = [r.k.slice(0, r.k.indexOf(':')), r.k.slice(r.k.indexOf(':') + 1)];
      const v = src === 'verdict' ? pointer(input.verdictJson, p) : src === 'case' ? pointer(input.case, p) : src === 'fact' ? input.facts.values.get(p) : Symbol('unknown source');
      expect(typeof v, r.k).not.toBe('symbol');
      if (r.v !== undefined) expect(Number(r.v), r.k).toBe(v);
      expect(r.text, r.k).toBe(refText(v, r.unit, r.nul));
    }
  });

  it('shows the demand high-water (concurrency.observed_demand_high_water) beside the accepted one when the case has it', () => {
    const c = structuredClone(input.case) as Record<string, Record<string, unknown>>;
    c.concurrency = { ...c.concurrency, observed_demand_high_water: 5, observed_demand_high_water_at_ns: 4010550000 };
    const refs = refsOf(formatInvestigationHtml(investigationDocument({ ...input, case: c as unknown as InvestigationInput['case'] })));
    expect(refs.find((r) => r.k === 'case:/concurrency/observed_demand_high_water')?.text).toBe('5');
    expect(refs.find((r) => r.k === 'case:/concurrency/observed_demand_high_water_at_ns')?.text).toBe('4010550000');
    expect(refs.find((r) => r.k === 'case:/concurrency/observed_high_water')?.text).toBe(String(input.case.concurrency?.observed_high_water));
  });

  it('Markdown carries the same sections and values, pictures as files', () => {
    const doc = investigationDocument(input);
    const md = formatInvestigationMarkdown(doc, 'report');
    for (const s of doc.sections) expect(md.markdown).toContain(`## ${s.title}`);
    expect(md.files.map((f) => f.name)).toEqual(['report.identity.svg']);
    for (const f of md.files) expect(md.markdown).toContain(`](${f.name})`);
    expect(md.markdown).toMatchSnapshot();
  });
});

describe('report command', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'krt-report-'));

  it('writes HTML for a lab case with its ledger, and Markdown with its SVG files beside it', () => {
    const html = path.join(dir, 'lab.html');
    const r = cli(['report', LAB, ...ledgerArgs, '-o', html]);
    expect(r.stderr).toContain('wrote');
    expect(r.code).toBe(0);
    const text = readFileSync(html, 'utf8');
    expect(text.match(/<svg /g)).toHaveLength(3);
    const md = path.join(dir, 'lab.md');
    expect(cli(['report', LAB, ...ledgerArgs, '-o', md]).code).toBe(0);
    for (const f of ['lab.inflight.svg', 'lab.durations.svg', 'lab.identity.svg']) expect(existsSync(path.join(dir, f)), f).toBe(true);
    expect(readFileSync(md, 'utf8')).toContain('](lab.inflight.svg)');
  });

  it('reports on a write-up: the case it states, judged as audit judges it', () => {
    const r = cli(['report', 'cases/writeups/pipe-read-tracefs-r2.md']);
    expect(r.code).toBe(0);
    const audit = JSON.parse(cli(['audit', 'cases/writeups/pipe-read-tracefs-r2.md', '--format', 'json']).stdout) as { verdict: string };
    expect(r.stdout).toContain(`data-k="verdict:/verdict">${audit.verdict}<`);
  });

  it('prints HTML on stdout without -o, and leaves the case file untouched', () => {
    const before = readFileSync(path.join(ROOT, LAB), 'utf8');
    const r = cli(['report', LAB, ...ledgerArgs]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(readFileSync(path.join(ROOT, LAB), 'utf8')).toBe(before);
  });

  it.each([
    ['a missing case', ['report', 'no/such.yaml'], /no\/such\.yaml: expected an existing, readable case file; got no such file/],
    ['--ops without --trace', ['report', LAB, '--ops', `${FIX}/fixture-r2.ops.jsonl`], /expected --trace with --ops/],
    ['Markdown without -o', ['report', LAB, '--format', 'markdown'], /expected -o report\.md/],
    ['a missing write-up', ['report', 'notes.md'], /notes\.md: expected an existing, readable write-up; got no such file/],
    ['an output directory that does not exist', ['report', LAB, '-o', 'no/such/dir/r.html'], /expected an existing directory for -o; got no such directory/],
  ])('%s: one line, exit 2', (_n, args, msg) => {
    const r = cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(msg);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('does not replace an existing report when the input is bad', () => {
    const out = path.join(dir, 'keep.html');
    writeFileSync(out, 'old');
    expect(cli(['report', LAB, '--trace', 'no/such.trace', '-o', out]).code).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe('old');
  });
});
