import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';

let dir: string;
const POSTMORTEM = '# Postmortem\n\nWe used a kernel module with maxactive 2.\nnmissed was 99 after the run.\n\nnfsd_dispatch hangs under load.\n';

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-writeup-'));
  await fs.writeFile(path.join(dir, 'postmortem.md'), POSTMORTEM);
  await fs.writeFile(path.join(dir, 'crlf.md'), POSTMORTEM.replace(/\n/g, '\r\n'));
  await fs.writeFile(path.join(dir, 'binary.md'), Buffer.from([0x23, 0x20, 0x68, 0x69, 0x0a, 0x61, 0x00, 0x62, 0x0a]));
  await fs.writeFile(path.join(dir, 'latin1.txt'), Buffer.concat([Buffer.from('line one\nna'), Buffer.from([0xef, 0x76, 0x65]), Buffer.from('\n')]));
  await fs.writeFile(path.join(dir, 'one-long-line.txt'), `nmissed was 3 and ${'the probe kept reading data '.repeat(40_000)}\n`);
  const big = await fs.open(path.join(dir, 'huge.md'), 'w');
  await big.write('# huge\n');
  await big.truncate(50 * 1024 * 1024);
  await big.close();
  await fs.writeFile(path.join(dir, 'bad-block.md'), '# x\n\n```kretprobe-case\nledger: { eligible: three }\n```\n');
  await fs.writeFile(path.join(dir, 'bad-front-matter.md'), '---\nprobe: [unclosed\n---\n# x\n');
  await fs.writeFile(path.join(dir, 'bad-interface.md'), '---\nprobe:\n  interface: carrier-pigeon\n---\n');
  await fs.writeFile(path.join(dir, 'bad-field.md'), '---\nprobe:\n  nonsense: 1\n---\n');
  await fs.writeFile(path.join(dir, 'bad-claim.md'), '```kretprobe-case\nclaims:\n  - kind: frobnicated\n```\n');
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

function oneLine(r: { code: number | null; stderr: string }, pattern: RegExp) {
  expect(r.code).toBe(2);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/^\s+at /m);
}

describe('audit of write-ups', () => {
  it('audits write-ups and cases together, printing facts, claims and what is never established', () => {
    const r = cli(['audit', '--no-color', '--verbose', path.join(dir, 'postmortem.md'), 'cases/table/writeup-no-counters.yaml']);
    expect(r.code).toBe(1); // unsupported claims
    expect(r.stdout).toMatch(/facts found/);
    expect(r.stdout).toMatch(/postmortem\.md:4:13 {2}counters\.end\.nmissed = 99/);
    expect(r.stdout).toMatch(/postmortem\.md:6:15 {2}function-stuck {2}unsupported/);
    expect(r.stdout).toMatch(/never establishes/);
    expect(r.stdout).toMatch(/counters\.start\.nmissed {2}<- .*\brp\.nmissed\b/); // the module's way to read it (src/report/hints.ts)
    expect(r.stdout).toMatch(/^writeup-no-counters/m);
  });

  it('names the three missing facts that decide most, with their commands, and the rest on --verbose (issue 21, output for a reader)', () => {
    const listed = (out: string) => {
      const block = out.slice(out.indexOf('never establishes'));
      return [...block.matchAll(/^ {4}([a-z_]+\.[a-z_.]+)(?: {2}<- .*)?$/gm)].map((m) => m[1]);
    };
    const json = JSON.parse(cli(['audit', '--format', 'json', path.join(dir, 'postmortem.md')]).stdout) as { missing: string[] };
    expect(json.missing.length).toBeGreaterThan(3);
    const r = cli(['audit', '--no-color', path.join(dir, 'postmortem.md')]);
    // The ranked list's head, in its order, then how many more and where they are.
    expect(listed(r.stdout)).toEqual(json.missing.slice(0, 3));
    expect(r.stdout).toContain(`... and ${json.missing.length - 3} more that would change the verdict: --verbose lists them`);
    // The case part does not list them a second time.
    expect(r.stdout).not.toMatch(/^ {2}missing {3}/m);
    const v = cli(['audit', '--no-color', '--verbose', path.join(dir, 'postmortem.md')]);
    expect(listed(v.stdout)).toEqual(json.missing);
    expect(v.stdout).not.toContain('more that would change the verdict');
  });

  it('lists what the write-up says could not be known in the JSON, with the reason and where', async () => {
    const file = path.join(dir, 'unreadable.md');
    await fs.writeFile(file, '# x\n\n```\n$ cat /sys/kernel/tracing/kprobe_profile\ncat: /sys/kernel/tracing/kprobe_profile: Permission denied\n```\n');
    const json = JSON.parse(cli(['audit', '--format', 'json', file]).stdout) as { writeup: { unknown?: Array<{ fact: string; at: string }> } };
    expect(json.writeup.unknown?.map((u) => [u.fact, u.at])).toEqual([['counters.end.nmissed', `${file}:5:6`], ['counters.end.hits', `${file}:5:6`]]);
    expect(cli(['audit', '--no-color', file]).stdout).toContain('counters.end.nmissed: /sys/kernel/tracing/kprobe_profile could not be read: Permission denied');
  });

  it('gives CRLF write-ups the same facts and positions', () => {
    const a = cli(['audit', '--format', 'json', path.join(dir, 'postmortem.md')]);
    const b = cli(['audit', '--format', 'json', path.join(dir, 'crlf.md')]);
    const facts = (s: string) => JSON.parse(s).writeup.facts.map((f: { fact: string; value: unknown; at: string }) => [f.fact, f.value, f.at.split(':').slice(-2).join(':')]);
    expect(facts(b.stdout)).toEqual(facts(a.stdout));
    expect(facts(a.stdout).length).toBeGreaterThan(0);
  });

  it('exits 3 for a write-up with no facts at all', () => {
    const r = cli(['audit', 'cases/writeups/no-facts-at-all.txt']);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/insufficient-evidence/);
  });

  it('checks the shipped write-ups with --expect', () => {
    const r = cli(['audit', 'cases/writeups', '--expect']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/reference expectations: (\d+)\/\1 met/);
  });

  it('reads a 1 MB single line to a verdict', () => {
    const r = cli(['audit', '--format', 'json', path.join(dir, 'one-long-line.txt')]);
    expect([0, 1, 3]).toContain(r.code);
    const v = JSON.parse(r.stdout);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.writeup.facts.map((f: { fact: string; value: unknown }) => [f.fact, f.value])).toEqual([['counters.end.nmissed', 3]]);
  });

  it.each([
    ['binary.md', /binary\.md:2:2: expected a write-up in text; got binary data/],
    ['latin1.txt', /latin1\.txt:2:3: expected a write-up in UTF-8; got the byte 0xef/],
    ['huge.md', /huge\.md: expected a write-up of at most 8192 KiB; got 52428800 bytes/],
    ['bad-block.md', /bad-block\.md:4:\d+: expected a valid ledger\.eligible/],
    ['bad-front-matter.md', /bad-front-matter\.md:2:\d+: expected valid YAML in the front matter/],
    ['bad-interface.md', /bad-interface\.md:3:14: expected probe\.interface: one of module \| tracefs/],
    ['bad-field.md', /bad-field\.md:3:13: expected a case field of kretprobe-case\/v1 .*; got probe\.nonsense/],
    ['bad-claim.md', /bad-claim\.md:3:11: expected a claim kind .*; got frobnicated/],
  ])('refuses %s in one line, exit 2', (name, pattern) => {
    oneLine(cli(['audit', path.join(dir, name)]), pattern);
  });
});

describe('writeup extract', () => {
  it('writes the extracted case with every fact cited', async () => {
    const out = path.join(dir, 'case.yaml');
    const r = cli(['writeup', 'extract', path.join(dir, 'postmortem.md'), '-o', out]);
    expect(r.code).toBe(0);
    const c = parse(await fs.readFile(out, 'utf8'));
    expect(c.format).toBe('kretprobe-case/v1');
    expect(c.counters.end.nmissed).toBe(99);
    expect(c.claims[0]).toMatchObject({ kind: 'function-stuck' });
    expect(c.claims[0].at).toMatch(/postmortem\.md:6:15$/);
    for (const field of ['probe.interface', 'probe.maxactive.requested', 'counters.end.nmissed']) expect(c.provenance[field]).toMatch(/postmortem\.md:\d+:\d+$/);
    const again = cli(['audit', '--format', 'json', out]);
    expect(JSON.parse(again.stdout).verdict).toBe('insufficient-evidence');
  });

  it('leaves the output alone on bad input', async () => {
    const out = path.join(dir, 'keep.yaml');
    await fs.writeFile(out, 'mine\n');
    oneLine(cli(['writeup', 'extract', path.join(dir, 'binary.md'), '-o', out]), /binary data/);
    expect(await fs.readFile(out, 'utf8')).toBe('mine\n');
  });
});
