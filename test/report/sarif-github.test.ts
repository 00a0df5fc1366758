import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from '../cli/helpers.js';

// GitHub code scanning's rules for an uploaded SARIF file ("SARIF support for code scanning",
// docs.github.com), written down as checks, with the SARIF 2.1.0 spec's level/kind rules:
//  - valid against the SARIF 2.1.0 schema; at most 20 runs, 25,000 results and 25,000 rules a run;
//  - tool.driver.name; a run category (runAutomationDetails: automationDetails.id);
//  - each result: ruleId declared in tool.driver.rules, ruleIndex pointing at it, message.text,
//    at least one location with a relative artifactLocation.uri and region.startLine >= 1,
//    at most 1,000 locations; partialFingerprints (GitHub tracks an alert across runs by them);
//  - rules: helpUri absolute; at most 20 tags; texts shown as written (no template left in);
//  - level in error|warning|note|none; kind fail needs a level other than none, and level none a
//    kind other than fail (spec 3.27.9/3.27.10).
const SCHEMA = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/sarif/sarif-schema-2.1.0.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(SCHEMA);

interface Result {
  ruleId?: string;
  ruleIndex?: number;
  kind?: string;
  level?: string;
  message: { text?: string };
  locations?: Array<{ physicalLocation?: { artifactLocation?: { uri?: string }; region?: { startLine?: number } } }>;
  partialFingerprints?: Record<string, string>;
  suppressions?: unknown[];
  properties?: { case?: string };
}
interface Rule { id: string; helpUri?: string; shortDescription?: { text: string }; fullDescription?: { text: string }; help?: { text: string; markdown?: string }; properties?: { tags?: string[] } }
interface Log { runs: Array<{ tool: { driver: { name?: string; rules: Rule[] } }; automationDetails?: { id?: string }; results: Result[] }> }

/** Every way `log` breaks an upload rule, as short strings (empty: GitHub accepts it). */
function uploadProblems(log: Log): string[] {
  const problems: string[] = [];
  if (!validate(log)) problems.push(...(validate.errors ?? []).slice(0, 5).map((e) => `schema: ${e.instancePath} ${e.message}`));
  if (log.runs.length > 20) problems.push('more than 20 runs');
  for (const run of log.runs) {
    const rules = run.tool.driver.rules;
    if (!run.tool.driver.name) problems.push('no tool.driver.name');
    if (!run.automationDetails?.id) problems.push('no automationDetails.id');
    if (run.results.length > 25_000) problems.push('more than 25,000 results');
    if (rules.length > 25_000) problems.push('more than 25,000 rules');
    for (const rule of rules) {
      if (!rule.helpUri || !/^https?:\/\//.test(rule.helpUri)) problems.push(`rule ${rule.id}: helpUri not absolute: ${rule.helpUri}`);
      if ((rule.properties?.tags?.length ?? 0) > 20) problems.push(`rule ${rule.id}: more than 20 tags`);
      for (const text of [rule.shortDescription?.text, rule.fullDescription?.text, rule.help?.text, rule.help?.markdown]) {
        if (text && /\{[a-z_]+(?:\.[a-z_]+)*\}/.test(text)) problems.push(`rule ${rule.id}: unfilled placeholder in "${text.slice(0, 60)}"`);
      }
    }
    for (const r of run.results) {
      const what = `${r.properties?.case}/${r.ruleId}`;
      if (!r.ruleId || r.ruleIndex === undefined || rules[r.ruleIndex]?.id !== r.ruleId) problems.push(`${what}: ruleIndex ${r.ruleIndex} does not name its declared rule`);
      if (!r.message.text) problems.push(`${what}: no message.text`);
      const locations = r.locations ?? [];
      if (locations.length === 0 || locations.length > 1000) problems.push(`${what}: ${locations.length} locations`);
      for (const l of locations) {
        const uri = l.physicalLocation?.artifactLocation?.uri;
        if (!uri || /^[a-z]+:|^\//i.test(uri)) problems.push(`${what}: uri not relative: ${uri}`);
        if (!(Number(l.physicalLocation?.region?.startLine) >= 1)) problems.push(`${what}: no startLine`);
      }
      if (!r.partialFingerprints || Object.keys(r.partialFingerprints).length === 0) problems.push(`${what}: no partialFingerprints`);
      const level = r.level ?? 'warning';
      const kind = r.kind ?? 'fail';
      if (!['error', 'warning', 'note', 'none'].includes(level)) problems.push(`${what}: level ${level}`);
      if (kind === 'fail' && level === 'none') problems.push(`${what}: level none without a kind`);
      if (kind !== 'fail' && level !== 'none') problems.push(`${what}: kind ${kind} with level ${level}`);
    }
  }
  return problems;
}

const sarif = (args: string[], cwd?: string) => JSON.parse(cli(['audit', ...args, '--format', 'sarif'], cwd ? { cwd } : {}).stdout) as Log;
const fingerprints = (log: Log) => log.runs[0]!.results.map((r) => `${r.properties?.case}|${r.ruleId}|${JSON.stringify(r.partialFingerprints)}`);

describe('SARIF as GitHub code scanning accepts it', () => {
  it('the checks catch what GitHub refuses', () => {
    const bad: Log = { runs: [{ tool: { driver: { rules: [{ id: 'a/b', helpUri: 'docs/x.md', shortDescription: { text: 'n {probe.x}' } }] } }, results: [{ ruleId: 'a/b', level: 'none', message: { text: 'x' } }] }] };
    expect(uploadProblems(bad)).toEqual(expect.arrayContaining([
      'no tool.driver.name', 'no automationDetails.id', 'rule a/b: helpUri not absolute: docs/x.md', expect.stringMatching(/unfilled placeholder/),
      expect.stringMatching(/ruleIndex undefined/), expect.stringMatching(/0 locations/), expect.stringMatching(/no partialFingerprints/), expect.stringMatching(/level none without a kind/),
    ]));
  });

  it('accepts the audit of every shipped case and write-up', () => {
    expect(uploadProblems(sarif(['cases/']))).toEqual([]);
  });

  it('writes no passing result unless asked; with --sarif-passes they are kind pass, level none', () => {
    const plain = sarif(['cases/']).runs[0]!.results;
    expect(plain.filter((r) => r.kind === 'pass')).toEqual([]);
    const withPasses = sarif(['cases/', '--sarif-passes']);
    expect(uploadProblems(withPasses)).toEqual([]);
    const passes = withPasses.runs[0]!.results.filter((r) => r.kind === 'pass');
    expect(passes.length).toBeGreaterThan(0);
    expect(new Set(passes.map((r) => r.level))).toEqual(new Set(['none']));
  });

  it('fingerprints are the same across runs and when the lines shift', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-fp-'));
    const text = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8');
    writeFileSync(path.join(dir, 'c.yaml'), text);
    const first = sarif(['c.yaml'], dir);
    expect(fingerprints(sarif(['c.yaml'], dir))).toEqual(fingerprints(first));
    writeFileSync(path.join(dir, 'c.yaml'), `# a comment\n# and another\n\n${text}`);
    const shifted = sarif(['c.yaml'], dir);
    expect(fingerprints(shifted)).toEqual(fingerprints(first));
    const line = (log: Log) => log.runs[0]!.results[0]!.locations![0]!.physicalLocation!.region!.startLine!;
    expect(line(shifted)).toBe(line(first) + 3);
    expect(new Set(fingerprints(first)).size).toBe(first.runs[0]!.results.length);
  });

  it('helpUri comes from package.json unless --help-uri-base names another base', () => {
    const rules = (log: Log) => log.runs[0]!.tool.driver.rules;
    const nmissed = (log: Log) => rules(log).find((r) => r.id === 'counters/nmissed-rose')!.helpUri;
    expect(nmissed(sarif(['cases/kernel-notes/r2-constrained.yaml']))).toMatch(/^https:\/\/.*\/docs\/article\.md#read-missed-and-filtered-cases-separately$/);
    expect(nmissed(sarif(['cases/kernel-notes/r2-constrained.yaml', '--help-uri-base', 'https://example.org/krt']))).toBe('https://example.org/krt/docs/article.md#read-missed-and-filtered-cases-separately');
    expect(cli(['audit', 'cases/kernel-notes/r2-constrained.yaml', '--format', 'sarif', '--help-uri-base', 'docs/']).code).toBe(2);
  });

  it('a verdict resting only on waived findings is suppressed with them', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-waive-'));
    const base = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8').replace(/^expected:[\s\S]*$/m, '');
    const plain = sarif([path.join(dir, 'x.yaml')].map((f) => (writeFileSync(f, base), f)));
    const verdictRule = plain.runs[0]!.results.find((r) => r.ruleId?.startsWith('verdict/'))!.ruleId!;
    const own = plain.runs[0]!.results.filter((r) => r.ruleId !== verdictRule && r.ruleId?.startsWith('counters/') || r.ruleId?.startsWith('capacity/'));
    expect(own.length).toBeGreaterThan(0);
    const ids = [...new Set(plain.runs[0]!.results.map((r) => r.ruleId!).filter((id) => !id.startsWith('verdict/') && !id.startsWith('claims/')))];
    writeFileSync(path.join(dir, 'x.yaml'), `${base}accepted:\n${ids.map((id) => `  - { rule: ${id}, reason: fixture }`).join('\n')}\n`);
    const log = sarif([path.join(dir, 'x.yaml')]);
    expect(uploadProblems(log)).toEqual([]);
    const verdict = log.runs[0]!.results.find((r) => r.ruleId === verdictRule)!;
    expect(verdict.suppressions).toHaveLength(1);
  });

  it('write-up findings point at the lines of the write-up they rest on', () => {
    const log = sarif(['cases/writeups/bpftrace-vfs-read.md']);
    const located = log.runs[0]!.results.filter((r) => !r.ruleId!.startsWith('verdict/')).map((r) => r.locations![0]!.physicalLocation!);
    expect(located.length).toBeGreaterThan(0);
    expect(located.every((l) => l.artifactLocation!.uri === 'cases/writeups/bpftrace-vfs-read.md')).toBe(true);
    expect(located.some((l) => l.region!.startLine! > 1)).toBe(true);
  });
});
