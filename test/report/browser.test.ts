import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCase } from '../../src/index.js';
import { caseFacts } from '../../src/facts/facts.js';
import { pointer, SECTION_IDS } from '../../src/report/investigation/document.js';
import { refText, type Unit } from '../../src/report/investigation/values.js';
import { generatedCase } from '../../scripts/report-case.js';
import type { Truth } from '../../scripts/gen-trace.js';
import { cli, ROOT } from '../cli/helpers.js';
import { layoutViolations, type LayoutRules } from './layout.js';

/**
 * The investigation report in a real browser: Debian's chromium (installed by
 * scripts/install-test-deps.sh) driven by playwright-core, scripts off, every request refused.
 * Screenshots go to test-output/report-browser/ (look at them).
 *
 * Three reports: a lab case with its recorded trace, a generated 1 M-record ledger (the 10 M
 * one is `npm run bench:report`: generating and reading it twice would take minutes here) and a
 * write-up. On each, the pictures' layout is measured (test/report/layout.ts).
 */
const CHROMIUM = '/usr/bin/chromium';
const OUT = path.join(ROOT, 'test-output', 'report-browser');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Labels, not values: percentile names. */
const LABELS = /\bp(50|90|99)\b/g;
/** The axes each picture draws: the in-flight count over time and the duration histogram. */
const AXES: LayoutRules = { axes: { inflight: ['x', 'y'], durations: ['x', 'y'] } };

let browser: BrowserContext;
let profile: string;
const work = mkdtempSync(path.join(tmpdir(), 'krt-browser-'));

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/install-test-deps.sh (it installs Debian's chromium)`);
  mkdirSync(OUT, { recursive: true });
  profile = mkdtempSync(path.join(tmpdir(), 'krt-chromium-profile-'));
  browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, javaScriptEnabled: false, viewport: { width: 1100, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(profile, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

interface Sources {
  verdict: Record<string, unknown>;
  ledger: Record<string, unknown>;
  case: unknown;
  facts: Map<string, unknown>;
  /** Checks of the report's own pass (series, counter snapshots) against independent figures. */
  observed: (p: string, shown: string) => void;
}

/** The JSON the page must agree with, computed by the ledger and audit commands on a copy of the case. */
async function sourcesFor(caseFile: string, ledgerArgs: string[], shownFile: string): Promise<Omit<Sources, 'observed'>> {
  const copy = path.join(work, `${path.basename(caseFile, '.yaml')}-copy.yaml`);
  copyFileSync(caseFile, copy);
  const l = cli(['ledger', ...ledgerArgs, '--case', copy, '--format', 'json']);
  expect(l.code, l.stderr).toBe(0);
  const a = cli(['audit', copy, '--format', 'json']);
  expect(a.stderr).toBe('');
  const verdict = JSON.parse(a.stdout) as Record<string, unknown>;
  verdict.file = shownFile;
  const data = (await loadCase(copy)).data;
  return { verdict, ledger: JSON.parse(l.stdout) as Record<string, unknown>, case: data, facts: caseFacts(data).values };
}

async function openReport(htmlFile: string) {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route('**/*', (route) => route.abort());
  await page.setContent(readFileSync(htmlFile, 'utf8'), { waitUntil: 'load' });
  return { page, requests, errors };
}

/** An accounting term the verdict leaves unknown is drawn: a hatched share of the bar at least 8 px wide. */
async function expectUnknownVisible(page: Page, verdict: Record<string, unknown>): Promise<void> {
  const a = verdict.accounting as Record<string, unknown>;
  const unknown = ['returned', 'filtered', 'in_flight_at_stop', 'capacity_missed', 'not_covered', 'unexplained'].filter((t) => a[t] === null);
  if (!unknown.length) return;
  // Every part unknown, eligible too: the bar has nothing to draw and is left out (the sentence says it).
  if (unknown.length === 6 && a.eligible === null) {
    expect(await page.locator('#fig-identity').count()).toBe(0);
    return;
  }
  const hatch = page.locator('#fig-identity [data-term="unknown"]');
  expect(await hatch.count(), `unknown: ${unknown.join(', ')}`).toBe(1);
  expect((await hatch.boundingBox())!.width).toBeGreaterThanOrEqual(8);
}

/** Every value on the page equal to the JSON it names (data-k), formatted as the page formats it; no value is a JSON dump. */
async function expectValuesFromSources(page: Page, src: Sources) {
  const refs = await page.$$eval('[data-k]', (els) => els.map((e) => ({ k: e.getAttribute('data-k')!, unit: e.getAttribute('data-unit'), v: e.getAttribute('data-v'), nul: e.getAttribute('data-null'), text: e.textContent ?? '' })));
  for (const r of refs) {
    expect(r.text, `${r.k}: a JSON dump`).not.toMatch(/^[{[]/);
    const i = r.k.indexOf(':');
    const source = r.k.slice(0, i);
    const p = r.k.slice(i + 1);
    if (source === 'observed') {
      src.observed(p, r.text);
      continue;
    }
    const v = source === 'verdict' ? pointer(src.verdict, p) : source === 'ledger' ? pointer(src.ledger, p) : source === 'case' ? pointer(src.case, p) : source === 'fact' ? src.facts.get(p) : Symbol(source);
    expect(typeof v, `${r.k}: unknown source`).not.toBe('symbol');
    if (r.v !== null) expect(Number(r.v), r.k).toBe(v);
    expect(r.text, r.k).toBe(refText(v, (r.unit ?? undefined) as Unit | undefined, r.nul ?? undefined));
  }
  return refs;
}

async function checkInBrowser(name: string, htmlFile: string, src: Sources): Promise<number> {
  const { page, requests, errors } = await openReport(htmlFile);
  await expectUnknownVisible(page, src.verdict);
  expect(await layoutViolations(page, AXES)).toEqual([]);
  for (const id of SECTION_IDS) expect(await page.locator(`section#${id} > h2`).isVisible(), id).toBe(true);
  expect(await page.locator('figure svg').count()).toBe(3);
  for (const fig of ['inflight', 'durations', 'identity']) expect(await page.locator(`#fig-${fig} svg`).isVisible(), fig).toBe(true);

  const refs = await expectValuesFromSources(page, src);
  // Every other digit on the page is an axis tick: nothing shown is a number without a source.
  const stray = await page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
      const el = n.parentElement;
      if (el === null || el.closest('[data-k], [data-tick], title, desc, style') !== null) continue;
      if (/\d/.test(n.textContent ?? '')) out.push(n.textContent!.trim());
    }
    return out;
  });
  expect(stray.map((s) => s.replace(LABELS, '')).filter((s) => /\d/.test(s))).toEqual([]);

  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  await page.emulateMedia({ media: 'print' });
  expect(await page.locator('#fig-inflight svg').isVisible()).toBe(true);
  await page.screenshot({ path: path.join(OUT, `${name}-print.png`), fullPage: true });
  await page.close();
  expect(errors).toEqual([]);
  expect(requests).toEqual([]);
  return refs.length;
}

describe('the investigation report in chromium', () => {
  it('a lab case with its recorded trace: every section, every value equal to the verdict, ledger and case JSON', async () => {
    const caseFile = 'cases/lab/6.12/constrained.yaml';
    const ledgerArgs = ['--ops', 'test/fixtures/ledger/fixture-r2.ops.jsonl', '--trace', 'test/fixtures/ledger/fixture-r2.trace.txt', '--capture-stop-ns', '6200000000'];
    const html = path.join(OUT, 'lab-6-12-constrained.html');
    const r = cli(['report', caseFile, ...ledgerArgs, '-o', html, '--force']);
    expect(r.code, r.stderr).toBe(0);
    const src = await sourcesFor(path.join(ROOT, caseFile), ledgerArgs, caseFile);
    const ledger = src.ledger as { high_water: { value: number }; demand?: { value: number; upper: number | null }; records: { entries: number; returns: number; filtered: number } };
    const checked = await checkInBrowser('lab-6-12-constrained', html, {
      ...src,
      observed: (p, shown) => {
        // Trace text with a separate entry event: the series counts open entry events (demand).
        if (p === '/series/peak') expect(shown).toBe(String(ledger.demand ? ledger.demand.upper : ledger.high_water.value));
        else if (p === '/series/samples') expect(shown).toBe(String(ledger.records.entries + ledger.records.returns + ledger.records.filtered));
        else if (p === '/series/buckets') expect(Number(shown)).toBeLessThanOrEqual(800);
        else if (p !== '/series/widthNs') throw new Error(`unexpected observed value ${p}`);
      },
    });
    expect(checked).toBeGreaterThan(150);
  }, 120_000);

  it('a generated 1 M-record ledger: the same checks, the peak kept, counters per epoch equal to the generator truth', async () => {
    const dir = path.join(work, 'gen-1m');
    const g = spawnSync(process.execPath, [path.join(ROOT, 'dist/scripts/gen-trace.js'), '--events', '1000000', '--out', dir], { encoding: 'utf8' });
    expect(g.status, g.stderr).toBe(0);
    const truth = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as Truth;
    const caseFile = path.join(dir, 'case.yaml');
    writeFileSync(caseFile, generatedCase(truth));
    const ledgerArgs = ['--ops', path.join(dir, 'ops.jsonl'), '--trace', path.join(dir, 'probe.jsonl'), '--capture-stop-ns', String(truth.stop_us * 1000)];
    const html = path.join(OUT, 'generated-1m.html');
    const r = cli(['report', caseFile, ...ledgerArgs, '-o', html, '--force']);
    expect(r.code, r.stderr).toBe(0);
    const src = await sourcesFor(caseFile, ledgerArgs, caseFile);
    const ledger = src.ledger as { high_water: { value: number } };
    expect(ledger.high_water.value).toBe(truth.jsonl.high_water);
    const epoch = { epoch: 'reg-1', first: '0', last: String(truth.nmissed), snapshots: '2', delta: String(truth.nmissed) };
    const seen = new Set<string>();
    const checked = await checkInBrowser('generated-1m', html, {
      ...src,
      observed: (p, shown) => {
        seen.add(p);
        const m = /^\/counters\/0\/(\w+)$/.exec(p);
        if (m) expect(shown, p).toBe(epoch[m[1] as keyof typeof epoch]);
        else if (p === '/series/peak') expect(shown).toBe(String(truth.jsonl.high_water));
        else if (p === '/series/samples') expect(Number(shown)).toBe(truth.jsonl_records); // entries, returns, filtered: every record but the counter snapshots
        else if (p === '/series/buckets') expect(Number(shown)).toBeLessThanOrEqual(800);
        else if (p !== '/series/widthNs') throw new Error(`unexpected observed value ${p}`);
      },
    });
    expect([...seen]).toEqual(expect.arrayContaining(['/counters/0/delta', '/series/peak']));
    expect(checked).toBeGreaterThan(150);
  }, 180_000);

  it('a write-up: every value equal to the audit verdict and the extracted case, its one picture (the identity bar) laid out without collisions, nothing fetched', async () => {
    const html = path.join(OUT, 'writeup-nfsd-module-postmortem.html');
    const r = cli(['report', 'cases/writeups/nfsd-module-postmortem.md', '-o', html, '--force']);
    expect(r.code, r.stderr).toBe(0);
    // The sources: the verdict as audit gives it, the case as writeup extract writes it.
    const a = cli(['audit', 'cases/writeups/nfsd-module-postmortem.md', '--format', 'json']);
    expect(a.stderr).toBe('');
    const extracted = path.join(work, 'writeup-extracted.yaml');
    const x = cli(['writeup', 'extract', 'cases/writeups/nfsd-module-postmortem.md', '-o', extracted, '--force']);
    expect(x.code, x.stderr).toBe(0);
    const data = (await loadCase(extracted)).data;
    const verdict = JSON.parse(a.stdout) as Record<string, unknown>;
    const { page, requests, errors } = await openReport(html);
    await expectUnknownVisible(page, verdict);
    const refs = await expectValuesFromSources(page, {
      verdict,
      ledger: {},
      case: data,
      facts: caseFacts(data).values,
      observed: (p) => {
        throw new Error(`unexpected observed value ${p}`);
      },
    });
    expect(refs.length).toBeGreaterThan(100);
    expect(await page.locator('figure svg').count()).toBe(1);
    expect(await page.locator('#fig-identity svg').isVisible()).toBe(true);
    expect(await layoutViolations(page, AXES)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'writeup-nfsd-module-postmortem.png'), fullPage: true });
    await page.close();
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
  }, 60_000);
  // More shapes of picture: percentiles from the case alone (no trace), a failed registration,
  // filtering, a capture at an uptime of centuries (timestamps past 2^53 ns).
  it.each([
    ['percentiles from the case alone', ['cases/lab/6.12/adequate.yaml']],
    ['a stopped probe', ['cases/lab/6.12/stopped.yaml']],
    ['a filtering entry handler', ['cases/lab/6.12/mod-filtering.yaml']],
    ['a refused registration', ['cases/lab/6.12/fail-r0.yaml']],
    ['timestamps past 2^53 ns', ['cases/lab/6.12/constrained.yaml', '--ops', 'test/fixtures/ledger/truths/uptime-570y.ops.jsonl', '--trace', 'test/fixtures/ledger/truths/uptime-570y.probe.jsonl']],
  ])('%s: the pictures are laid out without collisions', async (name, args) => {
    const html = path.join(work, `${name.replace(/\W+/g, '-')}.html`);
    const r = cli(['report', ...args, '-o', html, '--force']);
    expect(r.code, r.stderr).toBe(0);
    const { page, requests, errors } = await openReport(html);
    // Percentiles without a distribution have no counts, so no count axis.
    expect(await layoutViolations(page, { axes: { inflight: ['x', 'y'], durations: ['x'] } })).toEqual([]);
    await page.close();
    expect([...errors, ...requests]).toEqual([]);
  });
});

// The layout checks on pictures made to break each one: a check that passes these is no check.
const figure = (name: string, body: string, w = 200, h = 100) => `<figure id="fig-${name}"><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" font-family="sans-serif" font-size="12">${body}</svg></figure>`;
const fourTicks = (axis: 'x' | 'y') => [10, 50, 90, 130].map((x) => (axis === 'x' ? `<text data-tick="x" x="${x}" y="95">${x}</text>` : `<text data-tick="y" x="4" y="${x / 2 + 10}" font-size="8">${x}</text>`)).join('');
describe('the layout checks fail on a broken picture', () => {
  it.each([
    ['overlap', figure('a', '<text x="10" y="30">capture stop</text><text x="30" y="32">peak 3</text>'), /a: overlap/],
    ['on-marker', figure('a', '<rect class="bins" x="20" y="10" width="50" height="60"/><text x="30" y="40">p50 2 ms</text>'), /a: on-marker "p50 2 ms" on \.bins/],
    ['clipped', figure('a', '<text x="150" y="30">accounting identity</text>'), /a: clipped/],
    ['too few ticks', figure('durations', `${fourTicks('x')}<text data-tick="y" x="4" y="20">2</text><text data-tick="y" x="4" y="80">0</text>`), /durations: ticks y 2/],
    ['a required axis missing', figure('inflight', fourTicks('x')), /inflight: ticks y 0/],
    ['a word split between spans', figure('a', '<text x="10" y="30">not covered: <tspan>unknow</tspan><tspan>n</tspan></text>'), /a: broken-word "unknow\|n"/],
    ['a word split between texts', figure('a', '<text x="10" y="30" text-anchor="end" transform="translate(60 0)">unknow</text><text x="70" y="30">n</text>'), /a: broken-word/],
  ])('%s', async (_, body, expected) => {
    const page = await browser.newPage();
    await page.setContent(`<!DOCTYPE html><html><body style="margin:0">${body}</body></html>`);
    const v = await layoutViolations(page, AXES);
    await page.close();
    expect(v.join('\n')).toMatch(expected);
  });

  it('a clean picture passes', async () => {
    const page = await browser.newPage();
    await page.setContent(`<!DOCTYPE html><html><body>${figure('durations', `${fourTicks('x')}${fourTicks('y')}<text x="40" y="20">p50 2 ms</text>`)}</body></html>`);
    expect(await layoutViolations(page, AXES)).toEqual([]);
    await page.close();
  });
});
