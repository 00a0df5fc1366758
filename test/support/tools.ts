import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The commands scripts/install-test-deps.sh provides, read from its `need COMMAND PACKAGE "WHY"` lines,
 * so the script stays the one list of what the tests need from Debian.
 */
export function testTools(): Array<{ command: string; pkg: string; why: string }> {
  const script = readFileSync(path.join(ROOT, 'scripts/install-test-deps.sh'), 'utf8');
  return [...script.matchAll(/^need\s+(\S+)\s+(\S+)\s+"([^"]+)"\s*$/gm)].map((m) => ({ command: m[1]!, pkg: m[2]!, why: m[3]! }));
}

const seen = new Map<string, boolean>();

/** Whether `command` is on PATH (asked once per process). */
export function hasTool(command: string): boolean {
  let ok = seen.get(command);
  if (ok === undefined) {
    const r = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', command], { encoding: 'utf8' });
    ok = r.status === 0;
    seen.set(command, ok);
  }
  return ok;
}
