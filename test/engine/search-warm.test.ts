import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules } from '../../src/index.js';
import { SEARCH_STATS } from '../../src/verdict/worlds.js';

const root = path.resolve(import.meta.dirname, '../..');

// The search keeps what it worked out per loaded rule set from case to case (each check and
// constraint compiled by place, the verdicts a pair of fired/open verdict bits leaves in reach):
// a case judged after every other shipped case must get what it gets from a rule set loaded for
// it alone, with nothing worked out yet.
describe('what the search keeps per rule set', () => {
  it('gives every shipped case that searches the answer a fresh rule set gives', async () => {
    const warm = await loadRules(path.join(root, 'rules'));
    const files = await expandCasePaths([path.join(root, 'cases')]);
    for (const file of files) await evaluateCase((await loadCase(file)).data, warm);
    let searched = 0;
    const differ: string[] = [];
    for (const file of files) {
      const c = (await loadCase(file)).data;
      const fresh = await loadRules(path.join(root, 'rules'));
      const s0 = SEARCH_STATS.cases;
      const cold = await evaluateCase(c, fresh);
      if (SEARCH_STATS.cases === s0) continue; // the fold was definite: no search to compare
      searched++;
      // The warm rule set searched this case after the cases before it had filled what it keeps
      // (and remembers that answer by the evidence, whatever the id).
      const again = await evaluateCase({ ...c, id: `${c.id}-again` }, warm);
      if (JSON.stringify({ ...again, id: c.id }) !== JSON.stringify(cold)) differ.push(file);
    }
    expect(differ).toEqual([]);
    expect(searched).toBeGreaterThan(20);
  }, 300_000);
});
