import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { BIN } from '../cli/helpers.js';

/** A run is killed after this long and counts as a hang: a watchdog, not a timing assertion. */
export const WATCHDOG_MS = 20_000;

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  hung: boolean;
}

export function run(args: string[], cwd: string, stdout?: number): Run {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
    input: '',
    encoding: 'utf8',
    timeout: WATCHDOG_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
    ...(stdout !== undefined ? { stdio: ['pipe', stdout, 'pipe'] as const } : {}),
  });
  return { code: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', hung: r.signal === 'SIGKILL' };
}

/** sha256 of every regular file, the kind of everything else, under `dir` (links not followed). */
export async function tree(dir: string, rel = ''): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await fs.readdir(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    const full = path.join(dir, r);
    if (e.isDirectory()) for (const [k, v] of await tree(dir, r)) out.set(k, v);
    else if (e.isFile()) {
      const st = await fs.stat(full);
      out.set(r, `${createHash('sha256').update(await fs.readFile(full)).digest('hex')} ${(st.mode & 0o777).toString(8)}`);
    } else if (e.isSymbolicLink()) out.set(r, `link -> ${await fs.readlink(full)}`);
    else out.set(r, e.isFIFO() ? 'fifo' : 'other');
  }
  return out;
}

export async function put(dir: string, rel: string, content: string | Buffer, mode?: number): Promise<void> {
  const file = path.join(dir, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
  if (mode !== undefined) await fs.chmod(file, mode);
}

/** One failure class through the CLI: exit code, one stderr line, every file unchanged (sha256 and mode) unless named. */
export interface Row {
  name: string;
  setup?: (dir: string) => Promise<void>;
  args: string[];
  code: number;
  /** The one stderr line (default: exactly one line, matching). */
  stderr?: RegExp;
  notStderr?: RegExp;
  /** Files the run may create or change (relative). */
  changes?: string[];
  /** Extra check after the run. */
  after?: (dir: string, r: Run) => Promise<void> | void;
  /** stderr may hold several lines (warnings); each is checked for a stack trace only. */
  manyLines?: boolean;
  stdoutTo?: string;
}

export async function checkRow(base: string, row: Row): Promise<void> {
  const dir = await fs.mkdtemp(path.join(base, 'row-'));
  await row.setup?.(dir);
  const before = await tree(dir);
  const fd = row.stdoutTo ? openSync(row.stdoutTo, 'w') : undefined;
  let r: Run;
  try {
    r = run(row.args, dir, fd);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  expect(r.hung, 'the watchdog had to kill the run').toBe(false);
  if (row.code >= 0) expect(r.code).toBe(row.code);
  else expect([0, 1, 3]).toContain(r.code);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toMatch(/internal error/);
  if (row.stderr) {
    const lines = r.stderr.trim().split('\n');
    if (!row.manyLines) expect(lines).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(row.stderr);
  }
  if (row.notStderr) expect(r.stderr).not.toMatch(row.notStderr);
  const after = await tree(dir);
  const allowed = new Set(row.changes ?? []);
  for (const [k, v] of before) if (!allowed.has(k)) expect(after.get(k), `${k} changed`).toBe(v);
  for (const k of after.keys()) if (!allowed.has(k)) expect(before.has(k), `${k} was created`).toBe(true);
  await row.after?.(dir, r);
}

/** `run`, without blocking the test process: for runs that must overlap. */
export function runAsync(args: string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hung = false;
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const watchdog = setTimeout(() => { hung = true; child.kill('SIGKILL'); }, WATCHDOG_MS * 3);
    child.on('close', (code) => {
      clearTimeout(watchdog);
      resolve({ code, stdout, stderr, hung });
    });
  });
}

/** Run `round(i)` for i in [0, rounds), `atOnce` at a time: overlapping processes, bounded. */
export async function inBatches(rounds: number, atOnce: number, round: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < rounds; i += atOnce) await Promise.all(Array.from({ length: Math.min(atOnce, rounds - i) }, (_, k) => round(i + k)));
}
