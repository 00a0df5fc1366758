import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/install-test-deps.sh');

// The script runs on a PATH holding only stubs: no busybox, dash or tmux, a fake `id` and an
// `apt-get` that logs its arguments (and fails `install` until `update` ran, when told to).
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(options: { uid: number; listsStale?: boolean }) {
  dir = mkdtempSync(path.join(os.tmpdir(), 'krt-deps-'));
  const log = path.join(dir, 'apt.log');
  const stub = (name: string, body: string) => {
    writeFileSync(path.join(dir, name), `#!/bin/sh\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  };
  stub('id', `echo ${options.uid}`);
  stub('apt-get', `echo "$*" >> ${log}
case "$1" in
  update) : > ${dir}/updated ;;
  install) ${options.listsStale ? `[ -e ${dir}/updated ] || exit 100` : ':'} ;;
esac`);
  const r = spawnSync('/bin/sh', [SCRIPT], { env: { PATH: dir }, encoding: 'utf8' });
  let calls: string[] = [];
  try {
    calls = readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ')[0]!);
  } catch {
    /* apt-get never ran */
  }
  return { code: r.status, stderr: r.stderr, calls };
}

describe('scripts/install-test-deps.sh', () => {
  it('installs what is missing without refreshing package lists that can supply it', () => {
    const r = run({ uid: 0 });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(['install']);
  });

  it('refreshes the package lists once when the first install cannot find the packages', () => {
    const r = run({ uid: 0, listsStale: true });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual(['install', 'update', 'install']);
  });

  it('without root, names what is missing in one line and leaves the failure to the tests', () => {
    const r = run({ uid: 1000 });
    expect(r.code).toBe(0);
    expect(r.calls).toEqual([]);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/busybox-static dash tmux/);
  });
});
