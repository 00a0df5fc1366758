/**
 * `npm run bench:ledger`: the ledger on generated traces of two lengths (1 M and 10 M trace
 * records by default), in child processes so that each peak RSS is its own. Prints events/s,
 * peak RSS, the time of a bare line-by-line read (node:readline) of the same input files, the
 * ratio between the two, and whether the ledger reproduced the generator's ground truth.
 * Benchmarks print figures; nothing here asserts a time.
 *
 *   node dist/scripts/bench-ledger.js [--sizes 1000000,10000000] [--dir bench-out]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FormTruth } from './gen-trace.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

interface ChildResult {
  ms: number;
  maxRssMb: number;
  lines?: number;
  out?: string;
  code?: number;
}

/** Child: a bare read of the files, line by line with node:readline, counting lines. */
async function childBare(files: string[]): Promise<void> {
  const { createReadStream } = await import('node:fs');
  const readline = await import('node:readline');
  const t0 = performance.now();
  let lines = 0;
  for (const f of files) {
    const rl = readline.createInterface({ input: createReadStream(f, { highWaterMark: 1 << 20 }), crlfDelay: Infinity });
    await new Promise<void>((resolve) => {
      rl.on('line', () => {
        lines++;
      });
      rl.on('close', () => resolve());
    });
  }
  const res: ChildResult = { ms: performance.now() - t0, maxRssMb: process.resourceUsage().maxRSS / 1024, lines };
  process.stdout.write(JSON.stringify(res));
}

/** Child: the real CLI entry (`main`) with the ledger command, output kept for the truth check. */
async function childLedger(args: string[]): Promise<void> {
  const { main } = await import(pathToFileURL(path.join(root, 'dist/src/cli.js')).href);
  let out = '';
  let err = '';
  const t0 = performance.now();
  const code: number = await main(['ledger', ...args, '--format', 'json'], {
    stdout: (s: string) => {
      out += s;
    },
    stderr: (s: string) => {
      err += s;
    },
    stdin: process.stdin,
    interactive: false,
    stderrIsTTY: false,
    env: {},
    cwd: process.cwd(),
    color: false,
  });
  const res: ChildResult = { ms: performance.now() - t0, maxRssMb: process.resourceUsage().maxRSS / 1024, code, out };
  if (err) process.stderr.write(err);
  process.stdout.write(JSON.stringify(res));
}

function runChild(args: string[]): ChildResult {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ChildResult;
}

function ensureTrace(dir: string, events: number): void {
  const truth = path.join(dir, 'truth.json');
  if (existsSync(truth)) {
    const t = JSON.parse(readFileSync(truth, 'utf8')) as { params: { events: number } };
    if (t.params.events === events) return;
  }
  process.stderr.write(`generating ${events} events into ${dir} ...\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'dist/scripts/gen-trace.js'), '--events', String(events), '--out', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error('gen-trace failed');
}

function checkTruth(out: string, truth: FormTruth): string {
  const r = JSON.parse(out) as { ops: { eligible: number; classification: Record<string, number> }; high_water: { value: number } };
  const got: Record<string, number> = { eligible: r.ops.eligible, ...r.ops.classification, high_water: r.high_water.value };
  const bad = Object.entries(truth).filter(([k, v]) => k in got && got[k] !== v).map(([k, v]) => `${k} ${got[k]} != ${v}`);
  return bad.length === 0 ? 'exact' : `MISMATCH: ${bad.join(', ')}`;
}

async function bench(argv: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = (get('--sizes') ?? '1000000,10000000').split(',').map(Number);
  const base = path.resolve(get('--dir') ?? path.join(root, 'bench-out'));
  const rows: string[] = [];
  for (const n of sizes) {
    const dir = path.join(base, `gen-${n}`);
    ensureTrace(dir, n);
    const truth = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as { stop_us: number; trace_records: number; jsonl_records: number; text: FormTruth; jsonl: FormTruth };
    const ops = path.join(dir, 'ops.jsonl');
    for (const form of ['trace.txt', 'probe.jsonl'] as const) {
      const trace = path.join(dir, form);
      const records = form === 'trace.txt' ? truth.trace_records : truth.jsonl_records;
      const mb = (statSync(trace).size + statSync(ops).size) / 1048576;
      // Warm the page cache so neither side pays for the disk.
      runChild(['--child-bare', trace, ops]);
      const bare = runChild(['--child-bare', trace, ops]);
      const bareTrace = runChild(['--child-bare', trace]);
      const led = runChild(['--child-ledger', '--ops', ops, '--trace', trace, '--capture-stop-ns', String(truth.stop_us * 1000)]);
      const check = led.code === 0 && led.out ? checkTruth(led.out, form === 'trace.txt' ? truth.text : truth.jsonl) : `exit ${led.code}`;
      const evs = records / (led.ms / 1000);
      rows.push(
        [
          `${form.padEnd(11)} ${String(records).padStart(9)} records ${mb.toFixed(0).padStart(5)} MiB`,
          `ledger ${(led.ms / 1000).toFixed(2).padStart(6)} s  ${(evs / 1e6).toFixed(2)} M events/s  peak RSS ${led.maxRssMb.toFixed(0)} MB`,
          `bare readline: trace+ops ${(bare.ms / 1000).toFixed(2)} s (ratio ${(led.ms / bare.ms).toFixed(2)}x), trace only ${(bareTrace.ms / 1000).toFixed(2)} s (ratio ${(led.ms / bareTrace.ms).toFixed(2)}x)`,
          `truth: ${check}`,
        ].join('\n    '),
      );
      process.stdout.write(`${rows[rows.length - 1]}\n`);
    }
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--child-bare') await childBare(argv.slice(1));
else if (argv[0] === '--child-ledger') await childLedger(argv.slice(1));
else await bench(argv);
