/**
 * `npm run bench:ledger`: the ledger on generated traces of two lengths (1 M and 10 M trace
 * records by default), in child processes so that each peak RSS is its own, on two shapes of
 * input: `sorted` (ops.jsonl in submit order) and `real` (30 % of the ops lines written at
 * completion, as a multi-threaded load generator does, and 0.2 % of operations starting 0.2 µs
 * after their task's previous one). Each shape is read as trace text (a separate entry event,
 * no instance ids) and as probe.jsonl (instance records), each with one thread and with ops.jsonl
 * on a second thread (forced with --ops-thread; the default takes it for a big ops.jsonl when a core is free).
 *
 * Prints events/s (by wall time and per CPU second, with the load average: the machine may be
 * shared, and CPU time is the steadier figure), wall and CPU time, peak RSS, the time of a bare line-by-line read
 * (node:readline) of the same files, the time of scripts/naive-pair.py (the pairing script a
 * user would write) over the same trace text, and the truth check: every figure the ledger calls
 * exact must equal the generator's truth, every bound must contain it. It also times a run on a
 * tiny trace (the fixed cost: start-up, module loading, JIT warm-up) and says what share of the
 * smallest size's run that is, and puts each input's RSS at every size side by side.
 * Nothing here asserts a time.
 *
 * First, per input, issue 24's figures: the ledger through the installed bin as a whole process,
 * one thread and with the ops thread, in turns with the floor of scripts/ledger-floor.ts (its
 * definition is printed), as ratios and events/s, with peak RSS and the load.
 *
 *   node dist/scripts/bench-ledger.js [--sizes 1000000,10000000] [--dir bench-out] [--shapes sorted,real] [--no-python] [--pairs 3] [--whole-only]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LedgerResult } from '../src/ledger/ledger.js';
import type { FormTruth } from './gen-trace.js';
import { checkTruth } from './ledger-truth.js';
import { FLOOR_DEFINITION, floorFiles, floorRead } from './ledger-floor.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

/** The 1-minute load average now, as printed next to each figure. */
const load = (): string => `load ${os.loadavg()[0]!.toFixed(2)}`;

interface ChildResult {
  ms: number;
  cpuMs: number;
  maxRssMb: number;
  lines?: number;
  out?: string;
  code?: number;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Child: a bare read of the files, line by line with node:readline, counting lines. */
async function childBare(files: string[]): Promise<void> {
  const { createReadStream } = await import('node:fs');
  const readline = await import('node:readline');
  const t0 = performance.now();
  const c0 = cpuMs();
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
  const res: ChildResult = { ms: performance.now() - t0, cpuMs: cpuMs() - c0, maxRssMb: process.resourceUsage().maxRSS / 1024, lines };
  process.stdout.write(JSON.stringify(res));
}

/** Child: the real CLI entry (`main`) with the ledger command, output kept for the truth check. */
async function childLedger(args: string[]): Promise<void> {
  const { main } = await import(pathToFileURL(path.join(root, 'dist/src/cli.js')).href);
  const { bufferedIo } = (await import(pathToFileURL(path.join(root, 'dist/src/io.js')).href)) as typeof import('../src/io.js');
  const io = bufferedIo(process.cwd(), process.stdin);
  const t0 = performance.now();
  const c0 = cpuMs();
  const code: number = await main(['ledger', ...args, '--format', 'json'], io);
  const out = io.out;
  const err = io.err;
  const res: ChildResult = { ms: performance.now() - t0, cpuMs: cpuMs() - c0, maxRssMb: process.resourceUsage().maxRSS / 1024, code, out };
  if (err) process.stderr.write(err);
  process.stdout.write(JSON.stringify(res));
}

/** Child: the floor (ledger-floor.ts) over the files, as its own process. */
function childFloor(files: string[]): void {
  const r = floorRead(files);
  process.stdout.write(JSON.stringify(r));
}

/**
 * A whole process as a user runs it, timed from outside: wall time from spawn to exit and the
 * child's peak RSS (python's RUSAGE_CHILDREN, so node's start-up and exit are inside the figure).
 */
function wholeProcess(argv: string[]): { ms: number; cpuMs: number; maxRssMb: number } {
  const harness = 'import resource, subprocess, sys, time\nt = time.perf_counter()\nr = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\nms = (time.perf_counter() - t) * 1000\nu = resource.getrusage(resource.RUSAGE_CHILDREN)\nsys.stdout.write("%f %f %f %d" % (ms, (u.ru_utime + u.ru_stime) * 1000, u.ru_maxrss / 1024, r.returncode))';
  const r = spawnSync('python3', ['-c', harness, ...argv], { encoding: 'utf8' });
  const m = /([\d.]+) ([\d.]+) ([\d.]+) (-?\d+)/.exec(r.stdout);
  if (m === null || Number(m[4]) !== 0) throw new Error(`whole-process run failed (${argv.slice(0, 4).join(' ')}): ${r.stderr.slice(0, 300)}`);
  return { ms: Number(m[1]), cpuMs: Number(m[2]), maxRssMb: Number(m[3]) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Issue 24's figures: the ledger through the installed bin against the floor, each a whole
 * process, in turns (floor, one thread, ops thread; `pairs` times), the ratio the median of the
 * pairs' ratios.
 */
/**
 * What the default does at this load (src/ledger/read.ts), loaded by the parent only: the floor's
 * child runs this file too, and the ledger's modules would be start-up it does not need.
 */
let opsThreadPays: (bytes: number) => boolean = () => false;
let OPS_THREAD_SPARE_CORES = 0;
let OPS_THREAD_BUSY_MIN_BYTES = 0;

function wholeRows(trace: string, ops: string, records: number, ledgerArgs: string[], pairs: number): { rows: string[]; summary: string } {
  const bin = path.join(root, 'dist/src/bin.js');
  const floorArgv = [process.execPath, fileURLToPath(import.meta.url), '--child-floor', ...floorFiles(trace, ops)];
  const ledgerArgv = (thread: string[]) => [process.execPath, bin, 'ledger', '--ops', ops, '--trace', trace, ...ledgerArgs, ...thread, '--format', 'json'];
  const one: number[] = [];
  const two: number[] = [];
  const fl: number[] = [];
  const oneCpu: number[] = [];
  const twoCpu: number[] = [];
  const flCpu: number[] = [];
  let rss1 = 0;
  let rss2 = 0;
  let rssF = 0;
  const loads: string[] = [];
  for (let i = 0; i < pairs; i++) {
    const f = wholeProcess(floorArgv);
    const a = wholeProcess(ledgerArgv(['--no-ops-thread']));
    const b = wholeProcess(ledgerArgv(['--ops-thread', '--ops-thread-min-mb', '0']));
    fl.push(f.ms);
    one.push(a.ms / f.ms);
    two.push(b.ms / f.ms);
    flCpu.push(f.cpuMs);
    oneCpu.push(a.cpuMs / f.cpuMs);
    twoCpu.push(b.cpuMs / f.cpuMs);
    rss1 = Math.max(rss1, a.maxRssMb);
    rss2 = Math.max(rss2, b.maxRssMb);
    rssF = Math.max(rssF, f.maxRssMb);
    loads.push(os.loadavg()[0]!.toFixed(1));
  }
  const floorMs = median(fl);
  const evs = (ratio: number) => records / ((floorMs * ratio) / 1000) / 1e6;
  const r1 = median(one);
  const r2 = median(two);
  // CPU seconds (user + system, all threads): steadier than wall time on a shared machine.
  const floorCpu = median(flCpu);
  const c1 = median(oneCpu);
  const c2 = median(twoCpu);
  const evsCpu = (ratio: number) => records / ((floorCpu * ratio) / 1000) / 1e6;
  const rows = [
    `whole process (the bin, in turns with the floor, median of ${pairs}; loads ${loads.join(', ')}): floor ${(floorMs / 1000).toFixed(2)} s wall, ${(floorCpu / 1000).toFixed(2)} s CPU, ${rssF.toFixed(0)} MB`,
    `  one thread ${r1.toFixed(2)}x the floor wall (${c1.toFixed(2)}x CPU), ${evs(r1).toFixed(2)} M events/s wall (${evsCpu(c1).toFixed(2)} M per CPU s), peak RSS ${rss1.toFixed(0)} MB`,
    `  ops thread ${r2.toFixed(2)}x wall (${c2.toFixed(2)}x CPU), ${evs(r2).toFixed(2)} M events/s wall (${evsCpu(c2).toFixed(2)} M per CPU s), ${rss2.toFixed(0)} MB`,
    `  the default (neither --ops-thread nor --no-ops-thread) takes ${opsThreadPays(statSync(ops).size) ? 'the ops thread' : 'one thread'} here: ${os.availableParallelism()} cores less ${load()}, ${OPS_THREAD_SPARE_CORES} needed free, or an ops.jsonl of ${OPS_THREAD_BUSY_MIN_BYTES / 1048576} MiB (this one ${(statSync(ops).size / 1048576).toFixed(0)} MiB)`,
  ];
  return { rows, summary: `one thread ${evs(r1).toFixed(2)} M events/s wall, ${evsCpu(c1).toFixed(2)} M per CPU s (${r1.toFixed(2)}x floor wall, ${c1.toFixed(2)}x CPU, ${rss1.toFixed(0)} MB); ops thread ${evs(r2).toFixed(2)} M/s wall (${r2.toFixed(2)}x, ${c2.toFixed(2)}x CPU, ${rss2.toFixed(0)} MB); loads ${loads.join('/')}` };
}

function runChild(args: string[]): ChildResult {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), ...args], { encoding: 'utf8', maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`child ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as ChildResult;
}

/** The Python reference, timed by itself (its own rusage), so the machine's other load is not counted as its CPU. */
function runPython(ops: string, trace: string, stopNs: number): ChildResult | string {
  const harness = [
    'import resource, runpy, sys, time',
    't = time.perf_counter()',
    `sys.argv = ['naive-pair.py', ${JSON.stringify(ops)}, ${JSON.stringify(trace)}, '${stopNs}']`,
    `runpy.run_path(${JSON.stringify(path.join(root, 'scripts/naive-pair.py'))}, run_name='__main__')`,
    'r = resource.getrusage(resource.RUSAGE_SELF)',
    'sys.stderr.write("BENCH %f %f %f\\n" % ((time.perf_counter() - t) * 1000, (r.ru_utime + r.ru_stime) * 1000, r.ru_maxrss / 1024))',
  ].join('\n');
  const r = spawnSync('python3', ['-c', harness], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error !== undefined) return `python3 not runnable: ${r.error.message}`;
  const m = /BENCH ([\d.]+) ([\d.]+) ([\d.]+)/.exec(r.stderr);
  if (r.status !== 0 || m === null) return `python3 failed: ${r.stderr.slice(0, 300)}`;
  return { ms: Number(m[1]), cpuMs: Number(m[2]), maxRssMb: Number(m[3]), out: r.stdout };
}

interface Shape {
  name: 'sorted' | 'real';
  args: string[];
  shuffle: number;
  tight: number;
}
const SHAPES: Shape[] = [
  { name: 'sorted', args: [], shuffle: 0, tight: 0 },
  { name: 'real', args: ['--shuffle', '0.3', '--tight', '0.002'], shuffle: 0.3, tight: 0.002 },
];

function ensureTrace(dir: string, events: number, shape: Shape): void {
  const truth = path.join(dir, 'truth.json');
  if (existsSync(truth)) {
    const t = JSON.parse(readFileSync(truth, 'utf8')) as { params: { events: number; shuffle?: number; pTight?: number } };
    if (t.params.events === events && (t.params.shuffle ?? 0) === shape.shuffle && (t.params.pTight ?? 0) === shape.tight) return;
  }
  process.stderr.write(`generating ${events} events (${shape.name}) into ${dir} ...\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'dist/scripts/gen-trace.js'), '--events', String(events), '--out', dir, ...shape.args], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error('gen-trace failed');
}

interface Truth {
  stop_us: number;
  nmissed: number;
  trace_records: number;
  jsonl_records: number;
  text: FormTruth;
  jsonl: FormTruth;
  params: { maxactive: number };
}

function truthLine(out: string, want: FormTruth, form: string): string {
  const r = fromCliJson(out);
  const c = checkTruth(r, want, { demand: form === 'trace.txt' });
  const marks = `admitted ${r.highWater.exact ? `${r.highWater.value} exact` : `${r.highWater.value}..${r.highWater.upper ?? '?'}`} (truth ${want.high_water})${
    r.demand === undefined ? '' : `, demand ${r.demand.exact ? `${r.demand.value} exact` : `${r.demand.value}..${r.demand.upper ?? '?'}`} (truth ${want.demand_high_water})`
  }, uncertain ops ${r.ops?.uncertain ?? 0}`;
  return `${c.wrong.length === 0 ? 'OK' : `WRONG: ${c.wrong.join('; ')}`}: ${c.exact} exact figures equal the truth, ${c.bounds} bounds contain it; ${marks}`;
}

/** The CLI's JSON (snake_case, the one casing of JSON output) as the LedgerResult fields the truth check reads. */
function fromCliJson(out: string): LedgerResult {
  const j = JSON.parse(out) as { ops?: Record<string, unknown> & { classification_bounds: unknown }; high_water: unknown; demand?: unknown; identity?: unknown };
  return { ops: j.ops && { ...j.ops, classificationBounds: j.ops.classification_bounds }, highWater: j.high_water, demand: j.demand, identity: j.identity } as unknown as LedgerResult;
}

async function bench(argv: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const sizes = (get('--sizes') ?? '1000000,10000000').split(',').map(Number);
  const shapes = (get('--shapes') ?? 'sorted,real').split(',').map((n) => SHAPES.find((s) => s.name === n)!).filter((s) => s !== undefined);
  const python = !argv.includes('--no-python');
  const pairs = Number(get('--pairs') ?? 3);
  // Only issue 24's whole-process figures (skips the in-process rows, the Python reference and the fixed cost).
  const wholeOnly = argv.includes('--whole-only');
  const wholeSummary: string[] = [];
  const base = path.resolve(get('--dir') ?? path.join(root, 'bench-out'));
  const summary: string[] = [];
  const threadRows: string[] = [];
  // Peak RSS per input at each size, for the side-by-side flatness line.
  const rssBy = new Map<string, string[]>();
  let fixedCpuMs: number | undefined;
  let fixedNote = '';
  ({ opsThreadPays, OPS_THREAD_SPARE_CORES, OPS_THREAD_BUSY_MIN_BYTES } = await import('../src/ledger/read.js'));
  process.stdout.write(`floor: ${FLOOR_DEFINITION}\n`);
  if (!wholeOnly) {
    // The fixed cost: the same command on a trace of 1000 records.
    const dir = path.join(base, 'gen-1000');
    ensureTrace(dir, 1000, SHAPES[0]!);
    const t = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as Truth;
    const fixed = runChild(['--child-ledger', '--ops', path.join(dir, 'ops.jsonl'), '--trace', path.join(dir, 'trace.txt'), '--capture-stop-ns', String(t.stop_us * 1000), '--maxactive', String(t.params.maxactive), '--nmissed-delta', String(t.nmissed), '--no-ops-thread']);
    fixedCpuMs = fixed.cpuMs;
    // With the ops thread the ledger also waits for the worker: its start, and its first reorder
    // window (DEFAULT_OPS_REORDER lines) before it can hand out the first operation.
    const fixedThr = runChild(['--child-ledger', '--ops', path.join(dir, 'ops.jsonl'), '--trace', path.join(dir, 'trace.txt'), '--capture-stop-ns', String(t.stop_us * 1000), '--maxactive', String(t.params.maxactive), '--nmissed-delta', String(t.nmissed), '--ops-thread', '--ops-thread-min-mb', '0']);
    fixedNote = `fixed cost (the same command on 1000 records: start-up, module loading, first compilations): ${fixed.ms.toFixed(0)} ms wall, ${fixed.cpuMs.toFixed(0)} ms CPU, peak RSS ${fixed.maxRssMb.toFixed(0)} MB; with the ops thread ${fixedThr.ms.toFixed(0)} ms wall (the worker's start) (${load()})`;
    process.stdout.write(`${fixedNote}\n`);
  }
  for (const n of sizes) {
    for (const shape of shapes) {
      const dir = path.join(base, shape.name === 'sorted' ? `gen-${n}` : `gen-${n}-${shape.name}`);
      ensureTrace(dir, n, shape);
      const truth = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as Truth;
      const ops = path.join(dir, 'ops.jsonl');
      const stopNs = truth.stop_us * 1000;
      for (const form of ['trace.txt', 'probe.jsonl'] as const) {
        const trace = path.join(dir, form);
        const records = form === 'trace.txt' ? truth.trace_records : truth.jsonl_records;
        {
          const extraW = form === 'trace.txt' ? ['--nmissed-delta', String(truth.nmissed)] : [];
          const w = wholeRows(trace, ops, records, ['--capture-stop-ns', String(truth.stop_us * 1000), '--maxactive', String(truth.params.maxactive), ...extraW], pairs);
          process.stdout.write(`${shape.name.padEnd(6)} ${form.padEnd(11)} ${String(records).padStart(9)} records\n    ${w.rows.join('\n    ')}\n`);
          wholeSummary.push(`${n} ${shape.name} ${form}: ${w.summary}`);
          if (wholeOnly) continue;
        }
        const mb = (statSync(trace).size + statSync(ops).size) / 1048576;
        // Warm the page cache so neither side pays for the disk.
        runChild(['--child-bare', trace, ops]);
        const bare = runChild(['--child-bare', trace, ops]);
        // Trace text carries no counters: the miss delta and the pool come as a user gives them (a case, or flags).
        const extra = form === 'trace.txt' ? ['--nmissed-delta', String(truth.nmissed)] : [];
        // One thread here; the second core's run (forced: the default takes it only when a core is free) follows.
        const led = runChild(['--child-ledger', '--ops', ops, '--trace', trace, '--capture-stop-ns', String(stopNs), '--maxactive', String(truth.params.maxactive), ...extra, '--no-ops-thread']);
        const check = led.code === 0 && led.out ? truthLine(led.out, form === 'trace.txt' ? truth.text : truth.jsonl, form) : `exit ${led.code}`;
        const evs = records / (led.ms / 1000);
        const evsCpu = records / (led.cpuMs / 1000);
        const ledLoad = load();
        const key = `${shape.name} ${form}`;
        rssBy.set(key, [...(rssBy.get(key) ?? []), `${led.maxRssMb.toFixed(0)} MB at ${n >= 1e6 ? `${n / 1e6} M` : n}`]);
        const fixedShare = fixedCpuMs !== undefined && n === sizes[0] ? ` (fixed cost ${((100 * fixedCpuMs) / led.cpuMs).toFixed(0)} % of this run's CPU)` : '';
        const rows = [
          `${shape.name.padEnd(6)} ${form.padEnd(11)} ${String(records).padStart(9)} records ${mb.toFixed(0).padStart(5)} MiB`,
          `ledger ${(led.ms / 1000).toFixed(2)} s wall, ${(led.cpuMs / 1000).toFixed(2)} s CPU: ${(evs / 1e6).toFixed(2)} M events/s wall, ${(evsCpu / 1e6).toFixed(2)} M/s per CPU second; peak RSS ${led.maxRssMb.toFixed(0)} MB (${ledLoad})${fixedShare}`,
          `bare readline of trace+ops ${(bare.ms / 1000).toFixed(2)} s wall, ${(bare.cpuMs / 1000).toFixed(2)} s CPU (ledger/bare: ${(led.ms / bare.ms).toFixed(2)}x wall, ${(led.cpuMs / bare.cpuMs).toFixed(2)}x CPU)`,
        ];
        // The second core: ops.jsonl parsed and ordered on a worker thread while the trace is
        // scanned (the default for an ops.jsonl of 32 MiB or more when a core is free). Forced
        // (--ops-thread --ops-thread-min-mb 0) so that a busy machine and the small sizes take it too.
        const thr = runChild(['--child-ledger', '--ops', ops, '--trace', trace, '--capture-stop-ns', String(stopNs), '--maxactive', String(truth.params.maxactive), ...extra, '--ops-thread', '--ops-thread-min-mb', '0']);
        const same = thr.code === 0 && thr.out === led.out ? 'same report' : 'REPORT DIFFERS';
        const thrEvs = records / (thr.ms / 1000);
        rows.push(`ops on a second thread ${(thr.ms / 1000).toFixed(2)} s wall, ${(thr.cpuMs / 1000).toFixed(2)} s CPU (both threads): ${(thrEvs / 1e6).toFixed(2)} M events/s wall; peak RSS ${thr.maxRssMb.toFixed(0)} MB: speed-up ${(led.ms / thr.ms).toFixed(2)}x wall, RSS cost ${(thr.maxRssMb - led.maxRssMb).toFixed(0)} MB (${same}; ${load()})`);
        threadRows.push(`${n} ${shape.name} ${form}: ops thread ${(led.ms / thr.ms).toFixed(2)}x wall (${(thrEvs / 1e6).toFixed(2)} M events/s), ${(thr.maxRssMb - led.maxRssMb).toFixed(0)} MB RSS, ${same}, ${load()}`);
        const key2 = `${shape.name} ${form} (ops thread)`;
        rssBy.set(key2, [...(rssBy.get(key2) ?? []), `${thr.maxRssMb.toFixed(0)} MB at ${n >= 1e6 ? `${n / 1e6} M` : n}`]);
        const both = `${(evs / 1e6).toFixed(2)} M events/s wall with one thread, ${(thrEvs / 1e6).toFixed(2)} M with the ops thread (the default), ${(evsCpu / 1e6).toFixed(2)} M/s per CPU s (one thread), ${led.maxRssMb.toFixed(0)} MB / ${thr.maxRssMb.toFixed(0)} MB`;
        if (python && form === 'trace.txt') {
          const py = runPython(ops, trace, stopNs);
          if (typeof py === 'string') rows.push(`naive-pair.py: ${py}`);
          else {
            rows.push(`naive-pair.py ${(py.ms / 1000).toFixed(2)} s wall, ${(py.cpuMs / 1000).toFixed(2)} s CPU, peak RSS ${py.maxRssMb.toFixed(0)} MB: ledger is ${(py.ms / led.ms).toFixed(2)}x faster (wall), ${(py.cpuMs / led.cpuMs).toFixed(2)}x (CPU) (${load()})`);
            summary.push(`${n} ${shape.name} ${form}: ${both}, ${(py.cpuMs / led.cpuMs).toFixed(2)}x Python (CPU, one thread), ${(py.ms / led.ms).toFixed(2)}x (wall), ${check.startsWith('OK') ? 'truth OK' : 'TRUTH WRONG'}, ${ledLoad}`);
          }
        } else {
          summary.push(`${n} ${shape.name} ${form}: ${both}, ${check.startsWith('OK') ? 'truth OK' : 'TRUTH WRONG'}, ${ledLoad}`);
        }
        rows.push(`truth: ${check}`);
        process.stdout.write(`${rows.join('\n    ')}\n`);
      }
    }
  }
  process.stdout.write(`\nwhole process, the bin against the floor (targets: >= 1.2 M events/s, < 3x the floor, RSS flat; floor: ${FLOOR_DEFINITION}):\n  ${wholeSummary.join('\n  ')}\n`);
  if (wholeOnly) return;
  process.stdout.write(`\nsummary (targets: >= 1 M events/s, RSS < 256 MB and flat in length, >= 3x the Python reference):\n  ${summary.join('\n  ')}\n`);
  process.stdout.write(`peak RSS by length:\n  ${[...rssBy].map(([k, v]) => `${k.padEnd(18)} ${v.join(', ')}`).join('\n  ')}\n`);
  process.stdout.write(`second core:\n  ${threadRows.join('\n  ')}\n`);
  process.stdout.write(`${fixedNote}\n`);
}

const argv = process.argv.slice(2);
if (argv[0] === '--child-bare') await childBare(argv.slice(1));
else if (argv[0] === '--child-ledger') await childLedger(argv.slice(1));
else if (argv[0] === '--child-floor') childFloor(argv.slice(1));
else await bench(argv);
