import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { compileGlob, excludeMatcher, isGlob } from '../../src/audit/glob.js';

// Globs as picomatch reads them; the star-heavy ones through the linear matcher.
describe('globs (src/audit/glob.ts)', () => {
  it.each([
    ['a star within a segment', '*.yaml', 'a.yaml', true],
    ['a star stops at a slash', '*.yaml', 'd/a.yaml', false],
    ['** over no directory', 'cases/**/*.yaml', 'cases/a.yaml', true],
    ['** over two directories', 'cases/**/*.yaml', 'cases/x/y/a.yaml', true],
    ['** then the wrong suffix', 'cases/**/*.yaml', 'cases/x/a.yml', false],
    ['a leading **/', '**/*.md', 'a.md', true],
    ['a class', 'x[ab]?.md', 'xbq.md', true],
    ['a class that refuses', 'x[ab]?.md', 'xcq.md', false],
    ['a negated class', 'x[^ab].md', 'xc.md', true],
    ['a negated class that refuses', 'x[^ab].md', 'xa.md', false],
    ['a POSIX class', '[[:digit:]]x', '7x', true],
    ['braces, first branch', '{lab,table}/*.yaml', 'lab/a.yaml', true],
    ['braces, second branch', '{lab,table}/*.yaml', 'table/a.yaml', true],
    ['braces, no branch', '{lab,table}/*.yaml', 'other/a.yaml', false],
    ['a brace range', 'r{1..3}.yaml', 'r2.yaml', true],
    ['an escaped star is a star', 'a\\*b', 'a*b', true],
    ['an escaped star is not a wildcard', 'a\\*b', 'axb', false],
  ])('%s: %s ~ %s is %s', (_situation, glob, path, match) => {
    expect(compileGlob(glob)(path)).toBe(match);
    // The table is picomatch's reading of each pattern, not ours.
    expect(picomatch.isMatch(path, glob, { dot: true })).toBe(match);
  });

  it.each([
    ['braces name directories anywhere', '{lab,kernel-notes}', 'cases/lab/x.yaml', true],
    ['braces with a slash, matched', 'cases/{lab,table}', 'cases/table/x.yaml', true],
    ['braces with a slash, not matched', 'cases/{lab,table}', 'cases/other/x.yaml', false],
    ['a class in a name', 'r[0-9].yaml', 'cases/kernel-notes/r8.yaml', true],
    ['a directory pattern leaves out what is under it', 'cases/lab/', 'cases/lab/a/b.yaml', true],
    ['./ at the start is the working directory', './cases/lab', 'cases/lab/a.yaml', true],
  ])('--exclude %s: %s leaves out %s: %s', (_situation, glob, path, out) => {
    expect(excludeMatcher(glob)(path)).toBe(out);
  });

  it.each([['cases/**/*.yaml', true], ['{a,b}', true], ['cases/lab', false], ['-', false]])('%s is a pattern: %s', (s, want) => {
    expect(isGlob(s)).toBe(want);
  });

  // A backtracking matcher takes minutes here (the hand-written one took 37 s on a shorter
  // name); the bound is generous so that a loaded machine cannot make it flaky.
  it('many stars against a long name that does not match finish in well under 5 s', () => {
    const name = 'a'.repeat(4000);
    const start = process.hrtime.bigint();
    expect(compileGlob('*a*a*a*a*a*a*a*a*a*a*b')(name)).toBe(false);
    expect(excludeMatcher('*a*a*a*a*a*a*a*a*a*a*b')(`cases/${name}`)).toBe(false);
    expect(Number(process.hrtime.bigint() - start) / 1e9).toBeLessThan(5);
  });
});
