import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, ROOT } from './helpers.js';

const c = (p: string) => path.join(ROOT, 'cases', p);

describe('audit exit codes (README, --help)', () => {
  it.each([
    ['nothing flagged', ['kernel-notes/r8-adequate.yaml'], [], 0],
    ['a claim unsupported', ['kernel-notes/r2-constrained.yaml'], [], 1],
    ['a claim overreaching', ['capacity/cpu-count-sized-sleeper.yaml'], [], 1],
    ['inconclusive and nothing worse', ['counters/same-label-counter-down.yaml'], [], 3],
    ['a verdict at --fail-on', ['table/filtered-kernel-threads.yaml'], ['--fail-on', 'filtered-by-design'], 1],
    ['a verdict below --fail-on', ['table/filtered-kernel-threads.yaml'], ['--fail-on', 'capacity-missed'], 0],
    ['flagged beats inconclusive across cases', ['counters/same-label-counter-down.yaml', 'kernel-notes/r2-constrained.yaml'], [], 1],
    ['reference mode over every shipped case', ['.'], ['--expect'], 0],
  ])('%s → %i', (_, files, flags, code) => {
    expect(cli(['audit', ...flags, ...files.map(c)]).code).toBe(code);
  });
});

describe('audit output', () => {
  it('JSON: one verdict object per line, in the shape of case-format.md', () => {
    const r = cli(['audit', '--format', 'json', c('kernel-notes/r2-constrained.yaml'), c('kernel-notes/r8-adequate.yaml')]);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.id, l.verdict])).toEqual([['r2-constrained', 'capacity-missed'], ['r8-adequate', 'fully-observed']]);
    const first = lines[0];
    expect(Object.keys(first)).toEqual(expect.arrayContaining(['id', 'verdict', 'findings', 'accounting', 'claims', 'missing']));
    expect(first.findings[0]).toMatchObject({ rule: 'counters/nmissed-rose', verdict: 'capacity-missed', source: 'Read missed and filtered cases separately', facts: { 'counters.pool_missed': true } });
    expect(first.accounting).toEqual({ eligible: 3, returned: 2, filtered: 0, in_flight_at_stop: 0, capacity_missed: 1, not_covered: 0, unexplained: 0, balanced: true });
    expect(first.claims).toEqual([expect.objectContaining({ kind: 'function-stuck', judgement: 'unsupported', rule: 'claims/function-stuck' })]);
  });

  it('text: verdict, ranked findings with rule and source, accounting, claims, next', () => {
    const r = cli(['audit', c('kernel-notes/r2-constrained.yaml')]);
    const text = r.stdout;
    expect(text).toMatch(/^ {2}verdict +capacity-missed/m);
    expect(text.indexOf('counters/nmissed-rose')).toBeLessThan(text.indexOf('counters/entry-probe-saw-more'));
    expect(text).toMatch(/\[Read missed and filtered cases separately\]/);
    expect(text).toMatch(/eligible 3 = returned 2 \+ filtered 0 \+ in flight 0 \+ capacity missed 1 \+ not covered 0 \+\s+unexplained 0 \[balanced\]/);
    expect(text).toMatch(/unsupported +function-stuck/);
    expect(text).toMatch(/^ {2}next$/m);
  });

  it('markdown: a summary table row per case', () => {
    const r = cli(['audit', '--format', 'markdown', c('kernel-notes/r2-constrained.yaml')]);
    expect(r.stdout).toMatch(/^\| r2-constrained \| `capacity-missed` \| function-stuck: unsupported \|/m);
  });

  it.each([
    ['FORCE_COLOR on a pipe', { FORCE_COLOR: '1' }, [], true],
    ['NO_COLOR wins over FORCE_COLOR', { FORCE_COLOR: '1', NO_COLOR: '1' }, [], false],
    ['--no-color wins over FORCE_COLOR', { FORCE_COLOR: '1' }, ['--no-color'], false],
    ['a pipe without FORCE_COLOR', {}, [], false],
  ])('colour: %s', (_, env, flags, coloured) => {
    const r = cli([...flags, 'audit', c('kernel-notes/r2-constrained.yaml')], { env });
    expect(/\x1b\[/.test(r.stdout)).toBe(coloured);
  });

  it('missing lists the unknown facts that would change the verdict', () => {
    const r = cli(['audit', '--format', 'json', c('table/writeup-no-counters.yaml')]);
    const v = JSON.parse(r.stdout);
    expect(v.verdict).toBe('insufficient-evidence');
    // Each field one of whose values leaves a possible verdict out (the counters' values only
    // matter once their source is known, so the source is what is listed).
    expect(v.missing).toEqual(expect.arrayContaining(['counters.source', 'probe.armed', 'ledger.eligible']));
  });

  it('--help documents the exit codes', () => {
    const r = cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/3 +inconclusive/);
  });
});

describe('audit text: what to collect', () => {
  it('prints each missing fact with the command that collects it, filled in for the target (all of them with --verbose)', () => {
    // A module case is sent to the module's own counters.
    const t = cli(['audit', '--verbose', c('soundness/c01-higher-verdict-open.yaml')]);
    expect(t.stdout).toMatch(/^ {4}counters\.start\.kprobe_nmissed {2}<- # a module: rp\.kp\.nmissed/m);
    // Every line of a multi-line recipe, not just the first.
    const r = cli(['audit', '--verbose', c('soundness/c09-vendor-kernel.yaml')]);
    expect(r.stdout).toMatch(/^ {4}concurrency\.observed_high_water {2}<- # from the entry\/return records/m);
    expect(r.stdout).toMatch(/^ {8}kretprobe-triage ledger --trace trace\.txt --ops ops\.jsonl$/m);
  });

  it('gives a bpftrace case the commands its probes have, never kprobe_profile or tracefs event ids', () => {
    const r = cli(['audit', '--verbose', c('table/writeup-no-counters.yaml')]);
    expect(r.stdout).toMatch(/^ {4}probe\.armed {2}<- bpftool link show/m);
    const hints = r.stdout.slice(r.stdout.indexOf('  missing'), r.stdout.indexOf('  next'));
    // Every hint (--verbose): none reads kprobe_profile or a tracefs event (a hint may say there is none).
    expect(hints).not.toMatch(/(?:cat|grep|head|tail|less)\s[^#\n]*kprobe_profile|events\/kprobes/);
    // The profile line's event is asked for only where it splits the answer, and then never as a tracefs id.
    expect(hints).not.toMatch(/counters\.event {2}<- (?!none possible)/);
    expect(hints).toMatch(/^ {4}ledger\.entry_events {2}<- /m);
    for (const format of ['json', 'markdown']) {
      const out = cli(['audit', c('table/writeup-no-counters.yaml'), '--format', format]).stdout;
      expect([format, out.includes('a single kretprobe: none; bpftrace attaches it with perf_event_open and no BPF link')]).toEqual([format, true]);
    }
  });
});
