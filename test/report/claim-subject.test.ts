import { describe, expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';

// A claim about another run (case claim `subject: other-run`) says so wherever a claim is shown:
// the same words as a claim about the run under audit get another rule and another judgement, and
// a reader must see why.
const CASE = 'cases/claims/no-misses-other-run-counted.yaml';

describe('a claim about another run, in every report', () => {
  it('text: marked beside its kind', () => {
    const r = cli(['audit', CASE, '--no-color']);
    expect(r.stdout).toMatch(/supported\s+no-misses \(about another run\) "with maxactive raised/);
    expect(r.stdout).toMatch(/unsupported\s+no-misses "no misses"/);
  });
  it('markdown: marked beside its kind', () => {
    const r = cli(['audit', CASE, '--format', 'markdown']);
    expect(r.stdout).toContain('- Claim `no-misses` (about another run) ("with maxactive raised');
    expect(r.stdout).toContain('- Claim `no-misses` ("no misses")');
  });
  it('json: the subject beside the kind, only on the claim that has one', () => {
    const r = cli(['audit', CASE, '--format', 'json']);
    const v = JSON.parse(r.stdout) as { claims: Array<{ kind: string; subject?: string; rule: string }> } | { cases: Array<{ claims: Array<{ kind: string; subject?: string; rule: string }> }> };
    const claims = 'cases' in v ? v.cases[0]!.claims : v.claims;
    expect(claims.map((c) => [c.subject, c.rule])).toEqual([['other-run', 'claims/no-misses-other-run'], [undefined, 'claims/no-misses']]);
  });
  it('sarif (with passes): in the message and the properties', () => {
    const r = cli(['audit', CASE, '--format', 'sarif', '--sarif-passes']);
    const log = JSON.parse(r.stdout) as { runs: Array<{ results: Array<{ ruleId: string; message: { text: string }; properties?: Record<string, unknown> }> }> };
    const results = log.runs[0]!.results.filter((x) => x.ruleId.startsWith('claims/no-misses'));
    expect(results.map((x) => [x.ruleId, x.properties?.subject, /about another run/.test(x.message.text)])).toEqual([['claims/no-misses-other-run', 'other-run', true], ['claims/no-misses', undefined, false]]);
  });
});
