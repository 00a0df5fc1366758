import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadCase, loadRules, parseCase, type Rules } from '../../src/index.js';

let rules: Rules;
const root = path.resolve(import.meta.dirname, '../..');
beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
});
const judge = (yaml: string) => evaluateCase(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml'), rules);

// What a triage session had saved from cases/lab/6.12/mod-reload.yaml when it stopped: no epoch
// label is stated, the module's rp->nmissed reads 1 at both ends, and one of three calls left
// no record. The full case says the counters straddle a reload (mod-reload-1, mod-reload-2) and
// is capacity-missed, so that completion must stay possible.
const RELOAD_PARTIAL = `probe: { target: krtfix_target, interface: module, registration: { result: ok }, armed: true, maxactive: { effective: 2 }, bpf_attach: unknown, entry_handler: { present: true, can_filter: false } }
concurrency: { recursion_depth: 1, observed_high_water: 2, observed_demand_high_water: unknown }
counters: { source: module-field, start: { nmissed: 1, kprobe_nmissed: 0 }, end: { nmissed: 1, kprobe_nmissed: 0 } }
ledger: { eligible: 3, entries: 2 }
`;

describe('the completion search answers exactly where it used to run out', () => {
  it('unstated epochs may differ: a level counter does not exclude pool misses across a reload', async () => {
    const v = await judge(RELOAD_PARTIAL);
    expect(v.exact).not.toBe(false);
    expect(v.verdict).toBe('insufficient-evidence');
    expect(v.possible).toEqual(expect.arrayContaining(['capacity-missed', 'observer-gap']));
    expect(v.decides.filter((f) => f.endsWith('.epoch')).length).toBeGreaterThan(0);
  });

  it('the same counters stated in one epoch exclude them', async () => {
    const v = await judge(RELOAD_PARTIAL.replace('start: { nmissed', 'start: { epoch: r, nmissed').replace('end: { nmissed', 'end: { epoch: r, nmissed').replace('result: ok }', 'result: ok, epoch: r }'));
    expect(v.possible).not.toContain('capacity-missed');
  });

  it.each(['cases/exact/c1-summed-rise-unsplit.yaml', 'cases/soundness/c02-entry-events-have-records.yaml'])('%s is searched to the end', async (file) => {
    const c = await loadCase(path.join(root, file));
    const v = await evaluateCase(c.data, rules);
    expect(v.verdict).toBe(c.data.expected?.verdict);
    expect(v.exact).not.toBe(false);
  });
});
