/**
 * `npm run bench:report`: the investigation report for a generated 10 M-record ledger (both
 * input forms: trace text and probe.jsonl), each in a child process so that its peak RSS is its
 * own. Prints the time, the peak RSS and the HTML size (target: under 2 MB), and whether the
 * in-flight picture kept the generator's exact peak. Benchmarks print figures; nothing here
 * asserts a time.
 *
 *   node dist/scripts/bench-report.js [--events 10000000] [--dir bench-out]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureTrace, generatedCase } from './report-case.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const TARGET_BYTES = 2 * 1024 * 1024;

/** Child: the real CLI entry with the report command. */
async function child(args: string[]): Promise<void> {
  const { main } = await import(pathToFileURL(path.join(root, 'dist/src/cli.js')).href);
  const t0 = performance.now();
  const { bufferedIo } = (await import(pathToFileURL(path.join(root, 'dist/src/io.js')).href)) as typeof import('../src/io.js');
  const io = bufferedIo(process.cwd(), process.stdin);
  const code: number = await main(['report', ...args], io);
  if (code !== 0) process.stderr.write(io.err);
  process.stdout.write(JSON.stringify({ ms: performance.now() - t0, maxRssMb: process.resourceUsage().maxRSS / 1024, code }));
}

async function bench(argv: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const events = Number(get('--events') ?? 10_000_000);
  const base = path.resolve(get('--dir') ?? path.join(root, 'bench-out'));
  // The same directory bench:ledger uses, so one generated trace serves both.
  const dir = path.join(base, `gen-${events}`);
  const truth = ensureTrace(root, dir, events);
  const caseFile = path.join(dir, 'report-case.yaml');
  writeFileSync(caseFile, generatedCase(truth));
  for (const [form, peak] of [['trace.txt', truth.text.high_water], ['probe.jsonl', truth.jsonl.high_water]] as const) {
    const out = path.join(dir, `report-${form.replace('.', '-')}.html`);
    const args = [caseFile, '--ops', path.join(dir, 'ops.jsonl'), '--trace', path.join(dir, form), '--capture-stop-ns', String(truth.stop_us * 1000), '-o', out, '--force'];
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', ...args], { encoding: 'utf8', maxBuffer: 16 << 20 });
    if (r.status !== 0) throw new Error(`report on ${form} failed: ${r.stderr}`);
    const res = JSON.parse(r.stdout) as { ms: number; maxRssMb: number; code: number };
    if (res.code !== 0) throw new Error(`report on ${form} exited ${res.code}`);
    const size = statSync(out).size;
    const html = readFileSync(out, 'utf8');
    const shownPeak = /data-k="observed:\/series\/peak">(\d+)</.exec(html)?.[1];
    // Trace text with a separate entry event: the series is the ledger's demand ceiling (missed
    // calls' entries never return), which the page must show as its peak; probe.jsonl: admitted.
    const ceiling = /data-k="ledger:\/demand\/upper">(\d+)</.exec(html)?.[1];
    const records = form === 'trace.txt' ? truth.trace_records : truth.jsonl_records;
    process.stdout.write(
      [
        `${form.padEnd(11)} ${String(records).padStart(9)} records -> ${path.relative(root, out)}`,
        `time ${(res.ms / 1000).toFixed(2)} s  (${(records / (res.ms / 1000) / 1e6).toFixed(2)} M records/s)  peak RSS ${res.maxRssMb.toFixed(0)} MB`,
        `HTML ${(size / 1024).toFixed(1)} KiB (target < ${TARGET_BYTES / 1048576} MiB: ${size < TARGET_BYTES ? 'met' : 'NOT MET'})`,
        form === 'trace.txt'
          ? `in-flight peak shown ${shownPeak ?? 'missing'} = ledger demand ceiling ${ceiling ?? 'missing'}: ${shownPeak !== undefined && shownPeak === ceiling ? 'consistent' : 'MISMATCH'} (generator truth: admitted ${peak}, demand ${truth.text.demand_high_water}; accepted instances cannot be drawn from trace text without ids)`
          : `in-flight peak shown ${shownPeak ?? 'missing'}, generator truth ${peak}: ${shownPeak === String(peak) ? 'exact' : 'MISMATCH'}`,
      ].join('\n    ') + '\n',
    );
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') await child(argv.slice(1));
else await bench(argv);
