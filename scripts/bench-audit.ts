// npm run bench: audit N generated cases (default 10,000) in one process and print cases/s,
// peak RSS, and the cost of only reading and parsing the same files, as a ratio.
// Targets (issue 2): >= 2,000 cases/s on a 2-core machine, and under 3x the parse-only cost.
// Then, through the real CLI (issue 14): a 10,000- and a 100,000-case batch (peak RSS < 200 MB,
// per-case cost at 100 k within 1.2x of that at 10 k), and start-up: `--help` under 2x and a
// one-case audit under 3x `node -e 0` (a case with every fact known, and one with facts
// missing), all measured in this one run, with the load average of the machine.
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { evaluateCase, loadRules } from '../src/index.js';
import { formatCaseJson } from '../src/report/json.js';
import { expandCasePaths, loadCases } from '../src/case/load.js';

const N = Number(process.argv[2] ?? 10_000);
const root = path.resolve(import.meta.dirname, '..', '..');

// Realistic inputs: the shipped reference cases, renamed and with their numbers varied.
const templates = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => fs.readFile(f, 'utf8')));
let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % n;
};
function caseText(i: number): string {
  const t = templates[i % templates.length]!;
  return t
    .replace(/^id: .*$/m, `id: bench-${i}`)
    .replace(/^expected:[\s\S]*$/m, '')
    .replace(/(eligible|entries|returns|entry_events|observed_high_water|estimated_max_overlap): (\d+)/g, (_, k: string, v: string) => `${k}: ${Number(v) + rand(40)}`)
    .replace(/nmissed: (\d+) \}\n  end: \{ (epoch: [\w-]+), nmissed: (\d+)/, (_, a: string, e: string, b: string) => `nmissed: ${a} }\n  end: { ${e}, nmissed: ${Number(b) + rand(8)}`);
}
async function generate(n: number): Promise<{ dir: string; files: string[] }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-bench-'));
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    // 1,000 files per folder, as a repository of write-ups would be laid out.
    const sub = path.join(dir, `part-${String(Math.floor(i / 1000)).padStart(3, '0')}`);
    if (i % 1000 === 0) await fs.mkdir(sub);
    const file = path.join(sub, `case-${String(i).padStart(6, '0')}.yaml`);
    await fs.writeFile(file, caseText(i));
    files.push(file);
  }
  return { dir, files };
}
const { dir, files } = await generate(N);

async function parseOnly(): Promise<number> {
  const t0 = performance.now();
  // The same reading path as the in-process audit below (loadCases: read ahead, then the case
  // parser), without evaluating. The CLI runs further down go through audit's own loader table.
  for await (const loaded of loadCases(files)) void loaded;
  return performance.now() - t0;
}

let stats = { memoHits: 0, engineRuns: 0 };
async function audit(memo = true): Promise<{ ms: number; verdicts: Map<string, number> }> {
  const rules = await loadRules(path.join(root, 'rules'), { memo });
  stats = rules.runner.stats;
  const verdicts = new Map<string, number>();
  let bytes = 0;
  const t0 = performance.now();
  for await (const loaded of loadCases(files)) {
    const v = await evaluateCase(loaded, rules);
    bytes += formatCaseJson(v).length;
    verdicts.set(v.verdict, (verdicts.get(v.verdict) ?? 0) + 1);
  }
  void bytes;
  return { ms: performance.now() - t0, verdicts };
}

// One warm-up pass of each so the JIT is comparable, then the measured passes.
await parseOnly();
await audit();
const parseMs = await parseOnly();
const { ms: coldMs } = await audit(false);
const { ms: auditMs, verdicts } = await audit();
const rssMb = process.resourceUsage().maxRSS / 1024;

console.log(`cases:              ${N} (from ${templates.length} reference cases, varied)`);
console.log(`audit:              ${auditMs.toFixed(0)} ms  = ${(N / (auditMs / 1000)).toFixed(0)} cases/s   (target >= 2000)`);
console.log(`read+parse only:    ${parseMs.toFixed(0)} ms  = ${(N / (parseMs / 1000)).toFixed(0)} cases/s`);
console.log(`audit / parse-only: ${(auditMs / parseMs).toFixed(2)}x   (target < 3x)`);
console.log(`peak RSS:           ${rssMb.toFixed(0)} MB`);
console.log(`engine runs:        ${stats.engineRuns} of ${stats.engineRuns + stats.memoHits} cases (the rest answered from the per-rule memo)`);
console.log(`without the memo:   ${coldMs.toFixed(0)} ms  = ${(N / (coldMs / 1000)).toFixed(0)} cases/s, ${(coldMs / parseMs).toFixed(2)}x parse-only (every case runs json-rules-engine)`);
console.log(`verdicts:           ${[...verdicts].map(([k, v]) => `${k} ${v}`).join(', ')}`);
await fs.rm(dir, { recursive: true, force: true });

// --- Through the real CLI -------------------------------------------------------------------
const BIN = path.join(root, 'dist/src/bin.js');

/** Run a command to completion, sampling its peak RSS (VmHWM) from /proc while it runs. */
function measure(argv: string[]): Promise<{ ms: number; rssMb: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
    let hwmKb = 0;
    const sample = () => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwmKb = Math.max(hwmKb, Number(m[1]));
      } catch {
        /* exited between samples */
      }
    };
    const timer = setInterval(sample, 25);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ ms: performance.now() - t0, rssMb: hwmKb / 1024, code });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** CPU time (user + system, ms) of this process's waited-for children so far (/proc/self/stat cutime + cstime). */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
function childCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK;
}

/**
 * Start-up of several commands, run in turns (a, b, c, a, b, c, ...) so that a change of load on
 * the machine during the measurement falls on all of them alike. Per command: the median wall
 * time, and the mean CPU time of a run (less sensitive to other work on the machine; ticks of
 * 1/CLK_TCK s, averaged over the runs). Each run must exit as expected: an error is not timed.
 */
function startup(commands: Array<{ argv: string[]; exits: number[] }>, runs: number): Array<{ wallMs: number; cpuMs: number }> {
  const walls = commands.map(() => [] as number[]);
  const cpus = commands.map(() => 0);
  for (let i = 0; i < runs; i++) {
    commands.forEach(({ argv, exits }, j) => {
      const cpu0 = childCpuMs();
      const t0 = performance.now();
      const r = spawnSync(argv[0]!, argv.slice(1), { stdio: 'ignore' });
      walls[j]!.push(performance.now() - t0);
      cpus[j]! += childCpuMs() - cpu0;
      if (!exits.includes(r.status ?? -1)) throw new Error(`${argv.slice(1).join(' ')} exited ${r.status}, expected ${exits.join(' or ')}`);
    });
  }
  return commands.map((_, j) => ({ wallMs: median(walls[j]!), cpuMs: cpus[j]! / runs }));
}
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

console.log('\nthrough the CLI (kretprobe-triage audit DIR --format json > /dev/null):');
const batches: Array<{ n: number; ms: number; rssMb: number }> = [];
for (const n of [10_000, 100_000]) {
  const g = await generate(n);
  const r = await measure([process.execPath, BIN, 'audit', g.dir, '--format', 'json']);
  if (r.code !== 0 && r.code !== 1 && r.code !== 3) throw new Error(`audit of ${n} cases exited ${r.code}`);
  batches.push({ n, ms: r.ms, rssMb: r.rssMb });
  console.log(`  ${String(n).padStart(7)} cases: ${(r.ms / 1000).toFixed(1)} s = ${(n / (r.ms / 1000)).toFixed(0)} cases/s, ${((r.ms * 1000) / n).toFixed(0)} us/case, peak RSS ${r.rssMb.toFixed(0)} MB`);
  await fs.rm(g.dir, { recursive: true, force: true });
}
const [small, big] = batches as [typeof batches[0], typeof batches[0]];
{
  // The RSS difference above is V8 letting its heap grow while there is room; with the old
  // space capped the same 100k batch must still run, which shows nothing is retained per case.
  const g = await generate(100_000);
  const r = await measure([process.execPath, '--max-old-space-size=64', BIN, 'audit', g.dir, '--format', 'json']);
  console.log(`   100000 cases, V8 old space capped at 64 MB: exit ${r.code}, ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMb.toFixed(0)} MB (nothing retained per case)`);
  await fs.rm(g.dir, { recursive: true, force: true });
}
const costRatio = big.ms / big.n / (small.ms / small.n);
console.log(`  per-case cost 100k / 10k: ${costRatio.toFixed(2)}x   (target <= 1.2x)`);
console.log(`  peak RSS at 100k:         ${big.rssMb.toFixed(0)} MB   (target < 200 MB; ${(big.rssMb - small.rssMb).toFixed(0)} MB more than at 10k)`);

// Two one-case audits: a case with every fact known, and one with missing facts (most real
// cases), whose report also prints the commands that collect them.
const complete = path.join(root, 'cases/kernel-notes/r2-constrained.yaml');
const missing = path.join(root, 'cases/counters/bpf-recursion-misses.yaml');
const RUNS = 21;
const loadBefore = load();
const [base, help, audit1, audit1m] = startup([
  { argv: [process.execPath, '-e', '0'], exits: [0] },
  { argv: [process.execPath, BIN, '--help'], exits: [0] },
  { argv: [process.execPath, BIN, 'audit', complete], exits: [0, 1, 3] },
  { argv: [process.execPath, BIN, 'audit', missing], exits: [0, 1, 3] },
], RUNS) as [{ wallMs: number; cpuMs: number }, { wallMs: number; cpuMs: number }, { wallMs: number; cpuMs: number }, { wallMs: number; cpuMs: number }];
const row = (name: string, r: { wallMs: number; cpuMs: number }, target?: number) =>
  `  ${name.padEnd(30)} ${r.wallMs.toFixed(0).padStart(4)} ms = ${(r.wallMs / base.wallMs).toFixed(2)}x node -e 0${target ? `   (target < ${target}x)` : ' '.repeat(16)}   cpu ${r.cpuMs.toFixed(0).padStart(4)} ms = ${(r.cpuMs / base.cpuMs).toFixed(2)}x`;
console.log(`\nstart-up (${RUNS} runs of each, in turns; wall: median, cpu: mean user+sys; load average ${loadBefore} before, ${load()} after):`);
console.log(row('node -e 0', base));
console.log(row('--help', help, 2));
console.log(row('audit one case', audit1, 3));
console.log(row('audit one case, facts missing', audit1m, 3));
