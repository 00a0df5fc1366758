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

  it('an unstated BPF attach is not a perf kretprobe: a trampoline completion has no pool (o2-bpf-attach-unstated)', async () => {
    const file = path.join(root, 'cases/exact/o2-bpf-attach-unstated.yaml');
    const text = readFileSync(file, 'utf8');
    const as = async (attach: string) => evaluateCase(parseCase(text.replace(/^  armed: true$/m, `  armed: true\n  bpf_attach: ${attach}`), 'o2.yaml'), rules);
    const [perf, fexit, multi, unstated] = [await as('perf-kretprobe'), await as('fexit'), await as('kprobe-multi'), await evaluateCase(await loadCase(file), rules)];
    // A perf kretprobe's default pool (10) is two short of the twelve held callers: nothing is left
    // in flight. A trampoline has no pool: no call is a capacity miss.
    expect(perf.possible).toContain('capacity-missed');
    expect(perf.possible).not.toContain('still-in-flight');
    expect(fexit.possible).not.toContain('capacity-missed');
    // The engine read the unstated attach as a perf kretprobe and so excluded what the pool could
    // not explain; every answer of either completion stays possible, and the attach decides.
    for (const v of [...perf.possible, ...fexit.possible, ...multi.possible].filter((x) => x !== 'insufficient-evidence')) expect(unstated.possible).toContain(v);
    // No attach leaves a call in flight here (twelve held and drained): the search rules it out
    // for the unstated attach too, even when its budget runs out before the rest is settled.
    for (const c of [perf, fexit, multi, unstated]) expect(c.possible).not.toContain('still-in-flight');
    expect(unstated.decides).toContain('probe.bpf_attach');
  });

  it('a floor still rests on the fields behind it: the unstated gate decides (o3-floor-hides-gate)', async () => {
    const file = path.join(root, 'cases/exact/o3-floor-hides-gate.yaml');
    const text = readFileSync(file, 'utf8');
    const gated = async (g: boolean) => evaluateCase(parseCase(text.replace('fixture: { overlap_verified: true }', `fixture: { overlap_verified: true, gated: ${g} }`), 'o3.yaml'), rules);
    const [held, free, open] = [await gated(true), await gated(false), await evaluateCase(await loadCase(file), rules)];
    // Five calls held at once against a pool of four: one pool miss, whatever else is unknown.
    expect(held.possible).toEqual(['capacity-missed']);
    expect(free.possible.length).toBeGreaterThan(1);
    // The engine's decides was empty of the gate: the demand peak (a floor, known as 4) hid it.
    expect(open.possible).toEqual(free.possible);
    // (It decides outright; where the ranking's budget runs out first it is listed from the fold,
    // unranked, and decidesExact says so.)
    expect(open.decides).toContain('fixture.gated');
    if (open.decidesExact) expect(open.decides[0]).toBe('fixture.gated');
    // A module's probe is no BPF program: how one would sit on the return decides nothing.
    expect(open.decides).not.toContain('probe.bpf_attach');
  });

});
