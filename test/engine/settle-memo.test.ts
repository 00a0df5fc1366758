import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateCase, loadCase, loadRules } from '../../src/index.js';
import { SEARCH_STATS } from '../../src/verdict/worlds.js';

const root = path.resolve(import.meta.dirname, '../..');

// The completion search's answer is remembered per loaded rule set by the evidence searched: the
// same evidence under another id is answered without a search, with the same answer; other
// evidence, or another loaded rule set, searches again.
describe('the search answers the same evidence once', () => {
  it('remembers by evidence, never by id, and per loaded rule set', async () => {
    const c = (await loadCase(path.join(root, 'cases/lab/6.12/bt-fexit.yaml'))).data;
    const rules = await loadRules(path.join(root, 'rules'));
    const s0 = { ...SEARCH_STATS };
    const first = await evaluateCase(c, rules);
    expect(SEARCH_STATS.cases - s0.cases).toBeGreaterThan(0); // the fold is not definite here: it searched
    const s1 = { ...SEARCH_STATS };
    const again = await evaluateCase({ ...c, id: 'same-evidence-other-id' }, rules);
    expect(SEARCH_STATS.cases - s1.cases).toBe(0);
    expect(SEARCH_STATS.remembered - s1.remembered).toBeGreaterThan(0);
    expect({ ...again, id: c.id }).toEqual(first);
    // A caller changing its answer does not change the remembered one.
    again.possible.length = 0;
    again.decides.length = 0;
    expect((await evaluateCase(c, rules)).possible).toEqual(first.possible);

    const s2 = { ...SEARCH_STATS };
    await evaluateCase({ ...c, ledger: { ...c.ledger, returns: (c.ledger?.returns ?? 0) + 1 } }, rules);
    expect(SEARCH_STATS.cases - s2.cases).toBeGreaterThan(0);

    const s3 = { ...SEARCH_STATS };
    await evaluateCase(c, await loadRules(path.join(root, 'rules')));
    expect(SEARCH_STATS.cases - s3.cases).toBeGreaterThan(0);
  }, 60_000);
});
