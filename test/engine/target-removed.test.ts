import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadRules, parseCase, type Rules } from '../../src/index.js';
import { targetRemoved } from '../../src/facts/coverage.js';
import { extractWriteup, loadLexicon } from '../../src/writeup/index.js';

// A function the write-up says went away in some release (coverage.removed_in: removed, or renamed
// as do_fork was to kernel_clone in 5.10) cannot be probed on a kernel at or past that release: a
// probe on a missing symbol is refused (kernel-facts.md: register_kprobe returns ENOENT). Before
// scope/target-removed no rule compared the two, and such a case stayed insufficient-evidence.

describe('coverage.target_removed: the kernel against the release the function went away in', () => {
  it.each([
    // removed in, kernel release, expected (each from the release numbers alone)
    ['5.10', '6.1.0-18-amd64', true],
    ['5.10', '5.10.0-8-amd64', true],
    ['5.10', '5.4.0-150-generic', false],
    ['5.10', '5.9.16', false],
    ['5.8', '6.12.95+deb12-amd64', true],
    ['4.14', '4.9.0', false],
    ['4.14', '5.4.0-42-generic', true],
    // a point release inside the removal's series: only a stated point release decides
    ['5.10.3', '5.10.20', true],
    ['5.10.3', '5.10.1', false],
    ['5.10.3', '5.10.0-8-amd64', undefined],
    // the kernel unknown, or a release no one can read
    ['5.10', undefined, undefined],
    ['5.10', 'unknown-kernel', undefined],
    // no removal reported bounds nothing
    [undefined, '6.1.0-18-amd64', false],
  ] as const)('removed in %s, kernel %s: %s', (gone, release, want) => {
    expect(targetRemoved(gone, release)).toBe(want);
  });
});

describe('what a removal decides', () => {
  let rules: Rules;
  beforeAll(async () => {
    rules = await loadRules(path.resolve(import.meta.dirname, '../../rules'));
  });
  const judge = (yaml: string) => evaluateCase(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml'), rules);

  it('a write-up that names its kernel and says the function was renamed before it is a setup failure, with the finding', async () => {
    const lex = await loadLexicon();
    const x = extractWriteup('# excerpt\n\nOn 6.1.0-18-amd64 our kretprobe on do_fork never fires. do_fork was renamed to kernel_clone in 5.10.\n', 'thread.md', lex);
    const v = await evaluateCase(x.case, rules);
    expect(v.verdict).toBe('setup-failure');
    expect(v.findings.map((f) => f.rule)).toContain('scope/target-removed');
  });

  it('a probe shown registered on a removed function is a contradiction, and no setup failure rests on it', async () => {
    const v = await judge('kernel: { release: 6.1.0-18-amd64 }\nprobe: { target: do_fork, registration: { result: ok } }\ncoverage: { removed_in: "5.10" }\n');
    expect(v.findings.map((f) => f.rule)).toContain('constraints/removed-target-not-registered');
    expect(v.findings.map((f) => f.rule)).not.toContain('scope/target-removed');
  });

  it('a blacklisted target with its registration unknown is a setup failure with its finding (before: definite, with no finding)', async () => {
    const v = await judge('probe: { target: do_int3 }\ncoverage: { blacklisted: true }\n');
    expect(v.verdict).toBe('setup-failure');
    expect(v.findings.map((f) => f.rule)).toContain('scope/blacklisted-target');
  });
});
