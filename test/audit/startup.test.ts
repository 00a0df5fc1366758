import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// What a one-case audit loads (npm run bench times it): a valid case is read without zod, the
// YAML library that keeps positions or the rule and question parsers (all from the build's
// snapshots, src/case/shape.ts and src/audit/rules-snapshot.ts); a bad case still loads them to
// say what is wrong. A module list, not a timing.
const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'dist/src/bin.js');
const HOOK = path.join(ROOT, 'test/fixtures/startup/record-modules.mjs');

function modulesOf(args: string[], input = '', bin = BIN): { code: number | null; stderr: string; modules: string[] } {
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'krt-startup-')), 'modules.txt');
  const r = spawnSync(process.execPath, ['--import', HOOK, bin, ...args], { cwd: ROOT, input, encoding: 'utf8', env: { ...process.env, KRT_MODULES_OUT: out } });
  let modules: string[] = [];
  try {
    modules = readFileSync(out, 'utf8').split('\n').filter(Boolean);
  } catch {
    // nothing recorded
  }
  return { code: r.status, stderr: r.stderr, modules };
}
const heavy = (modules: string[]) => [...new Set(modules.flatMap((m) => {
  const pkg = /node_modules\/(zod|yaml)\//.exec(m)?.[1];
  const own = /dist\/src\/((?:rules\/(?:parse|schema|load)|triage\/questions|case\/(?:parse|schema))\.js)$/.exec(m)?.[1];
  return pkg ? [pkg] : own ? [own] : [];
}))].sort();

describe('start-up of a one-case audit', () => {
  it('loads neither zod, nor the positioned YAML parser, nor the rule parser for a valid case', () => {
    const r = modulesOf(['audit', 'cases/kernel-notes/r2-constrained.yaml']);
    expect(r.code).toBe(1); // the case's claim is unsupported: a real verdict, not an error
    expect(r.modules.some((m) => m.includes('json-rules-engine'))).toBe(true); // the rules really ran
    // ... without the glob library for a plain path, or the write-up formatter for a case.
    expect(r.modules.filter((m) => /node_modules\/picomatch\/|dist\/src\/writeup\/format\.js$/.test(m))).toEqual([]);
    // ... nor chalk for output that is not coloured (a pipe here), nor worker threads for one file.
    expect(r.modules.filter((m) => /node_modules\/chalk\/|worker_threads/.test(m))).toEqual([]);
    expect(heavy(r.modules)).toEqual([]);
  });

  it('does not load them for the collection hints of missing facts either', () => {
    const r = modulesOf(['audit', 'cases/counters/bpf-recursion-misses.yaml', '--format', 'json']);
    expect(r.code).not.toBe(2);
    expect(r.modules.some((m) => m.endsWith('dist/src/report/hints.js'))).toBe(true);
    expect(heavy(r.modules)).toEqual([]);
  });

  it('loads them to explain a bad case, with the same one-line error', () => {
    const text = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8').replace('effective: 2', 'effective: -1');
    expect(text).toContain('effective: -1');
    const r = modulesOf(['audit', '-'], text);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kretprobe-triage: <stdin>:\d+:\d+: expected probe\.maxactive\.effective: a whole number >= 0 or unknown; got -1\n$/);
    expect(heavy(r.modules)).toEqual(expect.arrayContaining(['case/parse.js', 'case/schema.js', 'yaml', 'zod']));
  });
});

// The top-level help off a terminal is the build's copy of what commander prints
// (src/help-snapshot.ts): commander (and the node:child_process it loads) stays unloaded.
describe('start-up of --help', () => {
  it('prints what commander prints at 80 columns, without loading commander', async () => {
    const r = modulesOf(['--help']);
    expect(r.code).toBe(0);
    expect(r.modules.filter((m) => /node_modules\/commander\/|child_process/.test(m))).toEqual([]);
    const { main } = await import('../../dist/src/cli.js');
    const { bufferedIo } = await import('../../dist/src/io.js');
    const io = bufferedIo(ROOT, process.stdin);
    expect(await main(['--help'], io, { noHelpSnapshot: true })).toBe(0);
    const shown = spawnSync(BIN, ['--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(shown.stdout).toBe(io.out);
    expect(shown.stdout).toMatch(/^Usage: kretprobe-triage \[options\] \[command\]\n/);
  });

  it('is made by commander again when the code it came from has changed', async () => {
    const { makeHelpSnapshot, readHelpSnapshot, helpSnapshotKey } = await import('../../dist/src/help-snapshot.js');
    expect(makeHelpSnapshot('text')).toBe(`key ${helpSnapshotKey()}\ntext`);
    expect(readHelpSnapshot()).toMatch(/^Usage: /);
    // The key names each file the help is made of by its length and a hash of its bytes.
    expect(helpSnapshotKey().split(' ')).toHaveLength(3);
    expect(helpSnapshotKey()).not.toMatch(/none/);
  });

  it('keys the copy by content: a copied build (new times) keeps it, an edited module does not', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-help-'));
    try {
      // A build copied elsewhere, as npm pack and install do: every file gets a new time.
      cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
      symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
      const later = new Date(Date.now() + 3_600_000);
      for (const f of ['dist/src/cli.js', 'dist/src/commands/index.js']) utimesSync(path.join(dir, f), later, later);
      const copied = modulesOf(['--help'], '', path.join(dir, 'dist/src/bin.js'));
      expect(copied.code).toBe(0);
      expect(copied.modules.filter((m) => /node_modules\/commander\//.test(m))).toEqual([]);
      // The same length, other bytes: commander makes the help again.
      const index = path.join(dir, 'dist/src/commands/index.js');
      const text = readFileSync(index, 'utf8');
      writeFileSync(index, text.replace(/audit/, 'AUDIT'));
      const edited = modulesOf(['--help'], '', path.join(dir, 'dist/src/bin.js'));
      expect(edited.code).toBe(0);
      expect(edited.modules.filter((m) => /node_modules\/commander\//.test(m)).length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
