import { spawn, spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The collector under a signal while a read blocks (a FIFO in place of /proc/version): the run
 * must end non-zero with no snapshot published and no temporary directory left. And event names
 * must not be path components. Under busybox ash, dash and bash, as test/evidence/collector.test.ts.
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

describe.each(SHELLS)('collect.sh under $name', ({ argv }) => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s while a read blocks: exit non-zero, nothing published, no temp dir', async (signal) => {
    const out = path.join(work, `out-${argv[0]}-${signal}`);
    const child = spawn(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'start', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'root')], {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code, sig) => resolve(code ?? (sig ? 128 : null))));
    // Blocked in the copy of proc/version: the temporary snapshot exists.
    const blocked = await waitFor(async () => (await fs.readdir(out).catch(() => [])).some((n) => n.startsWith('.start.tmp.')), 10_000);
    expect(blocked).toBe(true);
    process.kill(-child.pid!, signal); // the whole group, as a terminal's Ctrl-C does
    const watchdog = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(watchdog);
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(await fs.readdir(out)).toEqual([]);
    expect(stderr).toMatch(/interrupted; no snapshot written/);
  }, 30_000);

  it.each(['../..', 'kfix/..', './x', 'a/b/c'])('refuses --event %s', (ev) => {
    const out = path.join(work, 'out-event');
    const r = spawnSync(argv[0]!, [...argv.slice(1), SCRIPT, 'snapshot', 'start', '--event', ev, '--symbol', 'pipe_read', '--out', out, '--root', path.join(work, 'none')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/expected --event GRP\/EVENT/);
  });
});
