import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lexiconSnapshot, loadRulesSnapshot, makeSnapshot } from '../../src/audit/rules-snapshot.js';
import { buildLexicon, readLexiconData, type LexiconData } from '../../src/writeup/lexicon.js';
import { loadRules } from '../../src/rules/load.js';
import { loadQuestions } from '../../src/triage/questions.js';

const RULES = path.resolve(import.meta.dirname, '../../rules');
const specs = (s: Awaited<ReturnType<typeof loadRules>>) => ({ rules: s.rules.map((r) => [r.file, r.spec]), claims: s.claims.map((r) => [r.file, r.spec]) });

describe('rules snapshot (start-up of a one-case audit)', () => {
  it('gives the same rules as parsing them', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-snap-'));
    const file = path.join(dir, 'snap.json');
    writeFileSync(file, await makeSnapshot(RULES));
    // A marker proves the snapshot was used, not a silent fall-back to parsing.
    const snap = JSON.parse(readFileSync(file, 'utf8')) as { rules: Array<{ spec: { title: string } }> };
    snap.rules[0]!.spec.title = 'FROM SNAPSHOT';
    writeFileSync(file, JSON.stringify(snap));
    const fromSnap = await loadRulesSnapshot(RULES, file);
    expect(fromSnap.rules[0]!.spec.title).toBe('FROM SNAPSHOT');
    fromSnap.rules[0]!.spec.title = (await loadRules(RULES)).rules[0]!.spec.title;
    expect(specs(fromSnap)).toEqual(specs(await loadRules(RULES)));
    // The questions too (an audit's collection hints), as loadQuestions reads them.
    expect(fromSnap.questions).toEqual((await loadQuestions(path.join(RULES, 'questions'))).list);
  });

  it('carries no questions when they do not load; once it no longer applies, the rules parsed again carry those that do', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-snap-'));
    const rules = path.join(dir, 'rules');
    cpSync(RULES, rules, { recursive: true });
    const target = path.join(rules, 'questions/scope.yaml');
    writeFileSync(target, `${readFileSync(target, 'utf8')}\nnot: [valid\n`);
    const file = path.join(dir, 'snap.json');
    writeFileSync(file, await makeSnapshot(rules));
    expect((await loadRulesSnapshot(rules, file)).questions).toBeNull();
    writeFileSync(target, readFileSync(path.join(RULES, 'questions/scope.yaml')));
    expect((await loadRulesSnapshot(rules, file)).questions).toEqual((await loadQuestions(path.join(rules, 'questions'))).list);
  });

  it('is not used once a rule file changes: the rules are parsed again', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-snap-'));
    const rules = path.join(dir, 'rules');
    cpSync(RULES, rules, { recursive: true });
    const file = path.join(dir, 'snap.json');
    writeFileSync(file, await makeSnapshot(rules));
    const target = path.join(rules, 'counters/nmissed-rose.yaml');
    writeFileSync(target, readFileSync(target, 'utf8').replace(/^title: .*$/m, 'title: edited after the snapshot'));
    const got = await loadRulesSnapshot(rules, file);
    expect(got.rules.find((r) => r.spec.id === 'counters/nmissed-rose')?.spec.title).toBe('edited after the snapshot');
  });
  it('carries the write-up lexicon as parsing reads it, and only while the lexicon files are unchanged', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-snap-'));
    const rules = path.join(dir, 'rules');
    cpSync(RULES, rules, { recursive: true });
    const file = path.join(dir, 'snap.json');
    writeFileSync(file, await makeSnapshot(rules));
    const parsed = await readLexiconData(rules);
    const data = (await lexiconSnapshot(rules, file)) as LexiconData;
    expect(data).toEqual(parsed);
    // Compiled alike: every pattern with its source and flags.
    const shape = (x: unknown) => JSON.parse(JSON.stringify(x, (_k, v: unknown) => (v instanceof RegExp ? `/${v.source}/${v.flags}` : v)));
    expect(shape(buildLexicon(data))).toEqual(shape(buildLexicon(parsed)));
    // An edited pattern file: the snapshot no longer applies to it.
    const target = path.join(rules, 'lexicon/claims.yaml');
    writeFileSync(target, `${readFileSync(target, 'utf8')}\n# edited after the snapshot\n`);
    expect(await lexiconSnapshot(rules, file)).toBeUndefined();
  });

  it('carries no lexicon when it does not load (a write-up audit then parses it and says what is wrong)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-snap-'));
    const rules = path.join(dir, 'rules');
    cpSync(RULES, rules, { recursive: true });
    writeFileSync(path.join(rules, 'lexicon/facts.yaml'), 'facts: [\n');
    const file = path.join(dir, 'snap.json');
    writeFileSync(file, await makeSnapshot(rules));
    expect(await lexiconSnapshot(rules, file)).toBeUndefined();
    await expect(readLexiconData(rules)).rejects.toThrow(/facts\.yaml:\d+:\d+: expected/);
  });
});
