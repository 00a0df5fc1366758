import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

const CASE = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8');
const withId = (id: string, extra = '') => `${CASE.replace(/^id: .*$/m, `id: ${id}`).replace(/^expected:[\s\S]*$/m, '')}${extra}`;
const WAIVED = `accepted:
  - { rule: counters/nmissed-rose, reason: known pool limit of the fixture }
  - { rule: claims/function-stuck, reason: the write-up was corrected later }
  - { rule: capacity/pool-below-estimated-overlap, reason: fixture }
  - { rule: capacity/high-water-reached-pool, reason: fixture }
  - { rule: counters/entry-probe-saw-more, reason: fixture }
  - { rule: counters/profile-misses-are-a-sum, reason: fixture }
`;

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-batch-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}
const ids = (stdout: string) => stdout.trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id);

describe('audit over a batch', () => {
  it('keeps going past bad files: one line each with its location, the rest audited, exit 2, summary counts them', () => {
    const dir = tree({ 'a.yaml': withId('a'), 'b.yaml': 'format: kretprobe-case/v1\nid: b\nprobe: [\n', 'c.yaml': withId('c'), 'd.yaml': 'format: other\n' });
    const r = cli(['audit', dir, '--format', 'json']);
    expect(r.code).toBe(2);
    expect(ids(r.stdout)).toEqual(['a', 'c']);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/b\.yaml:\d+:\d+: expected /);
    expect(lines[1]).toMatch(/d\.yaml:1:\d+: expected format: kretprobe-case\/v1/);
    const text = cli(['audit', dir]);
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/^skipped: 2 file\(s\)/m);
  });

  it('skips node_modules, dot-directories and files that are not cases; --exclude repeats', () => {
    const dir = tree({
      'keep/a.yaml': withId('a'),
      'node_modules/x/b.yaml': withId('b'),
      '.git/c.yaml': withId('c'),
      'keep/notes.json': '{}',
      'keep/write-up.md': '# A write-up\n',
      'keep/old/d.yaml': withId('d'),
      'keep/e.yml': withId('e'),
      'keep/f.yaml': withId('f'),
    });
    // keep/write-up.md is a write-up: audited as the case it states (its id is made from its name).
    expect(ids(cli(['audit', dir, '--format', 'json']).stdout)).toEqual(['a', 'e', 'f', 'd', 'writeup-write-up']);
    const r = cli(['audit', dir, '--format', 'json', '--exclude', 'old', '--exclude', '*.yml'], { cwd: dir });
    expect(ids(r.stdout)).toEqual(['a', 'f', 'writeup-write-up']);
  });

  it('the content decides for a named file whose name says neither: a case by its format line, else a write-up', () => {
    const dir = tree({ 'notes': 'pipe_read never returned, so it is stuck.\n', 'case.conf': withId('conf-case'), 'a.yaml': withId('a') });
    const r = cli(['audit', path.join(dir, 'notes'), path.join(dir, 'case.conf'), path.join(dir, 'a.yaml'), '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(ids(r.stdout)).toEqual(['writeup-notes', 'conf-case', 'a']);
  });

  it('audits a file named twice (or also inside a named directory) once, and reads - from stdin', () => {
    const dir = tree({ 'a.yaml': withId('a') });
    const file = path.join(dir, 'a.yaml');
    expect(ids(cli(['audit', file, dir, file, '--format', 'json']).stdout)).toEqual(['a']);
    const r = cli(['audit', '-', '--format', 'json'], { input: withId('from-stdin') });
    expect(r.code).toBe(1);
    expect(ids(r.stdout)).toEqual(['from-stdin']);
  });

  it('accepted findings are shown with their reason and not counted; --soft-fail exits 0', () => {
    const dir = tree({ 'w.yaml': withId('w', WAIVED) });
    const r = cli(['audit', path.join(dir, 'w.yaml'), '--format', 'json', '--fail-on', 'capacity-missed']);
    const v = JSON.parse(r.stdout) as { findings: Array<{ rule: string; accepted?: string }>; claims: Array<{ accepted?: string }> };
    expect(v.findings.find((f) => f.rule === 'counters/nmissed-rose')?.accepted).toBe('known pool limit of the fixture');
    expect(v.claims[0]?.accepted).toBe('the write-up was corrected later');
    expect(r.code).toBe(0);
    const text = cli(['audit', path.join(dir, 'w.yaml')]);
    expect(text.stdout).toMatch(/accepted: known pool limit of the fixture/);
    const unwaived = tree({ 'u.yaml': withId('u') });
    expect(cli(['audit', unwaived, '--fail-on', 'capacity-missed']).code).toBe(1);
    expect(cli(['audit', unwaived, '--fail-on', 'capacity-missed', '--soft-fail']).code).toBe(0);
  });

  it('a waiver naming no known rule is bad input at its line: the file is skipped, exit 2', () => {
    const dir = tree({ 'typo.yaml': withId('typo', 'accepted:\n  - { rule: counters/nmised-rose, reason: typo }\n'), 'a.yaml': withId('a') });
    const r = cli(['audit', dir, '--format', 'json']);
    expect(r.code).toBe(2);
    expect(ids(r.stdout)).toEqual(['a']);
    const line = readFileSync(path.join(dir, 'typo.yaml'), 'utf8').split('\n').findIndex((l) => l.includes('nmised')) + 1;
    expect(r.stderr.trim()).toMatch(new RegExp(`typo\\.yaml:${line}:\\d+: expected a waiver naming a rule of this rule set .*; got "counters/nmised-rose"$`));
  });

  it('--fail-on works together with --expect', () => {
    expect(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--expect']).code).toBe(0);
    expect(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--expect', '--fail-on', 'capacity-missed']).code).toBe(1);
    expect(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--expect', '--fail-on', 'setup-failure']).code).toBe(0);
  });

  it('-o writes the report atomically to a file and nothing to stdout', () => {
    const dir = tree({});
    const out = path.join(dir, 'report.json');
    const r = cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--format', 'json', '-o', out]);
    expect(r.stdout).toBe('');
    expect(ids(readFileSync(out, 'utf8'))).toEqual(['r2-constrained']);
    expect(readdirSync(dir)).toEqual(['report.json']);
    // A usage error writes nothing.
    const bad = path.join(dir, 'bad.json');
    expect(cli(['audit', path.join(dir, 'missing-dir'), '--rules', path.join(dir, 'nope'), '-o', bad]).code).toBe(2);
    expect(existsSync(bad)).toBe(false);
  });

  it('--version names the tool and the rules; every JSON line carries both', () => {
    const r = cli(['--version']);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const m = /^kretprobe-triage (\S+) \(rules (sha256:[0-9a-f]{16})\)$/.exec(r.stdout.trim());
    expect(m?.[1]).toBe(pkg.version);
    const v = JSON.parse(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--format', 'json']).stdout) as Record<string, unknown>;
    expect(v).toMatchObject({ tool_version: pkg.version, rules_version: m?.[2] });
  });

  it('takes positional globs and --exclude with braces and classes (picomatch syntax)', () => {
    const dir = tree({ 'lab/a.yaml': withId('a'), 'table/b.yaml': withId('b'), 'other/c.yaml': withId('c'), 'other/r7.yaml': withId('r7'), 'notes.md': 'no case here\n' });
    expect(ids(cli(['audit', 'lab/*.yaml', '{table,other}/**/*.yaml', '--format', 'json'], { cwd: dir }).stdout)).toEqual(['a', 'c', 'r7', 'b']);
    expect(ids(cli(['audit', '.', '--format', 'json', '--exclude', '{lab,table}', '--exclude', 'r[0-9].yaml', '--exclude', '*.{md,txt}'], { cwd: dir }).stdout)).toEqual(['c']);
    const none = cli(['audit', 'nothing/**/*.yaml'], { cwd: dir });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^kretprobe-triage: nothing\/\*\*\/\*\.yaml: expected files matching this pattern; got /);
  });
});

describe('audit text output of a batch, like ESLint', () => {
  // Two met expectations and one unmet: by default only the unmet one is printed, then the summary.
  const unmet = withId('unmet', 'expected:\n  verdict: fully-observed\n');
  const dir = () => tree({ 'a.yaml': CASE.replace(/^id: .*$/m, 'id: a'), 'b.yaml': CASE.replace(/^id: .*$/m, 'id: b'), 'c.yaml': unmet });
  const shownIds = (stdout: string) => [...stdout.matchAll(/^(\S+)(?: — .*)?  \(.*\.yaml\)$/gm)].map((m) => m[1]);

  it('prints only the cases that need attention, then the summary with their count', () => {
    const r = cli(['audit', dir(), '--expect']);
    expect(r.code).toBe(1);
    expect(shownIds(r.stdout)).toEqual(['unmet']);
    expect(r.stdout).toMatch(/^need attention: 1, shown above; --verbose /m);
    expect(r.stdout).toMatch(/^reference expectations: 2\/3 met/m);
  });

  it('--verbose prints every case with its reasons', () => {
    const r = cli(['audit', dir(), '--expect', '--verbose']);
    expect(shownIds(r.stdout)).toEqual(['a', 'b', 'unmet']);
    expect(r.stdout).toMatch(/^ {2}findings$/m);
  });

  it('--quiet prints the summary alone', () => {
    const r = cli(['audit', dir(), '--expect', '--quiet']);
    expect(r.code).toBe(1);
    expect(shownIds(r.stdout)).toEqual([]);
    expect(r.stdout).toMatch(/^need attention: 1 \(--quiet: not shown\)/m);
  });

  it('one case named alone is printed in full', () => {
    const d = dir();
    const r = cli(['audit', path.join(d, 'a.yaml'), '--expect']);
    expect(shownIds(r.stdout)).toEqual(['a']);
  });

  it('the shipped cases with --expect: nothing needs attention, a few lines', () => {
    const r = cli(['audit', 'cases/', '--expect']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^need attention: 0;/m);
    expect(r.stdout.trim().split('\n').length).toBeLessThan(10);
  });

  it('--verbose with --quiet is a usage error', () => {
    expect(cli(['audit', dir(), '--verbose', '--quiet']).code).toBe(2);
  });
});

// A pipe read more slowly than a batch writes queues what does not fit, and only the event loop
// writes it: the audit waits on Io.drained after each case (src/bin.ts), so its output never
// piles up in memory (it did: 1.4 GB for 100,000 cases piped).
describe('a batch audit and a slow reader', () => {
  it('waits for stdout to drain after each case, and prints the same', async () => {
    const { main } = await import('../../dist/src/cli.js');
    const { bufferedIo } = await import('../../dist/src/io.js');
    const dir = path.join(ROOT, 'cases/exact');
    const plain = bufferedIo(ROOT, process.stdin);
    const waited = bufferedIo(ROOT, process.stdin);
    let waits = 0;
    waited.drained = () => new Promise<void>((resolve) => { waits++; setImmediate(resolve); });
    const a = await main(['audit', dir, '--format', 'json'], plain);
    const b = await main(['audit', dir, '--format', 'json'], waited);
    expect(b).toBe(a);
    expect(waited.out).toBe(plain.out);
    expect(waits).toBe(plain.out.trim().split('\n').length);
  });
});
