/**
 * `npm run screenshots`: the investigation report of a lab case (with its recorded trace), of a
 * generated 1 M-record ledger and of a write-up, rendered by Debian's chromium (the browser test's,
 * installed by scripts/install-test-deps.sh) with scripts off, as PNG: each whole page (with its
 * HTML, under --out, not committed: ~850 KiB a page) and each picture alone with its caption
 * (`<report>-fig-<name>.png`, 20-40 KiB, under --figures: docs/screenshots/ is committed).
 *
 *   node dist/scripts/screenshots.js [--out test-output/screenshots] [--figures docs/screenshots] [--events 1000000] [--dir bench-out]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { ensureTrace, generatedCase } from './report-case.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const CHROMIUM = '/usr/bin/chromium';

const argv = process.argv.slice(2);
const get = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const out = path.resolve(get('--out') ?? path.join(root, 'test-output', 'screenshots'));
const events = Number(get('--events') ?? 1_000_000);
const dir = path.join(path.resolve(get('--dir') ?? path.join(root, 'bench-out')), `gen-${events}`);
const figures = path.resolve(get('--figures') ?? path.join(root, 'docs', 'screenshots'));
mkdirSync(out, { recursive: true });
mkdirSync(figures, { recursive: true });

function report(name: string, args: string[]): string {
  const html = path.join(out, `${name}.html`);
  const r = spawnSync(process.execPath, [path.join(root, 'dist/src/bin.js'), 'report', ...args, '-o', html, '--force'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`report ${name} exited ${r.status}: ${r.stderr}`);
  return html;
}

const truth = ensureTrace(root, dir, events);
const generated = path.join(dir, 'report-case.yaml');
writeFileSync(generated, generatedCase(truth));
const reports: Array<[string, string]> = [
  ['lab-6-12-constrained', report('lab-6-12-constrained', ['cases/lab/6.12/constrained.yaml', '--ops', 'test/fixtures/ledger/fixture-r2.ops.jsonl', '--trace', 'test/fixtures/ledger/fixture-r2.trace.txt', '--capture-stop-ns', '6200000000'])],
  [`generated-${events}`, report(`generated-${events}`, [generated, '--ops', path.join(dir, 'ops.jsonl'), '--trace', path.join(dir, 'probe.jsonl'), '--capture-stop-ns', String(truth.stop_us * 1000)])],
  ['writeup-nfsd-module-postmortem', report('writeup-nfsd-module-postmortem', ['cases/writeups/nfsd-module-postmortem.md'])],
];

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
try {
  const page = await browser.newPage({ javaScriptEnabled: false, viewport: { width: 1100, height: 900 } });
  await page.route('**/*', (route) => route.abort());
  for (const [name, html] of reports) {
    await page.setContent(readFileSync(html, 'utf8'), { waitUntil: 'load' });
    const full = path.join(out, `${name}.png`);
    await page.screenshot({ path: full, fullPage: true });
    const written = [full];
    // Each picture alone, with its caption.
    for (const fig of await page.$$('figure')) {
      const f = path.join(figures, `${name}-${(await fig.getAttribute('id')) ?? 'figure'}.png`);
      await fig.screenshot({ path: f });
      written.push(f);
    }
    for (const f of written) process.stdout.write(`${path.relative(root, f)}  ${(statSync(f).size / 1024).toFixed(0)} KiB\n`);
  }
} finally {
  await browser.close();
}
