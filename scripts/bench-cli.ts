// npm run bench:cli — the CLI as a user runs it: whole processes, each timed against a floor
// process run in turns with it (A, B, A, B, …) so that a change of load on this shared machine
// falls on both alike; each ratio is the median of the per-pair ratios. Targets (issue 24):
//   case audit, 10 k and 100 k cases:  >= 5,000 cases/s and < 5x the cases floor; peak RSS
//                                      < 200 MB and flat from 10 k to 100 k
//   write-up audit, 1,000 realistic:   >= 2,000 write-ups/s and < 3x the write-ups floor;
//                                      the shipped real threads replicated to 1,000 files: < 3x
//   start-up, the installed bin:       --help < 1.5x and a one-case audit < 2.5x `node -e 0`
// The floors (scripts/bench-floor.ts, checked by test/scripts/bench-floor.test.ts) are printed
// with the figures. Arguments: [cases at the small size] [write-ups] [rounds].
import { spawn, spawnSync } from 'node:child_process';
import { promises as fs, mkdtempSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { caseGenerator, root, writeTree, writeupGenerator } from './bench-inputs.js';
import { FLOORS } from './bench-floor.js';

const SMALL = Number(process.argv[2] ?? 10_000);
const WRITEUPS = Number(process.argv[3] ?? 1_000);
const ROUNDS = Number(process.argv[4] ?? 5);
const BIN = path.join(root, 'dist/src/bin.js');
const FLOOR = path.join(root, 'dist/scripts/bench-floor.js');

interface Run { ms: number; cpuMs: number; rssMb: number; code: number | null }

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** CPU time (user + system, ms) of this process's waited-for children so far (/proc/self/stat cutime + cstime). */
function childrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[13]) + Number(f[14])) * 1000) / CLK_TCK;
}

/** Run a process to completion (output discarded): wall time, its CPU time, and its peak RSS (VmHWM, sampled). One at a time. */
function run(argv: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const cpu0 = childrenCpuMs();
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
    const timer = setInterval(sample, 20);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      const ms = performance.now() - t0;
      // The child is reaped by the time 'exit' is emitted, so its CPU time is in cutime/cstime.
      resolve({ ms, cpuMs: childrenCpuMs() - cpu0, rssMb: hwmKb / 1024, code });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

/** A and B in turns, `rounds` pairs: B's median wall and rate, the median of B/A per pair, B's peak RSS. */
async function pairs(a: string[], b: string[], rounds: number, okB: (code: number | null) => boolean): Promise<{ a: Run[]; b: Run[]; ratio: number; cpuRatio: number }> {
  const as: Run[] = [];
  const bs: Run[] = [];
  for (let r = 0; r < rounds; r++) {
    const ra = await run(a);
    if (ra.code !== 0) throw new Error(`${a.join(' ')} exited ${ra.code}`);
    const rb = await run(b);
    if (!okB(rb.code)) throw new Error(`${b.join(' ')} exited ${rb.code}`);
    as.push(ra);
    bs.push(rb);
  }
  return { a: as, b: bs, ratio: median(bs.map((x, i) => x.ms / as[i]!.ms)), cpuRatio: median(bs.map((x, i) => x.cpuMs / Math.max(1, as[i]!.cpuMs))) };
}
const auditExit = (code: number | null) => code === 0 || code === 1 || code === 3;
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

console.log(`bench:cli on ${os.cpus().length} cores; load average ${load()}`);
console.log('floors:');
for (const [k, v] of Object.entries(FLOORS)) console.log(`  ${k.padEnd(9)} node dist/scripts/bench-floor.js ${k} DIR: ${v}`);
console.log(`  start-up  node -e 0`);

// --- case audit ------------------------------------------------------------------------------
const gen = await caseGenerator();
console.log(`\ncase audit: kretprobe-triage audit DIR --format json > /dev/null (cases from ${gen.templates} shipped cases, varied)`);
const caseRows: Array<{ n: number; ms: number; rss: number }> = [];
for (const n of [SMALL, SMALL * 10]) {
  const t = await writeTree('krt-bench-cli-', n, gen.text, 'yaml');
  const rounds = n > SMALL ? Math.max(1, Math.ceil(ROUNDS / 2)) : ROUNDS;
  const p = await pairs([process.execPath, FLOOR, 'cases', t.dir], [process.execPath, BIN, 'audit', t.dir, '--format', 'json'], rounds, auditExit);
  const ms = median(p.b.map((x) => x.ms));
  const rss = Math.max(...p.b.map((x) => x.rssMb));
  caseRows.push({ n, ms, rss });
  console.log(`  ${String(n).padStart(7)} cases: ${(ms / 1000).toFixed(2)} s = ${rate(n, ms)} cases/s (target >= 5000); floor ${(median(p.a.map((x) => x.ms)) / 1000).toFixed(2)} s; audit / floor ${p.ratio.toFixed(2)}x wall, ${p.cpuRatio.toFixed(2)}x CPU (target < 5x); peak RSS ${rss.toFixed(0)} MB (${rounds} pairs)`);
  await fs.rm(t.dir, { recursive: true, force: true });
}
console.log(`  peak RSS ${caseRows[0]!.rss.toFixed(0)} -> ${caseRows[1]!.rss.toFixed(0)} MB from ${SMALL} to ${SMALL * 10} cases (target < 200 MB, flat); per-case cost ${(caseRows[1]!.ms / caseRows[1]!.n / (caseRows[0]!.ms / caseRows[0]!.n)).toFixed(2)}x`);

// --- write-up audit --------------------------------------------------------------------------
const { realistic } = await writeupGenerator(path.join(root, 'cases', 'writeups'), 300);
const realDir = path.join(root, 'cases', 'writeups', 'real');
const real = (() => {
  try {
    return readdirSync(realDir).filter((f) => f.endsWith('.md') && f !== 'README.md').sort().map((f) => readFileSync(path.join(realDir, f), 'utf8'));
  } catch {
    return [];
  }
})();
const writeupSets: Array<{ name: string; text: (i: number) => string; target: string }> = [
  { name: `${WRITEUPS} realistic write-ups (300-line postmortems)`, text: realistic, target: '>= 2000/s, < 3x' },
];
if (real.length) writeupSets.push({ name: `the ${real.length} shipped real threads replicated to ${WRITEUPS} files`, text: (i) => real[i % real.length]!, target: '< 3x' });
console.log('\nwrite-up audit: kretprobe-triage audit DIR --format json > /dev/null');
for (const set of writeupSets) {
  const t = await writeTree('krt-bench-cli-', WRITEUPS, set.text, 'md');
  const p = await pairs([process.execPath, FLOOR, 'writeups', t.dir], [process.execPath, BIN, 'audit', t.dir, '--format', 'json'], ROUNDS, auditExit);
  const ms = median(p.b.map((x) => x.ms));
  console.log(`  ${set.name}: ${(ms / 1000).toFixed(2)} s = ${rate(WRITEUPS, ms)} write-ups/s; floor ${(median(p.a.map((x) => x.ms)) / 1000).toFixed(2)} s; audit / floor ${p.ratio.toFixed(2)}x wall, ${p.cpuRatio.toFixed(2)}x CPU (target ${set.target})`);
  await fs.rm(t.dir, { recursive: true, force: true });
}

// --- start-up --------------------------------------------------------------------------------
// The installed bin is what `npm install -g` (or a local install's node_modules/.bin) puts on
// PATH: a link to dist/src/bin.js, run by its shebang. npx is timed too, to show what it adds.
const binDir = mkdtempSync(path.join(os.tmpdir(), 'krt-bin-'));
const installed = path.join(binDir, 'kretprobe-triage');
symlinkSync(BIN, installed);
const complete = path.join(root, 'cases/kernel-notes/r2-constrained.yaml');
const missing = path.join(root, 'cases/counters/bpf-recursion-misses.yaml');
const START_RUNS = 21;
const commands = [
  { name: 'node -e 0', argv: [process.execPath, '-e', '0'], ok: (c: number | null) => c === 0 },
  { name: '--help', argv: [installed, '--help'], ok: (c: number | null) => c === 0, target: 1.5 },
  { name: 'audit one case', argv: [installed, 'audit', complete], ok: auditExit, target: 2.5 },
  { name: 'audit one case, facts missing', argv: [installed, 'audit', missing], ok: auditExit, target: 2.5 },
  { name: 'npx kretprobe-triage --help', argv: ['npx', '--no-install', 'kretprobe-triage', '--help'], ok: (c: number | null) => c === 0 },
];
const walls = commands.map(() => [] as number[]);
for (let i = 0; i < START_RUNS; i++) {
  commands.forEach((c, j) => {
    const t0 = performance.now();
    const r = spawnSync(c.argv[0]!, c.argv.slice(1), { stdio: 'ignore', cwd: root });
    walls[j]!.push(performance.now() - t0);
    if (!c.ok(r.status)) throw new Error(`${c.argv.join(' ')} exited ${r.status}`);
  });
}
const base = walls[0]!;
console.log(`\nstart-up (${START_RUNS} runs of each, in turns; the installed bin is a link to dist/src/bin.js run by its shebang):`);
commands.forEach((c, j) => {
  const ratio = median(walls[j]!.map((w, i) => w / base[i]!));
  console.log(`  ${c.name.padEnd(30)} ${median(walls[j]!).toFixed(0).padStart(5)} ms = ${ratio.toFixed(2)}x node -e 0${c.target ? ` (target < ${c.target}x)` : ''}`);
});
console.log(`load average after: ${load()}`);
