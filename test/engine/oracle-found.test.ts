import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadCase, loadRules, parseCase, type Rules } from '../../src/index.js';

// Cases the oracle's undecided generated completions (test/oracle) showed the engine getting wrong.
const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
});

describe('found by the oracle', () => {
  it('a floor of lost records is not the total: an unread channel may cover the open calls (o1-lost-records-floor)', async () => {
    const v = await evaluateCase(await loadCase(path.join(root, 'cases/exact/o1-lost-records-floor.yaml')), rules);
    // The engine said insufficient-evidence alone: the known loss (1) below the open calls (2) read as all of it.
    expect(v.possible).toEqual(['observer-gap', 'insufficient-evidence']);
    expect(v.decides).toContain('ledger.lost_events');
    // With the trace's losses read, each answer is definite.
    const body = readFileSync(path.join(root, 'cases/exact/o1-lost-records-floor.yaml'), 'utf8').split('\n').filter((l) => !/^(format|id|expected|  verdict):?/.test(l)).join('\n');
    const text = (lost: number) => `format: kretprobe-case/v1\nid: t\n${body.replace('printk_dropped: 0,', `printk_dropped: 0, lost_events: ${lost},`)}`;
    const one = await evaluateCase(parseCase(text(1), 't.yaml'), rules);
    expect(one.possible).toEqual(['observer-gap']);
    const none = await evaluateCase(parseCase(text(0), 't.yaml'), rules);
    expect(none.possible).toEqual(['insufficient-evidence']);
  });

});
