import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * vitest's global setup: every temporary directory the tests make (os.tmpdir(), in the test
 * workers and in the processes they spawn, which inherit TMPDIR) goes under one directory of
 * this run, removed when the run ends. Tests that make their own need not each clean up, and a
 * run no longer leaves hundreds of krt-* directories behind in /tmp.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-test-run-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
  };
}
