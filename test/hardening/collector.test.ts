import { spawn, spawnSync } from 'node:child_process';
import { constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The collector under a signal while a read blocks (a FIFO in place of /proc/version): the run
 * must end with 128+N, with no snapshot published, no temporary directory, no lock and no
 * reader left. A run killed with SIGKILL is cleaned up by the next one; a second run on a bundle
 * being written is refused. And event names must not be path components. Under busybox ash,
 * dash and bash, as test/evidence/collector.test.ts.
 */
const SCRIPT = path.resolve(import.meta.dirname, '../../collector/collect.sh');
const SHELLS: Array<{ name: string; argv: string[] }> = [
  { name: 'busybox ash', argv: ['busybox', 'sh'] },
  { name: 'dash', argv: ['dash'] },
  { name: 'bash', argv: ['bash', '--posix'] },
];

let work: string;
beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-collect-sig-'));
  const root = path.join(work, 'root');
  await fs.mkdir(path.join(root, 'proc/sys/kernel'), { recursive: true });
  await fs.writeFile(path.join(root, 'proc/sys/kernel/osrelease'), '6.12.95\n');
  // A FIFO nobody writes to: `cat` blocks on it until the signal comes.
  expect(spawnSync('mkfifo', [path.join(root, 'proc/version')]).status).toBe(0);
  // A tree with nothing that blocks.
  await fs.mkdir(path.join(work, 'plain/proc/sys/kernel'), { recursive: true });
  await fs.writeFile(path.join(work, 'plain/proc/sys/kernel/osrelease'), '6.12.95\n');
});
afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const EXIT_OF = { SIGTERM: 143, SIGINT: 130 } as const;

function start(argv: string[], out: string, phase = 'start') {
  const child = spawn(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', phase, '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'root')], {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, exited, stderr: () => stderr };
}

/** Whether anything still has the FIFO open for reading (a reader left behind by the run). */
async function fifoHasReader(fifo: string): Promise<boolean> {
  try {
    const h = await fs.open(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    await h.close();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') return false;
    throw err;
  }
}

describe.each(SHELLS)('collect.sh under $name', ({ argv }) => {
  // The whole group (a terminal's Ctrl-C), and the shell alone (`kill PID`: issue 25, a hang
  // before, the shell waiting for the blocked read).
  it.each([
    ['SIGTERM', 'group'],
    ['SIGINT', 'group'],
    ['SIGTERM', 'shell'],
    ['SIGINT', 'shell'],
  ] as const)('%s to the %s while a read blocks: exit 128+N, nothing published, no temp dir, no lock, no reader left', async (signal, target) => {
    const out = path.join(work, `out-${argv[0]}-${signal}-${target}`);
    const run = start(argv, out);
    // Blocked in the copy of proc/version: the temporary snapshot exists.
    const blocked = await waitFor(async () => (await fs.readdir(out).catch(() => [])).some((n) => n.startsWith('.start.tmp.')), 10_000);
    expect(blocked).toBe(true);
    process.kill(target === 'group' ? -run.child.pid! : run.child.pid!, signal);
    const watchdog = setTimeout(() => process.kill(-run.child.pid!, 'SIGKILL'), 10_000);
    const { code, signal: killedBy } = await run.exited;
    clearTimeout(watchdog);
    expect(killedBy, 'the watchdog had to kill the run').toBeNull();
    expect(code).toBe(EXIT_OF[signal]);
    expect(await fs.readdir(out)).toEqual([]);
    expect(run.stderr()).toMatch(/interrupted; no snapshot written/);
    expect(await waitFor(async () => !(await fifoHasReader(path.join(work, 'root/proc/version'))), 5_000)).toBe(true);
  }, 30_000);

  it('SIGKILL leaves a temp dir and the lock; the next run cleans them and publishes', async () => {
    const out = path.join(work, `out-${argv[0]}-kill`);
    const run = start(argv, out);
    expect(await waitFor(async () => (await fs.readdir(out).catch(() => [])).some((n) => n.startsWith('.start.tmp.')), 10_000)).toBe(true);
    process.kill(-run.child.pid!, 'SIGKILL');
    await run.exited;
    expect((await fs.readdir(out)).sort()).toEqual(['.collect.lock', `.start.tmp.${run.child.pid}`]);
    const r = spawnSync(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'start', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'plain')], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(0);
    expect(await fs.readdir(out)).toEqual(['start']);
    expect(await fs.readdir(path.join(out, 'start'))).toContain('manifest');
  }, 30_000);

  it('a lock held by a live run: the second run exits 2 naming its pid, and touches nothing', async () => {
    const out = path.join(work, `out-${argv[0]}-held`);
    await fs.mkdir(out, { recursive: true });
    await fs.symlink(`collect.sh-pid-${process.pid}`, path.join(out, '.collect.lock'));
    const r = spawnSync(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'end', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'plain')], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`being written by another collect\\.sh run \\(pid ${process.pid}\\)`));
    expect(await fs.readdir(out)).toEqual(['.collect.lock']);
  });

  it.each(['../..', 'kfix/..', './x', 'a/b/c'])('refuses --event %s', (ev) => {
    const out = path.join(work, 'out-event');
    const r = spawnSync(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'start', '--event', ev, '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'none')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/expected --event GRP\/EVENT/);
  });
});

/**
 * Issue 25: two `snapshot end` runs at once on one bundle, 50 rounds per shell (rounds run a few
 * at a time, each in its own directory). Every round: exactly one run publishes and exits 0, the
 * other exits 2 and writes nothing; the bundle holds `end/` alone, complete, with no temporary
 * directory inside it or beside it. Nothing here depends on who wins.
 */
const ROUNDS = 50;
const AT_ONCE = 5;

function runOnce(argv: string[], out: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'end', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'plain')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(watchdog);
      resolve({ code, stderr });
    });
  });
}

describe.each(SHELLS)('concurrent snapshots under $name', ({ argv }) => {
  it(`${ROUNDS} rounds of two concurrent snapshot end runs: one publishes, the other is refused, nothing lost or nested`, async () => {
    const failures: string[] = [];
    const round = async (i: number) => {
      const out = path.join(work, `race-${argv[0]}-${i}`);
      const [a, b] = await Promise.all([runOnce(argv, out), runOnce(argv, out)]);
      const codes = [a.code, b.code].sort();
      const top = (await fs.readdir(out)).sort();
      const inside = (await fs.readdir(path.join(out, 'end')).catch(() => [] as string[])).sort();
      const loser = a.code === 0 ? b : a;
      const ok = codes[0] === 0 && codes[1] === 2 && top.join() === 'end' && inside.includes('manifest') && !inside.some((n) => n.includes('tmp'))
        && /being written by another collect\.sh run|already exists/.test(loser.stderr) && loser.stderr.trim().split('\n').length === 1;
      if (!ok) failures.push(`round ${i}: exits ${codes.join(',')}; ${top.join(' ')}; end/ ${inside.join(' ')}; ${loser.stderr.trim()}`);
    };
    for (let i = 0; i < ROUNDS; i += AT_ONCE) await Promise.all(Array.from({ length: Math.min(AT_ONCE, ROUNDS - i) }, (_, k) => round(i + k)));
    expect(failures).toEqual([]);
  }, 240_000);
});
