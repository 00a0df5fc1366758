import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRules } from '../../src/rules/load.js';
import { claimRuleFor } from '../../src/rules/claims.js';

// Which rule judges a claim is decided in one place (claimRuleFor), by the claim's kind and
// subject: a claim about another run (subject: other-run) is judged by that subject's rule only,
// and a rules directory may hold one rule per kind and subject.
const shipped = path.resolve(import.meta.dirname, '../../rules');
let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-claim-rules-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('claim rules by kind and subject', () => {
  it('picks the rule of the claim\'s subject, and none for a subject no rule judges', async () => {
    const set = await loadRules(shipped);
    expect(claimRuleFor(set, { kind: 'no-misses' })?.spec.id).toBe('claims/no-misses');
    expect(claimRuleFor(set, { kind: 'no-misses', subject: 'other-run' })?.spec.id).toBe('claims/no-misses-other-run');
    expect(claimRuleFor(set, { kind: 'deadlock', subject: 'other-run' })).toBeUndefined();
  });

  it.each([
    ['a second rule for the case\'s own run', 'claim: no-misses\n', /repeat-no-misses\.yaml:1:1: expected one claim rule per kind of claim \(.*no-misses\.yaml judges these too\); got claim: no-misses$/],
    ['a second rule for another run', 'claim: no-misses\nsubject: other-run\n', /repeat-no-misses\.yaml:1:1: expected one claim rule per kind of claim and subject \(.*no-misses-other-run\.yaml judges these too\); got claim: no-misses, subject: other-run$/],
  ])('refuses %s, naming the file and the rule it repeats', async (_, head, message) => {
    const dir = path.join(tmp, String(Math.random()).slice(2));
    await fs.cp(shipped, dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'claims', 'repeat-no-misses.yaml'), `id: claims/repeat-no-misses\ntitle: again\n${head}source: Read missed and filtered cases separately\njudge:\n  - { judgement: supported, when: { all: [ { fact: counters.delta_valid, operator: equal, value: true } ] }, because: x }\notherwise: { judgement: unsupported, because: y }\n`);
    await expect(loadRules(dir)).rejects.toThrow(message);
  });
});
