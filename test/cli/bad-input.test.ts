import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

let dir: string;
const GOOD = 'format: kretprobe-case/v1\nid: good\nprobe: { target: f, registration: { result: EINVAL } }\n';

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-bad-'));
  const files: Record<string, string> = {
    'malformed.yaml': 'format: kretprobe-case/v1\nid: x\nprobe: { target: [f,\n',
    'wrong-type.yaml': 'format: kretprobe-case/v1\nid: x\nledger:\n  eligible: three\n',
    'unknown-format.yaml': 'format: kretprobe-case/v9\nid: x\n',
    'no-format.yaml': 'id: x\n',
    'unknown-field.yaml': 'format: kretprobe-case/v1\nid: x\ncounters:\n  start: { nmised: 1 }\n',
    'alias-bomb.yaml': `format: kretprobe-case/v1\nid: x\na: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n`,
    'duplicate-key.yaml': 'format: kretprobe-case/v1\nid: x\nid: y\n',
    'empty.yaml': '',
    'good.yaml': GOOD,
  };
  for (const [name, text] of Object.entries(files)) await fs.writeFile(path.join(dir, name), text);
  await fs.mkdir(path.join(dir, 'empty-dir'));
  // 50 MB: refused from its size, before it is read.
  const big = await fs.open(path.join(dir, 'huge.yaml'), 'w');
  await big.write(`format: kretprobe-case/v1\nid: x\nsource: "`);
  await big.truncate(50 * 1024 * 1024);
  await big.close();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function expectOneLineError(r: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace
}

describe('bad input to audit: one line, file:line:col where it applies, exit 2', () => {
  it.each([
    ['malformed YAML', 'malformed.yaml', /malformed\.yaml:\d+:\d+: expected valid YAML; got /],
    ['a wrong type', 'wrong-type.yaml', /wrong-type\.yaml:4:13: expected ledger\.eligible: a whole number >= 0 or unknown; got three/],
    ['an unknown format', 'unknown-format.yaml', /unknown-format\.yaml:1:9: expected format: kretprobe-case\/v1; got format: kretprobe-case\/v9/],
    ['no format at all', 'no-format.yaml', /no-format\.yaml:1:1: expected format: kretprobe-case\/v1; got no format field/],
    ['a misspelt field', 'unknown-field.yaml', /unknown-field\.yaml:4:12: expected a field of counters\.start \(.*nmissed.*\); got unknown field "nmised"/],
    ['a YAML alias bomb', 'alias-bomb.yaml', /alias-bomb\.yaml:\d+:\d+: expected YAML whose aliases expand to a small document; got an alias bomb/],
    ['a duplicate key', 'duplicate-key.yaml', /duplicate-key\.yaml:3:1: expected valid YAML; got Map keys must be unique/],
    ['an empty file', 'empty.yaml', /empty\.yaml:1:1: expected a case file .*; got an empty document/],
    ['a 50 MB file', 'huge.yaml', /huge\.yaml: expected a case file of at most 1024 KiB; got 52428800 bytes/],
    ['a directory with no cases', 'empty-dir', /empty-dir: expected a directory holding case files \(\*\.yaml\); got none/],
    ['a missing path', 'no-such.yaml', /no-such\.yaml: expected an existing case file or directory; got no such file or directory/],
  ])('%s', (_, name, pattern) => {
    expectOneLineError(cli(['audit', path.join(dir, name)]), pattern);
  });

  it('an unknown option is a usage error, exit 2', () => {
    const r = cli(['audit', '--frobnicate', path.join(dir, 'good.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--frobnicate'/);
  });

  it('an unknown --format value is a usage error, exit 2', () => {
    expect(cli(['audit', '--format', 'xml', path.join(dir, 'good.yaml')]).code).toBe(2);
  });

  it('leaves the files it was given untouched', async () => {
    const before = await fs.readFile(path.join(dir, 'wrong-type.yaml'), 'utf8');
    cli(['audit', path.join(dir, 'wrong-type.yaml')]);
    expect(await fs.readFile(path.join(dir, 'wrong-type.yaml'), 'utf8')).toBe(before);
    expect((await fs.readdir(dir)).filter((f) => f.endsWith('.tmp') || f.endsWith('.bak'))).toEqual([]);
  });
});

describe("a write-up's expectations sidecar (NAME.expect)", () => {
  const WRITEUP = '# Probe on f\n\nWe ran `bpftrace -e \'kretprobe:vfs_read { @ = count(); }\'` on 6.1.0.\n';
  it('absent: the write-up is audited on its own', async () => {
    const d = await fs.mkdtemp(path.join(dir, 'sc-'));
    await fs.writeFile(path.join(d, 'w.md'), WRITEUP);
    const r = cli(['audit', '--format', 'json', path.join(d, 'w.md')]);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout.trim().split('\n')[0]!).id).toBe('writeup-w');
  });
  it('a directory in its place: one line naming it, exit 2', async () => {
    const d = await fs.mkdtemp(path.join(dir, 'sc-'));
    await fs.writeFile(path.join(d, 'w.md'), WRITEUP);
    await fs.mkdir(path.join(d, 'w.md.expect'));
    expectOneLineError(cli(['audit', path.join(d, 'w.md')]), /w\.md\.expect: expected a write-up expectations file \(a regular file\); got a directory/);
  });
  it('malformed YAML: one line with its position, exit 2', async () => {
    const d = await fs.mkdtemp(path.join(dir, 'sc-'));
    await fs.writeFile(path.join(d, 'w.md'), WRITEUP);
    await fs.writeFile(path.join(d, 'w.md.expect'), 'verdict: [capacity-missed,\n');
    expectOneLineError(cli(['audit', path.join(d, 'w.md')]), /w\.md\.expect:\d+:\d+: expected valid YAML; got /);
  });
});

describe('rules lint', () => {
  it('reports schema errors and never-firing conditions with file:line:col, exit 2', async () => {
    const rules = path.join(dir, 'rules');
    await fs.mkdir(path.join(rules, 'counters'), { recursive: true });
    await fs.writeFile(path.join(rules, 'counters', 'never.yaml'), `id: counters/never
title: t
source: Read missed and filtered cases separately
verdict: warning
weight: 5
when:
  all:
    - { fact: counters.delta.nmissed, operator: greaterThan, value: 5 }
    - { fact: counters.delta.nmissed, operator: lessThan, value: 3 }
    - { fact: probe.interface, operator: equal, value: kprobe }
explains: x
next: y
`);
    await fs.writeFile(path.join(rules, 'counters', 'typo.yaml'), 'id: counters/typo\ntitle: t\nsource: Read missed and filtered cases separately\nverdict: warning\nweight: 5\nwhen: { all: [ { fact: counters.delta.nmised, operator: equal, value: 1 } ] }\nexplains: x\nnext: y\n');
    const r = cli(['rules', 'lint', rules]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/never\.yaml:8:\d+: no value of counters\.delta\.nmissed satisfies every bound: never true/);
    expect(r.stderr).toMatch(/never\.yaml:10:\d+: probe\.interface is never "kprobe"/);
    expect(r.stderr).toMatch(/typo\.yaml:6:\d+: expected a known fact name .*; got counters\.delta\.nmised/);
    expect(r.stdout).toMatch(/2 rule file\(s\), 3 problem\(s\)/);
  });

  it('passes on the shipped rules', () => {
    const r = cli(['rules', 'lint']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/0 problem\(s\)/);
  });
});
