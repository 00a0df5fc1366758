import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

// .kretprobe-triage.yaml, found upward from the working directory; the command line wins.
function project(config: string): { root: string; sub: string } {
  const root = mkdtempSync(path.join(os.tmpdir(), 'krt-config-'));
  const sub = path.join(root, 'team', 'cases');
  mkdirSync(sub, { recursive: true });
  for (const rel of ['kernel-notes/r2-constrained.yaml', 'table/stall-after-quiesce.yaml']) writeFileSync(path.join(sub, path.basename(rel)), readFileSync(path.join(ROOT, 'cases', rel)));
  writeFileSync(path.join(root, '.kretprobe-triage.yaml'), config);
  return { root, sub };
}
const ids = (stdout: string) => stdout.trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { id: string }).id);

describe('.kretprobe-triage.yaml', () => {
  it('is found two directories up: format, exclude and waivers apply', () => {
    const { sub } = project('format: json\nexclude: ["stall-*"]\nwaivers:\n  - { rule: counters/nmissed-rose, reason: the fixture pool }\n');
    const r = cli(['audit', '.'], { cwd: sub });
    expect(ids(r.stdout)).toEqual(['r2-constrained']);
    const v = JSON.parse(r.stdout) as { findings: Array<{ rule: string; accepted?: string }> };
    expect(v.findings.find((f) => f.rule === 'counters/nmissed-rose')?.accepted).toBe('the fixture pool');
  });

  it('the command line wins: --format and --exclude replace the file\'s', () => {
    const { sub } = project('format: json\nexclude: ["stall-*"]\n');
    const r = cli(['audit', '.', '-f', 'json', '--exclude', 'r2-*'], { cwd: sub });
    expect(ids(r.stdout)).toEqual(['stall-after-quiesce']);
    expect(cli(['audit', '.', '-f', 'text', '-q'], { cwd: sub }).stdout).toMatch(/^1 case\(s\)/);
  });

  it('fail_on from the file sets the exit code; --fail-on overrides it', () => {
    const { sub } = project('fail_on: capacity-missed\nexclude: ["stall-*"]\n');
    expect(cli(['audit', '.', '--expect', '-q'], { cwd: sub }).code).toBe(1);
    expect(cli(['audit', '.', '--expect', '-q', '--fail-on', 'setup-failure'], { cwd: sub }).code).toBe(0);
  });

  it('--no-config ignores it; --config names another', () => {
    const { root, sub } = project('format: json\n');
    expect(cli(['audit', '.', '--no-config', '-q'], { cwd: sub }).stdout).toMatch(/^2 case\(s\)/);
    writeFileSync(path.join(root, 'other.yaml'), 'exclude: ["r2-*"]\nformat: json\n');
    expect(ids(cli(['audit', '.', '--config', path.join(root, 'other.yaml')], { cwd: sub }).stdout)).toEqual(['stall-after-quiesce']);
  });

  it.each([
    ['an unknown key', 'formats: json\n', /\.kretprobe-triage\.yaml:1:1: expected a field \(rules, exclude, fail_on, format, waivers\); got unknown field "formats"/],
    ['a verdict that does not exist', 'fail_on: nope\n', /\.kretprobe-triage\.yaml:1:10: expected fail_on: one of setup-failure/],
    ['a waiver naming no rule', 'waivers:\n  - { rule: counters/nope, reason: x }\n', /\.kretprobe-triage\.yaml:2:13: expected a waiver naming a rule of this rule set/],
    ['bad YAML', 'exclude: [\n', /\.kretprobe-triage\.yaml:\d+:\d+: expected valid YAML/],
  ])('%s is one line file:line:col, exit 2, nothing audited', (_situation, config, message) => {
    const { sub } = project(config);
    const r = cli(['audit', '.'], { cwd: sub });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
  });
});
