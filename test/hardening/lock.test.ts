import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from '../../src/fsutil.js';

// A triage run killed with SIGKILL leaves its lock behind, and until its parent (the shell or
// tmux pane that ran it) reaps it, the process is a zombie that /proc still lists. The next run
// must take the lock over then, not refuse it as held.
async function zombiePid(dir: string): Promise<{ pid: number; stop: () => void }> {
  // A child that exits only when told, of a process that never reaps it: the shell becomes
  // `sleep` (exec) first, and only then is the child told to exit, so no shell can reap it.
  const go = path.join(dir, 'go');
  const holder = spawn('sh', ['-c', `(while [ ! -e '${go}' ]; do sleep 0.01; done) & echo $!; exec sleep 60`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const pid = await new Promise<number>((resolve) => holder.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  const until = async (ok: () => Promise<boolean>) => {
    while (!(await ok())) await new Promise((r) => setTimeout(r, 10));
  };
  await until(async () => (await fs.readFile(`/proc/${holder.pid}/comm`, 'utf8').catch(() => '')).trim() === 'sleep');
  await fs.writeFile(go, '');
  await until(async () => /\) Z /.test(await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')));
  return { pid, stop: () => holder.kill('SIGKILL') };
}

describe('the lock of one run on a file', () => {
  it('is taken over from a holder that has exited but is not yet reaped (a zombie)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lock-'));
    const file = path.join(dir, 'c.yaml');
    await fs.writeFile(file, 'x\n');
    const z = await zombiePid(dir);
    try {
      expect(await fs.readFile(`/proc/${z.pid}/stat`, 'utf8')).toMatch(/\) Z /);
      await fs.writeFile(path.join(dir, '.c.yaml.lock'), `pid ${z.pid} host ${os.hostname()} since 2026-01-01T00:00:00.000Z\n`);
      expect(await withFileLock(file, 'case file', async () => 'ran')).toBe('ran');
    } finally {
      z.stop();
    }
  });

  it('is refused while its holder runs, naming it', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-lock-'));
    const file = path.join(dir, 'c.yaml');
    await fs.writeFile(file, 'x\n');
    const live = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      await fs.writeFile(path.join(dir, '.c.yaml.lock'), `pid ${live.pid} host ${os.hostname()} since 2026-01-01T00:00:00.000Z\n`);
      await expect(withFileLock(file, 'case file', async () => 'ran')).rejects.toThrow(new RegExp(`held by pid ${live.pid}`));
    } finally {
      live.kill('SIGKILL');
    }
  });
});
