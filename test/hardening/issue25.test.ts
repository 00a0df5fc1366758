import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/helpers.js';
import { checkRow, put, type Row } from './harness.js';

/**
 * Issue 25, one row per item through the CLI, as issue 13's rows: the exit code, exactly one
 * stderr line, every file unchanged (sha256 and mode) unless the row names it.
 */
const GOOD = 'format: kretprobe-case/v1\nid: good\nprobe: { target: f, registration: { result: EINVAL } }\n';
const caseWithId = (id: string) => GOOD.replace('id: good', `id: ${id}`);
const WRITEUP = path.join(ROOT, 'cases/writeups/bpftrace-attach-error.txt');
/** Control characters an input may hold: OSC (set the title), BEL, CSI (clear the screen), a raw CR, a C1 CSI. */
const NASTY = '\x1b]0;pwned\x07\x1b[2J\r\u009b2J';
/** No control character but newline and tab reached the output. */
const noControls = (text: string) => expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
const copyRules = (d: string) => fs.cp(path.join(ROOT, 'rules'), path.join(d, 'R'), { recursive: true });

let base: string;
beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-issue25-'));
});
afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** The case ids an `audit --format json` run reports, in order (one JSON document per case). */
function auditedIds(stdout: string): string[] {
  return [...stdout.matchAll(/^\{"id":"([^"]+)"/gm)].map((m) => m[1]!);
}

/** A batch directory with every kind of symbolic link: each case is audited once, and a link that cannot be followed is named. */
async function symlinkBatch(d: string): Promise<void> {
  for (const [rel, id] of [['b/a.yaml', 'a'], ['b/sub/s.yaml', 's'], ['ext/e.yaml', 'e'], ['ext/d/f.yaml', 'f']] as const) await put(d, rel, caseWithId(id));
  const link = (target: string, name: string) => fs.symlink(target, path.join(d, 'b', name));
  await link('../ext/e.yaml', 'link-e.yaml'); // a case outside: followed
  await link('../ext/d', 'linkd'); // a directory outside: followed
  await link('../ext', 'linkext'); // holds only what was followed already
  await link('.', 'self'); // a loop to itself
  await link('..', 'up'); // a loop through an ancestor
  await link('a.yaml', 'dup.yaml'); // a case reached anyway
  await link('nowhere.yaml', 'dangle.yaml'); // to nothing: named
}

const ROWS: Row[] = [
  // --- internal errors and hangs: one line, exit 2 ---------------------------------------------
  { name: 'audit --rules nope', setup: (d) => put(d, 'c.yaml', GOOD), args: ['audit', 'c.yaml', '--rules', 'nope'], code: 2, stderr: /^kretprobe-triage: nope: expected a rules directory; got no such directory$/ },
  { name: 'audit --rules FILE', setup: (d) => put(d, 'c.yaml', GOOD), args: ['audit', 'c.yaml', '--rules', 'c.yaml'], code: 2, stderr: /^kretprobe-triage: c\.yaml: expected a rules directory; got a file$/ },
  { name: 'lab --out /dev/null', args: ['lab', '--out', '/dev/null'], code: 2, stderr: /^kretprobe-triage: \/dev\/null: expected a directory for --out \(bundles, cases and console logs\); got a character device$/ },
  { name: 'lab --kernel /dev/zero is refused before any boot', args: ['lab', '--kernel', '/dev/zero', '--out', 'lo'], code: 2, stderr: /^kretprobe-triage: \/dev\/zero: expected a bootable x86_64 kernel image .*; got a character device$/ },
  { name: 'lab --kernel of a file that is no kernel is refused before any boot', setup: (d) => put(d, 'k', Buffer.alloc(4096)), args: ['lab', '--kernel', 'k', '--out', 'lo'], code: 2, stderr: /k: expected a bootable x86_64 kernel image .*; got a file with neither the boot header/ },
  // --- terminal safety: every C0/C1 control escaped, one error one line -------------------------
  {
    name: 'ESC sequences in a case title are escaped in text output',
    setup: (d) => put(d, 'c.yaml', GOOD.replace('id: good', `id: good\ntitle: ${JSON.stringify(`t ${NASTY} t`)}`)),
    args: ['audit', 'c.yaml'], code: 0,
    after: (_, r) => { noControls(r.stdout); expect(r.stdout).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u009b2J'); expect(r.stderr).toBe(''); },
  },
  {
    name: 'ESC sequences in a case title are escaped in Markdown and JSON output too',
    setup: (d) => put(d, 'c.yaml', GOOD.replace('id: good', `id: good\ntitle: ${JSON.stringify(`t ${NASTY} t`)}`)),
    args: ['audit', '--format', 'markdown', 'c.yaml'], code: 0,
    after: (_, r) => { noControls(r.stdout); expect(r.stdout).toContain('\\u001b[2J'); },
  },
  {
    name: 'ESC sequences in a write-up are escaped in text output',
    setup: async (d) => put(d, 'w.txt', (await fs.readFile(WRITEUP, 'utf8')).replace('which proves', `which ${NASTY} proves`)),
    args: ['audit', 'w.txt'], code: -1,
    after: (_, r) => { noControls(r.stdout); expect(r.stdout).toContain('\\u001b[2J'); },
  },
  {
    name: 'a file name with ESC and a newline is one escaped error line',
    setup: (d) => put(d, 'b\x1b[2Jx\ny.yaml', 'format: kretprobe-case/v1\nid: Bad\n'),
    args: ['audit', 'b\x1b[2Jx\ny.yaml'], code: 2,
    stderr: /^kretprobe-triage: b\\u001b\[2Jx\\ny\.yaml:2:5: expected id: a string \(a kebab-case id\); got Bad$/,
  },
  {
    name: 'a raw CR in an answers key is escaped in the error line',
    setup: async (d) => { await put(d, 'c.yaml', GOOD); await put(d, 'a.yaml', 'probe.armed\r\x1b[1A: true\n'); },
    args: ['triage', 'c.yaml', '--answers', 'a.yaml'], code: 2,
    stderr: /^kretprobe-triage: a\.yaml:1:1: expected a fact a triage question sets .*; got probe\.armed\\r\\u001b\[1A$/,
  },
  {
    name: 'a YAML block scalar quoted in an error message stays one line',
    setup: (d) => put(d, 'c.yaml', 'format: kretprobe-case/v1\nid: |\n  multi\n  line\n'),
    args: ['audit', 'c.yaml'], code: 2,
    stderr: /^kretprobe-triage: c\.yaml:2:5: expected id: a string \(a kebab-case id\); got \|\\n {2}multi\\n {2}line$/,
  },
  // --- Markdown reports show HTML from a case as text ------------------------------------------
  {
    name: 'audit --format markdown escapes raw HTML from case text',
    setup: (d) => put(d, 'c.yaml', GOOD.replace('id: good', 'id: good\ntitle: "<script>alert(1)</script> & <b>"')),
    args: ['audit', '--format', 'markdown', 'c.yaml'], code: 0,
    after: (_, r) => { expect(r.stdout).not.toMatch(/<script|<b>/); expect(r.stdout).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;'); },
  },
  {
    name: 'report -o r.md escapes raw HTML from case text',
    setup: (d) => put(d, 'c.yaml', GOOD.replace('id: good', 'id: good\ntitle: "<script>alert(1)</script>"')),
    args: ['report', 'c.yaml', '-o', 'r.md'], code: 0, stderr: /^wrote r\.md$/, changes: ['r.md', 'r.identity.svg', 'r.durations.svg'],
    after: async (d) => { const md = await fs.readFile(path.join(d, 'r.md'), 'utf8'); expect(md).not.toMatch(/<script/); expect(md).toContain('&lt;script&gt;'); },
  },
  // --- a write never replaces a file the run read -----------------------------------------------
  {
    name: 'report -o --force refuses to replace a rules file the run read',
    setup: async (d) => { await copyRules(d); await put(d, 'c.yaml', GOOD); },
    args: ['report', 'c.yaml', '--rules', 'R', '--format', 'markdown', '-o', 'R/counters/counter-reset.yaml', '--force'], code: 2,
    stderr: /R\/counters\/counter-reset\.yaml: expected an output path that is not an input of this run; got a file this run read \(nothing written\)$/,
  },
  {
    name: 'writeup extract -o --force refuses to replace a lexicon file the run read',
    setup: async (d) => { await copyRules(d); await fs.copyFile(WRITEUP, path.join(d, 'w.txt')); },
    args: ['writeup', 'extract', 'w.txt', '--rules', 'R', '-o', 'R/lexicon/facts.yaml', '--force'], code: 2,
    stderr: /R\/lexicon\/facts\.yaml: expected an output path that is not an input of this run; got a file this run read \(nothing written\)$/,
  },
  {
    name: 'audit -o --force refuses to replace a rules file the run read',
    setup: async (d) => { await copyRules(d); await put(d, 'c.yaml', GOOD); },
    args: ['audit', 'c.yaml', '--rules', 'R', '-o', 'R/verdicts.yaml', '--force'], code: 2,
    stderr: /R\/verdicts\.yaml: expected an output path that is not an input of this run; got .*\(nothing written\)$/,
  },
  // --- a report and its pictures are one unit ---------------------------------------------------
  {
    name: 'report -o r.md onto an existing r.md writes no picture',
    setup: async (d) => { await put(d, 'c.yaml', GOOD); await put(d, 'r.md', 'mine\n', 0o640); },
    args: ['report', 'c.yaml', '-o', 'r.md'], code: 2,
    stderr: /r\.md: expected a new file for the report \(or --force to replace it\); got an existing file \(nothing written\)$/,
  },
  {
    name: 'report -o r.md with one picture already there writes nothing',
    // A case whose report draws its accounting identity (a chart with nothing to draw is left out).
    setup: async (d) => { await put(d, 'c.yaml', await fs.readFile(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8')); await put(d, 'r.identity.svg', '<svg/>\n'); },
    args: ['report', 'c.yaml', '-o', 'r.md'], code: 2,
    stderr: /r\.identity\.svg: expected a new file for the report \(or --force to replace it\); got an existing file \(nothing written\)$/,
  },
  {
    name: 'silent wrong answer 5: symlinked cases in a batch are followed once, loops guarded, a dangling one named',
    setup: symlinkBatch,
    args: ['audit', '--format', 'json', 'b'],
    code: 2,
    stderr: /^kretprobe-triage: b\/dangle\.yaml: expected a case file, or a symbolic link to one; got a symbolic link to nothing \(skipped\)$/,
    after: (_, r) => {
      expect(auditedIds(r.stdout).sort()).toEqual(['a', 'e', 'f', 's']);
    },
  },
  {
    name: 'silent wrong answer 5: a symbolic link loop in a batch is named',
    setup: async (d) => { await put(d, 'b/a.yaml', caseWithId('a')); await fs.symlink('loop.yaml', path.join(d, 'b/loop.yaml')); },
    args: ['audit', '--format', 'json', 'b'],
    code: 2,
    stderr: /^kretprobe-triage: b\/loop\.yaml: expected a case file, or a symbolic link to one; got a symbolic link loop \(skipped\)$/,
    after: (_, r) => { expect(auditedIds(r.stdout)).toEqual(['a']); },
  },
];

describe('issue 25: every item through the CLI', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_, row) => checkRow(base, row), 60_000);
});
