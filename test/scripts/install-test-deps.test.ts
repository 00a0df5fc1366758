import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { testTools } from '../support/tools.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SCRIPT = path.join(ROOT, 'scripts/install-test-deps.sh');

// The script runs on a PATH holding only stubs: none of the tools, a fake `id`, an `apt-get`
// that logs its arguments (and fails `install` until `update` ran, when told to) and a `sudo`
// that logs that it was asked.
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(options: { uid: number; listsStale?: boolean; env?: Record<string, string> }) {
  dir = mkdtempSync(path.join(os.tmpdir(), 'krt-deps-'));
  const log = path.join(dir, 'apt.log');
  const stub = (name: string, body: string) => {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  };
  stub('id', `echo ${options.uid}`);
  stub('sudo', `: > ${dir}/sudo-asked; exec "$@"`);
  stub('apt-get', `echo "$*" >> ${log}
echo "apt-get says: $1" >&2
case "$1" in
  update) : > ${dir}/updated ;;
  install) ${options.listsStale ? `[ -e ${dir}/updated ] || exit 100` : ':'} ;;
esac`);
  const r = spawnSync('/bin/sh', [SCRIPT], { env: { PATH: dir, ...options.env }, encoding: 'utf8' });
  let calls: string[] = [];
  try {
    calls = readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ')[0]!);
  } catch {
    /* apt-get never ran */
  }
  return { code: r.status, stderr: r.stderr, calls, sudoAsked: existsSync(path.join(dir, 'sudo-asked')) };
}

describe('scripts/install-test-deps.sh', () => {
  it('as root, installs what is missing without refreshing package lists that can supply it', () => {
    const r = run({ uid: 0 });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(['install']);
  });

  it('as root, prints each package and what needs it, and lets apt-get\'s own output through', () => {
    const r = run({ uid: 0 });
    const tools = testTools();
    expect(tools.length).toBeGreaterThanOrEqual(5);
    for (const t of tools) expect(r.stderr).toContain(`${t.pkg} (for ${t.command}): ${t.why}`);
    expect(r.stderr).toContain('apt-get says: install');
    expect(r.stderr).toContain('KRETPROBE_TRIAGE_NO_INSTALL');
  });

  it('refreshes the package lists once when the first install cannot find the packages', () => {
    const r = run({ uid: 0, listsStale: true });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(['install', 'update', 'install']);
    expect(r.stderr).toContain('apt-get says: update');
  });

  it.each([['1'], ['yes']])('KRETPROBE_TRIAGE_NO_INSTALL=%s: even as root nothing is installed, the missing are named', (value) => {
    const r = run({ uid: 0, env: { KRETPROBE_TRIAGE_NO_INSTALL: value } });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/busybox-static dash tmux/);
  });

  it('KRETPROBE_TRIAGE_NO_INSTALL=0 does not opt out', () => {
    expect(run({ uid: 0, env: { KRETPROBE_TRIAGE_NO_INSTALL: '0' } }).calls).toEqual(['install']);
  });

  it('without root, never asks sudo: names what is missing and the command, in one line', () => {
    const r = run({ uid: 1000 });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.sudoAsked).toBe(false);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/busybox-static dash tmux/);
    expect(r.stderr).toContain('sh scripts/install-test-deps.sh');
  });

  it('.ci/run runs it as its own step before the test command', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8').split('\n');
    const install = ci.findIndex((l) => /^\s*(ba)?sh scripts\/install-test-deps\.sh\s*$/.test(l));
    const test = ci.findIndex((l) => /^\s*npm test\s*$/.test(l));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(install).toBeLessThan(test);
  });
});
