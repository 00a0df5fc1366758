import { spawnSync } from 'node:child_process';
import { promises as fs, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { checkRow, put, run, type Row } from './harness.js';

/**
 * Issue 13, one row per failure class, through the CLI: the exit code, one line on stderr with
 * the location where there is one, no stack trace, a watchdog instead of a timing assertion
 * (the run is killed after WATCHDOG_MS and the row fails as a hang), and every file in the
 * row's directory byte-identical afterwards unless the row names it as an output.
 */
const GOOD = 'format: kretprobe-case/v1\nid: good\nprobe: { target: f, registration: { result: EINVAL } }\n';
const BUNDLE = path.join(ROOT, 'test/fixtures/bundles/adequate-r8');
const TRACE = path.join(ROOT, 'test/fixtures/ledger/fixture-r2.trace.txt');
const OPS = path.join(ROOT, 'test/fixtures/ledger/fixture-r2.ops.jsonl');

let base: string;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-harden-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

const fifo = async (dir: string, rel: string) => {
  await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
  expect(spawnSync('mkfifo', [path.join(dir, rel)]).status).toBe(0);
};
const copyDir = (from: string, to: string) => fs.cp(from, to, { recursive: true });
const answersFor = (dir: string, text: string) => put(dir, 'a.yaml', text);

const ROWS: Row[] = [
  // --- hangs and unbounded memory ----------------------------------------------------------
  { name: 'cpulist value >= 2^53 in a case', setup: (d) => put(d, 'c.yaml', `${GOOD}kernel: { possible_cpus: "0-9007199254740993" }\n`), args: ['audit', 'c.yaml'], code: 2, stderr: /^kretprobe-triage: c\.yaml:4:\d+: expected kernel\.possible_cpus: .*CPU ids at most 65535.*; got /},
  { name: 'cpulist far too long in a case', setup: (d) => put(d, 'c.yaml', `${GOOD}kernel: { possible_cpus: "${'0-65535,'.repeat(9000)}0" }\n`), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:4:\d+: expected kernel\.possible_cpus: .*at most 65536 characters/ },
  { name: 'cpulist value >= 2^53 in answers', setup: async (d) => { await put(d, 'c.yaml', GOOD); await answersFor(d, 'kernel.possible_cpus: 0-9007199254740993\n'); }, args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2, stderr: /a\.yaml:1:\d+: expected kernel\.possible_cpus: .*65535/ },
  { name: 'cpulist value >= 2^53 in a bundle (a warning, the count left unknown)', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await put(d, 'B/end/cpu_possible', '0-9007199254740993\n'); await put(d, 'B/start/cpu_possible', '0-9007199254740993\n'); }, args: ['case', 'from-bundle', 'B'], code: 0, manyLines: true, after: (_, r) => { expect(r.stderr).toMatch(/end\/cpu_possible:1: expected .*65535/); expect(r.stdout).not.toMatch(/possible_cpus/); } },
  { name: 'capacity --possible-cpus 99999999999999999999', args: ['capacity', '--possible-cpus', '99999999999999999999', '--interface', 'tracefs'], code: 2, stderr: /expected --possible-cpus: a CPU count of at most 65536/ },
  { name: 'capacity --possible-cpus 0-9007199254740993', args: ['capacity', '--possible-cpus', '0-9007199254740993', '--interface', 'tracefs'], code: 2, stderr: /expected --possible-cpus: .*CPU ids at most 65535/ },
  { name: 'a FIFO as the audit file', setup: (d) => fifo(d, 'f.yaml'), args: ['audit', 'f.yaml'], code: 2, stderr: /f\.yaml: expected a case file \(a regular file\); got a FIFO/ },
  { name: 'a FIFO as --answers', setup: async (d) => { await put(d, 'c.yaml', GOOD); await fifo(d, 'a.yaml'); }, args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2, stderr: /a\.yaml: expected an answers file \(a regular file\); got a FIFO/ },
  { name: 'a FIFO as the triage case', setup: async (d) => { await fifo(d, 'c.yaml'); await answersFor(d, 'probe.armed: true\n'); }, args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2, stderr: /c\.yaml: expected a case file \(a regular file\); got a FIFO/ },
  { name: 'a FIFO among --rules', setup: async (d) => { await copyDir(path.join(ROOT, 'rules'), path.join(d, 'R')); await fifo(d, 'R/counters/zz.yaml'); await put(d, 'c.yaml', GOOD); }, args: ['audit', '--rules', 'R', 'c.yaml'], code: 2, stderr: /zz\.yaml: expected a rule file \(a regular file\); got a FIFO/ },
  { name: 'a FIFO among --questions', setup: async (d) => { await copyDir(path.join(ROOT, 'rules/questions'), path.join(d, 'Q')); await fifo(d, 'Q/zz.yaml'); await put(d, 'c.yaml', GOOD); await answersFor(d, 'probe.armed: true\n'); }, args: ['triage', 'c.yaml', '--answers', 'a.yaml', '--questions', 'Q'], code: 2, stderr: /zz\.yaml: expected a question file \(a regular file\); got a FIFO/ },
  { name: 'a FIFO as ledger --trace', setup: (d) => fifo(d, 't.txt'), args: ['ledger', '--trace', 't.txt'], code: 2, stderr: /t\.txt: expected a trace file \(or - for stdin\) \(a regular file\); got a FIFO/ },
  { name: 'a FIFO as ledger --ops', setup: (d) => fifo(d, 'o.jsonl'), args: ['ledger', '--trace', TRACE, '--ops', 'o.jsonl'], code: 2, stderr: /o\.jsonl: expected an? ops\.jsonl file \(a regular file\); got a FIFO/ },
  { name: 'audit /dev/zero', args: ['audit', '/dev/zero'], code: 2, stderr: /\/dev\/zero: expected a case file \(a regular file\); got a character device/ },
  {
    name: 'from-bundle warnings capped per file, with a count of the rest',
    setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await put(d, 'B/end/kprobe_profile', 'garbage line\n'.repeat(50_000)); },
    args: ['case', 'from-bundle', 'B'], code: 0, manyLines: true,
    after: (_, r) => {
      const lines = r.stderr.trim().split('\n');
      expect(lines.length).toBeLessThanOrEqual(30);
      expect(r.stderr).toMatch(/end\/kprobe_profile: expected at most 10 warnings shown per file; got 49990 more in this file/);
    },
  },
  // --- internal errors that are user errors -------------------------------------------------
  { name: 'JSON nested 5,000 deep in ops lines', setup: (d) => put(d, 'o.jsonl', `{"op": ${'['.repeat(5000)}${']'.repeat(5000)}, "submit_ns": 1}\n`), args: ['ledger', '--trace', TRACE, '--ops', 'o.jsonl'], code: 2, stderr: /o\.jsonl:1: expected "op": a non-empty string; got "op": a list nested too deep to show/ },
  { name: 'JSON nested 5,000 deep in probe lines', setup: (d) => put(d, 'p.jsonl', `{"ev": "entry", "ts_ns": 1, "inst": ${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}\n`), args: ['ledger', '--trace', 'p.jsonl'], code: 2, stderr: /p\.jsonl:1: expected "inst": a string or number; got "inst": a mapping nested too deep to show/ },
  { name: 'a directory as --ops', setup: (d) => fs.mkdir(path.join(d, 'o')), args: ['ledger', '--trace', TRACE, '--ops', 'o'], code: 2, stderr: /o: expected an? ops\.jsonl file \(a regular file\); got a directory/ },
  { name: '-o into a missing directory', args: ['case', 'from-bundle', BUNDLE, '-o', 'no/such/dir/c.yaml'], code: 2, stderr: /c\.yaml: expected an existing directory to write the case file in; got no such directory/ },
  { name: '-o onto a directory', setup: (d) => fs.mkdir(path.join(d, 'out')), args: ['case', 'from-bundle', BUNDLE, '-o', 'out'], code: 2, stderr: /out: expected a regular file to write the case file to; got a directory/ },
  { name: "from-bundle --id 'Not Kebab'", args: ['case', 'from-bundle', BUNDLE, '--id', 'Not Kebab'], code: 2, stderr: /expected --id: a kebab-case id .*; got "Not Kebab"/ },
  { name: "from-bundle --event '../..'", args: ['case', 'from-bundle', BUNDLE, '--event', '../..'], code: 2, stderr: /expected --event: GRP\/EVENT without path components; got "\.\.\/\.\."/ },
  { name: 'stdout on a full disk', setup: (d) => put(d, 'c.yaml', GOOD), args: ['audit', 'c.yaml'], stdoutTo: '/dev/full', code: 2, stderr: /stdout: expected room to write the output; got no space left on the device/ },
  // --- one clear line, the right one --------------------------------------------------------
  { name: 'a YAML key that is a collection (case)', setup: (d) => put(d, 'c.yaml', `${GOOD}? [a, b]\n: 1\n`), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:4:3: expected a plain key \(a name\); got a list used as a key/, notStderr: /Warning/ },
  { name: 'a YAML key that is a collection (answers)', setup: async (d) => { await put(d, 'c.yaml', GOOD); await answersFor(d, '{ a: 1 }: true\n'); }, args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2, stderr: /a\.yaml:1:1: expected a plain key \(a name\); got a mapping used as a key/, notStderr: /Warning/ },
  {
    name: 'a rule with an unknown operator',
    setup: async (d) => {
      await copyDir(path.join(ROOT, 'rules'), path.join(d, 'R'));
      const f = path.join(d, 'R/counters/counter-reset.yaml');
      await fs.writeFile(f, (await fs.readFile(f, 'utf8')).replace('operator: equal, value: true }', 'operator: equalz, value: true }'));
      await put(d, 'c.yaml', GOOD);
    },
    args: ['audit', '--rules', 'R', 'c.yaml'], code: 2, stderr: /counter-reset\.yaml:8:\d+: expected when\.all\.0\.operator: one of equal \| notEqual.*; got equalz/, notStderr: /lazy/,
  },
  { name: 'a non-kebab id', setup: (d) => put(d, 'c.yaml', 'format: kretprobe-case/v1\nid: Not Kebab\n'), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:2:5: expected id: a string \(a kebab-case id\); got Not Kebab/ },
  { name: 'format: [kretprobe-case/v1]', setup: (d) => put(d, 'c.yaml', 'format: [kretprobe-case/v1]\nid: x\n'), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:1:9: expected format: kretprobe-case\/v1; got format: \[kretprobe-case\/v1\]/ },
  { name: 'an undefined alias', setup: (d) => put(d, 'c.yaml', `${GOOD}title: *nope\n`), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:4:8: expected an alias to an anchor defined before it \(&nope\); got \*nope with no such anchor/, notStderr: /bomb/ },
  { name: "commander's errors in one line", args: ['audit', '--frobnicate', 'x'], code: 2, stderr: /^kretprobe-triage: error: unknown option '--frobnicate' \(run with --help for usage\)$/ },
  { name: "commander's missing argument in one line", args: ['rules', 'explain'], code: 2, stderr: /^kretprobe-triage: error: missing required argument 'id' \(run with --help for usage\)$/ },
  // --- writes never damage the user's files -------------------------------------------------
  { name: '-o onto a device', args: ['case', 'from-bundle', BUNDLE, '-o', '/dev/null'], code: 2, stderr: /\/dev\/null: expected a regular file to write the case file to; got a character device/, after: () => { expect(statSync('/dev/null').isCharacterDevice()).toBe(true); } },
  { name: '-o onto an input of the same run', setup: (d) => copyDir(BUNDLE, path.join(d, 'B')), args: ['case', 'from-bundle', 'B', '-o', 'B/end/kprobe_profile', '--force'], code: 2, stderr: /kprobe_profile: expected an output path that is not an input of this run; got a file inside the input .*end/ },
  { name: '-o onto an existing file without --force', setup: (d) => put(d, 'out.yaml', 'mine\n'), args: ['case', 'from-bundle', BUNDLE, '-o', 'out.yaml'], code: 2, stderr: /out\.yaml: expected a new file for the case file \(or --force to replace it\); got an existing file/ },
  { name: '-o onto an existing file with --force', setup: (d) => put(d, 'out.yaml', 'mine\n', 0o600), args: ['case', 'from-bundle', BUNDLE, '-o', 'out.yaml', '--force'], code: 0, changes: ['out.yaml'], after: async (d) => { expect(await fs.readFile(path.join(d, 'out.yaml'), 'utf8')).toMatch(/^# Built by kretprobe-triage/); expect(statSync(path.join(d, 'out.yaml')).mode & 0o777).toBe(0o600); } },
  {
    name: 'write-back through a symlink keeps the link and the mode',
    setup: async (d) => { await put(d, 'real/c.yaml', GOOD, 0o600); await fs.symlink('real/c.yaml', path.join(d, 'link.yaml')); await answersFor(d, 'probe.armed: true\n'); },
    args: ['triage', 'link.yaml', '--answers', 'a.yaml'], code: -1, changes: ['real/c.yaml', 'real/c.yaml.bak'],
    after: async (d, r) => {
      expect(r.stderr).toBe('');
      expect((await fs.lstat(path.join(d, 'link.yaml'))).isSymbolicLink()).toBe(true);
      expect(await fs.readFile(path.join(d, 'real/c.yaml'), 'utf8')).toMatch(/armed: true/);
      expect(statSync(path.join(d, 'real/c.yaml')).mode & 0o777).toBe(0o600);
    },
  },
  { name: 'the case size limit is in bytes when reading', setup: (d) => put(d, 'c.yaml', `${GOOD}title: "${'€'.repeat(350_000)}"\n`), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml: expected a case file of at most 1024 KiB; got 105\d{4} bytes/ },
  {
    name: 'the case size limit is in bytes when writing (triage cannot write a case it would refuse)',
    setup: async (d) => { await put(d, 'c.yaml', `${GOOD}title: "${'€'.repeat(349_500)}"\n`); await answersFor(d, 'probe.armed: true\nprobe.interface: tracefs\nkernel.possible_cpus: 0-3,8-11\n'); },
    args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2, stderr: /c\.yaml: expected a case file of at most 1024 KiB; got 10\d{5} bytes/,
  },
  {
    name: 'a stray temporary file of a killed run is removed on the next write',
    setup: async (d) => { await put(d, 'c.yaml', GOOD); await put(d, '.c.yaml.0123456789ab.tmp', 'half'); await fs.utimes(path.join(d, '.c.yaml.0123456789ab.tmp'), new Date(0), new Date(0)); await answersFor(d, 'probe.armed: true\n'); },
    args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: -1, changes: ['c.yaml', 'c.yaml.bak', '.c.yaml.0123456789ab.tmp'],
    after: async (d) => { expect(await fs.readdir(d)).not.toContain('.c.yaml.0123456789ab.tmp'); },
  },
  // --- silently accepted ---------------------------------------------------------------------
  { name: 'invalid UTF-8 in a text field', setup: (d) => put(d, 'c.yaml', Buffer.concat([Buffer.from(`${GOOD}title: "bad `), Buffer.from([0xc3, 0x28]), Buffer.from('"\n')])), args: ['audit', 'c.yaml'], code: 2, stderr: /c\.yaml:4:13: expected a case file in UTF-8; got the byte 0xc3, which is not UTF-8/ },
  { name: 'invalid UTF-8 in an ops line', setup: (d) => put(d, 'o.jsonl', Buffer.concat([Buffer.from('{"op": "r'), Buffer.from([0xff]), Buffer.from('", "submit_ns": 1}\n')])), args: ['ledger', '--trace', TRACE, '--ops', 'o.jsonl'], code: 2, stderr: /o\.jsonl:1: expected a line of UTF-8 text; got the byte 0xff at column 10/ },
  { name: '--capture-start-ns after --capture-stop-ns', args: ['ledger', '--trace', TRACE, '--ops', OPS, '--capture-start-ns', '10', '--capture-stop-ns', '5'], code: 2, stderr: /expected --capture-start-ns at or before --capture-stop-ns \(5\); got 10/ },
  { name: 'a directory in place of a snapshot file', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/end/kprobe_profile')); await fs.mkdir(path.join(d, 'B/end/kprobe_profile')); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/end\/kprobe_profile: expected a snapshot file \(a regular file\); got a directory/ },
  { name: 'a FIFO in place of a snapshot file', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/end/trace')); await fifo(d, 'B/end/trace'); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/end\/trace: expected a snapshot file \(a regular file\); got a FIFO/ },
  { name: 'a symlink loop in place of a snapshot file', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/end/trace')); await fs.symlink('trace', path.join(d, 'B/end/trace')); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/end\/trace: expected a snapshot file \(a regular file\); got a symbolic link loop/ },
  { name: 'a plain file in place of start/', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/start'), { recursive: true }); await put(d, 'B/start', 'x'); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/start: expected a start\/ snapshot directory \(or none\); got a regular file/ },
  { name: 'a snapshot without its manifest', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/end/manifest')); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/end\/manifest: expected a complete end snapshot .*; got no manifest file/ },
  { name: 'a missing entry that does not say why', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await put(d, 'B/end/missing', 'kallsyms\t/proc/kallsyms\n'); }, args: ['case', 'from-bundle', 'B'], code: 0, manyLines: true, stderr: /warning: end\/missing:1: expected a missing entry NAME<TAB>PATH<TAB>why it could not be read; got "kallsyms\\t\/proc\/kallsyms"/ },
  { name: 'a snapshot without its missing list', setup: async (d) => { await copyDir(BUNDLE, path.join(d, 'B')); await fs.rm(path.join(d, 'B/start/missing')); }, args: ['case', 'from-bundle', 'B'], code: 2, stderr: /B\/start\/missing: expected a complete start snapshot .*; got no missing file/ },
];

describe('issue 13: every failure class through the CLI', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_, row) => checkRow(base, row), 60_000);
});

/** The fast YAML path and the positioned one: an unrelated anchor must not change the outcome. */
describe('issue 13: the two YAML paths agree through the CLI', () => {
  const bodies: Array<[string, string]> = [
    ['0b11 as a target', 'probe: { target: 0b11, registration: { result: EINVAL } }\n'],
    ['1e309 as an errno', 'probe: { target: f, registration: { result: 1e309 } }\n'],
    ['CR-only line ends', 'probe:\r  target: f\r  registration: { result: EINVAL }\r'],
    ['0o17 as a count', 'probe: { target: f, registration: { result: EINVAL } }\nledger: { eligible: 0o17 }\n'],
    ['1_000 as a count', 'probe: { target: f, registration: { result: EINVAL } }\nledger: { eligible: 1_000 }\n'],
  ];
  it.each(bodies)('%s', async (_, body) => {
    const dir = await fs.mkdtemp(path.join(base, 'agree-'));
    await put(dir, 'plain.yaml', `format: kretprobe-case/v1\nid: x\n${body}`);
    await put(dir, 'anchored.yaml', `format: kretprobe-case/v1\nid: &i x\n${body}`);
    const a = run(['audit', '--format', 'json', 'plain.yaml'], dir);
    const b = run(['audit', '--format', 'json', 'anchored.yaml'], dir);
    expect(a.hung || b.hung).toBe(false);
    expect(b.code).toBe(a.code);
    expect(b.stdout.replaceAll('anchored.yaml', 'plain.yaml')).toBe(a.stdout);
    expect(b.stderr.replace('anchored.yaml', 'plain.yaml').replace(/:(\d+):(\d+):/, ':L:C:')).toBe(a.stderr.replace(/:(\d+):(\d+):/, ':L:C:'));
  }, 60_000);
});
