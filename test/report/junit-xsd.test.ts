import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from '../cli/helpers.js';
import { hasTool } from '../support/tools.js';

// `audit --format junit` against the JUnit XSD the Jenkins xUnit plugin validates with
// (test/fixtures/junit/SOURCE.md), by xmllint; then what consumers read: time on suites and
// cases, root totals that add up, a file on every testcase (GitLab links by it).
const XSD = path.join(ROOT, 'test/fixtures/junit/junit-10.xsd');

function xsdProblems(xml: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-junit-'));
  const file = path.join(dir, 'report.xml');
  writeFileSync(file, xml);
  const r = spawnSync('xmllint', ['--noout', '--schema', XSD, file], { encoding: 'utf8' });
  return r.status === 0 ? '' : r.stderr.trim();
}
const attrs = (tag: string) => Object.fromEntries([...tag.matchAll(/ ([a-z]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
const tags = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}( [^>]*)?>`, 'g'))].map((m) => attrs(m[0]));

// Without xmllint this skips and test/deps.test.ts fails with the one-line cause.
describe.skipIf(!hasTool('xmllint'))('--format junit against a published JUnit XSD', () => {
  it('the XSD check can fail: an attribute the schema does not know', () => {
    expect(xsdProblems('<?xml version="1.0"?><testsuites><testsuite tests="1" colour="red"/></testsuites>')).toMatch(/colour/);
  });

  it('the whole reference set, and a batch with a file that cannot be read, are valid', () => {
    expect(xsdProblems(cli(['audit', 'cases/', '-f', 'junit']).stdout)).toBe('');
    expect(xsdProblems(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', 'no-such.yaml', '-f', 'junit', '--fail-on', 'capacity-missed']).stdout)).toBe('');
  });

  it('root totals add up the suites; time on suites and cases; a file on every testcase', () => {
    const xml = cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', 'cases/table/stall-after-quiesce.yaml', 'no-such.yaml', '-f', 'junit', '--fail-on', 'capacity-missed']).stdout;
    const [root] = tags(xml, 'testsuites');
    const suites = tags(xml, 'testsuite');
    const cases = tags(xml, 'testcase');
    expect(suites).toHaveLength(3);
    for (const key of ['tests', 'failures', 'errors'] as const) expect(Number(root![key])).toBe(suites.reduce((n, s) => n + Number(s[key]), 0));
    expect(Number(root!.tests)).toBe(cases.length);
    expect(Number(root!.failures)).toBeGreaterThan(0);
    expect(Number(root!.errors)).toBe(1);
    for (const t of [root!, ...suites, ...cases]) expect(t.time).toMatch(/^\d+\.\d{3}$/);
    expect(Math.abs(Number(root!.time) - suites.reduce((n, s) => n + Number(s.time), 0))).toBeLessThan(0.01);
    expect(new Set(cases.map((c) => c.file))).toEqual(new Set(['cases/kernel-notes/r2-constrained.yaml', 'cases/table/stall-after-quiesce.yaml', 'no-such.yaml']));
  });
});
