import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Ajv from 'ajv-draft-04';
import addFormats from 'ajv-formats';
import { parse as parseJunit, type TestSuites } from 'junit2json';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from '../cli/helpers.js';
import { parseWaiverComments } from '../../src/case/waivers.js';

// The official SARIF 2.1.0 schema, kept in the repo (test/fixtures/sarif/SOURCE.md names it).
const SCHEMA = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/sarif/sarif-schema-2.1.0.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(SCHEMA);

const R2 = 'cases/kernel-notes/r2-constrained.yaml';
function waived(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-sarif-'));
  const text = readFileSync(path.join(ROOT, R2), 'utf8').replace(/^expected:[\s\S]*$/m, '') + 'accepted:\n  - { rule: counters/nmissed-rose, reason: known pool limit }\n';
  writeFileSync(path.join(dir, 'w.yaml'), text);
  return path.join(dir, 'w.yaml');
}

interface SarifResult { ruleId: string; level: string; locations: Array<{ physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }>; suppressions?: Array<{ justification: string }> }
interface SarifLog { version: string; runs: Array<{ tool: { driver: { version: string; rules: Array<{ id: string; help: { text: string } }>; properties: Record<string, string> } }; results: SarifResult[]; invocations: Array<{ exitCode: number }> }> }

describe('--format sarif', () => {
  it('is valid SARIF 2.1.0 (official schema, ajv) for the whole reference set, one run', () => {
    const r = cli(['audit', 'cases/', '--format', 'sarif']);
    const log = JSON.parse(r.stdout) as SarifLog;
    const ok = validate(log);
    expect(ok ? [] : validate.errors?.slice(0, 5)).toEqual([]);
    expect(log.runs).toHaveLength(1);
    expect(log.runs[0]!.invocations[0]!.exitCode).toBe(r.code);
    const driver = log.runs[0]!.tool.driver;
    expect(driver.properties).toMatchObject({ tool_version: expect.any(String), rules_version: expect.stringMatching(/^sha256:/) });
    expect(driver.rules.find((x) => x.id === 'counters/nmissed-rose')?.help.text).toMatch(/docs\/article\.md#read-missed-and-filtered-cases-separately/);
  });

  it('puts results at the fact and claim lines, insufficient evidence as a note, waivers as suppressions', () => {
    const file = waived();
    const log = JSON.parse(cli(['audit', file, 'cases/table/writeup-no-counters.yaml', '--format', 'sarif']).stdout) as SarifLog;
    expect(validate(log)).toBe(true);
    const lines = readFileSync(file, 'utf8').split('\n');
    const results = log.runs[0]!.results;
    const nmissed = results.find((x) => x.ruleId === 'counters/nmissed-rose')!;
    expect(nmissed.level).toBe('error');
    expect(nmissed.suppressions?.[0]?.justification).toBe('known pool limit');
    expect(lines[nmissed.locations[0]!.physicalLocation.region.startLine - 1]).toMatch(/nmissed/);
    const claim = results.find((x) => x.ruleId === 'claims/function-stuck')!;
    expect(lines[claim.locations[0]!.physicalLocation.region.startLine - 1]).toMatch(/kind: function-stuck/);
    const inconclusive = results.find((x) => x.ruleId === 'verdict/insufficient-evidence');
    expect(inconclusive?.level).toBe('note');
  });
});

describe('--format junit', () => {
  it('parses with a JUnit consumer: one testsuite per file, a testcase per claim and per check, failures with reasons', async () => {
    const r = cli(['audit', R2, 'cases/table/writeup-no-counters.yaml', '--format', 'junit', '--fail-on', 'capacity-missed']);
    const parsed = (await parseJunit(r.stdout)) as TestSuites;
    expect(parsed.testsuite).toHaveLength(2);
    const suite = parsed.testsuite![0]!;
    expect(suite.name).toBe(R2);
    const names = suite.testcase!.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['claim 1: function-stuck "pipe_read never returned for the third reader"', 'check counters/nmissed-rose: capacity-missed', 'verdict: capacity-missed']));
    const claim = suite.testcase!.find((t) => t.name?.startsWith('claim 1'))!;
    expect(claim.failure?.[0]?.message).toBe('unsupported (claims/function-stuck)');
    expect(claim.failure?.[0]?.inner).toMatch(/\S/);
    expect(suite.failures).toBe(suite.testcase!.filter((t) => t.failure).length);
    expect(suite.properties?.map((p) => p.name)).toEqual(expect.arrayContaining(['tool_version', 'rules_version']));
  });
});

describe('waiver comments in a write-up', () => {
  it.each([
    ['one comment', 'text\n<!-- kretprobe-triage accept counters/nmissed-rose: pool was known to be small -->\n', [{ rule: 'counters/nmissed-rose', reason: 'pool was known to be small', at: { file: 'w.md', line: 2, col: 1 } }]],
    ['spread over lines, two of them', '<!--\n kretprobe-triage accept claims/deadlock:\n   the author withdrew it -->x<!-- kretprobe-triage accept scope/x-y: z -->', [
      { rule: 'claims/deadlock', reason: 'the author withdrew it', at: { file: 'w.md', line: 1, col: 1 } },
      { rule: 'scope/x-y', reason: 'z', at: { file: 'w.md', line: 3, col: 31 } },
    ]],
    ['other comments ignored', '<!-- a note --> <!-- kretprobe-triage: something else -->', []],
  ])('%s', (_, text, expected) => {
    expect(parseWaiverComments(text, 'w.md')).toEqual(expected);
  });

  it('a waiver comment without a reason is an error at its position', () => {
    expect(() => parseWaiverComments('\n\n  <!-- kretprobe-triage accept counters/nmissed-rose -->', 'w.md')).toThrow(/^w\.md:3:3: expected <!-- kretprobe-triage accept RULE\/ID: reason -->/);
  });
});
