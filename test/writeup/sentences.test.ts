import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

const root = path.resolve(import.meta.dirname, '../..');
let lex: Lexicon;
beforeAll(async () => {
  lex = await loadLexicon(path.join(root, 'rules'));
});
const read = (text: string) => extractWriteup(`${text}\n`, 'w.md', lex);

describe('claims and what is not a claim', () => {
  it.each([
    ['a plain conclusion', 'nfsd_dispatch hangs under load.', 'function-stuck', undefined],
    ['never returned', 'The third call never returned.', 'function-stuck', undefined],
    ['a deadlock conclusion', 'The queue lock deadlocks against the reset worker.', 'deadlock', undefined],
    ['no misses', 'No events were missed.', 'no-misses', undefined],
    ['no missed probes, as said plainly', 'There were no missed probes during the run.', 'no-misses', undefined],
    ['every return captured', 'Every return was captured by the tracer.', 'no-misses', undefined],
    ['no missed probes, negated', 'We cannot say there were no missed probes.', 'no-misses', 'negated'],
    ['raised maxactive fixed it', 'Raising maxactive to 64 fixed the driver.', 'maxactive-fixed-driver', undefined],
    ['a percentile', 'p99 is 180 us for reads.', 'latency-representative', undefined],
    ['a question', 'Is nfsd_dispatch stuck?', 'function-stuck', 'question'],
    ['a question without a mark', 'Could it be a deadlock', 'deadlock', 'question'],
    ['a negation', 'This is not a deadlock.', 'deadlock', 'negated'],
    ['a negation of stuck', 'nfsd_dispatch is not stuck.', 'function-stuck', 'negated'],
    ['a retraction', 'A deadlock was ruled out by the lock stats.', 'deadlock', 'negated'],
    ['someone else\'s hypothesis', 'Bob suggested that nfsd_dispatch deadlocks.', 'deadlock', 'attributed'],
    ['a quotation', 'The ticket was titled "nfsd_dispatch never returns" by the reporter.', 'function-stuck', 'quoted'],
    ['a hedge', 'It could be that nfsd_dispatch hangs.', 'function-stuck', 'hedged'],
    ['another hedge', 'Maybe no events were missed.', 'no-misses', 'hedged'],
  ])('%s', (_, sentence, kind, reason) => {
    const x = read(sentence);
    if (reason === undefined) {
      expect(x.claims.map((c) => c.kind)).toContain(kind);
      expect(x.claims.find((c) => c.kind === kind)!.line).toBe(1);
    } else {
      expect(x.claims.map((c) => c.kind)).not.toContain(kind);
      expect(x.notClaims.map((n) => [n.kind, n.reason])).toContainEqual([kind, reason]);
    }
  });

  it('reads no claims from block quotes or tables', () => {
    const x = read('> nfsd_dispatch hangs.\n\n| a | b |\n|---|---|\n| it deadlocks | x |');
    expect(x.claims).toEqual([]);
  });
});

describe('sentence facts', () => {
  it.each([
    ['nmissed was 99 with maxactive 2.', [['counters.end.nmissed', 99], ['probe.maxactive.requested', 2]]],
    ['We saw 410 entries but only 91 returns.', [['ledger.entries', 410], ['ledger.returns', 91]]],
    ['The box has 8 possible CPUs and 16 worker threads.', [['kernel.possible_cpus', 8], ['concurrency.workers', 16]]],
    ['cpu/possible reads 0-3,8-11.', [['kernel.possible_cpus', 8]]],
    ['On kernel 6.12.95+deb12-amd64 we used bpftrace.', [['kernel.release', '6.12.95+deb12-amd64'], ['probe.interface', 'bpftrace']]],
    ['p99 is 180 us.', [['latency.p99_ns', 180000], ['latency.reported', true], ['latency.from', 'admitted']]],
    ['nmissed went from 0 to 28.', [['counters.start.nmissed', 0], ['counters.end.nmissed', 28]]],
  ])('%s', (sentence, want) => {
    const got = read(sentence).facts.map((f) => [f.path, f.value]);
    for (const w of want) expect(got).toContainEqual(w);
    expect(got.length).toBe(want.length);
  });

  // Issue templates leave HTML comments in the post ("- Kernel version: <!-- e.g. 6.15.6 -->", as
  // ValveSoftware/Proton's bug template has it): an example in one is not the author's kernel.
  it('takes no facts from an HTML comment, and keeps the columns of the text after it', () => {
    expect(read('- Kernel version: <!-- e.g. kernel 5.15.0-91-generic -->').facts).toEqual([]);
    const f = read('<!-- e.g. kernel 5.15.0-91-generic --> We run kernel 6.1.0-9-amd64.').facts;
    expect(f.map((x) => [x.path, x.value, x.col])).toEqual([['kernel.release', '6.1.0-9-amd64', 54]]);
    expect(read('<!-- a hint\n\nkernel 5.15.0-91-generic -->\n\nHello.').facts).toEqual([]);
  });

  it('takes no facts from a question or a hedged clause', () => {
    expect(read('Was nmissed 99?').facts).toEqual([]);
    expect(read('Maybe nmissed was 99.').facts).toEqual([]);
  });

  it('gives each fact its column', () => {
    const f = read('Then nmissed was 99.').facts[0]!;
    expect([f.line, f.col, f.value]).toEqual([1, 18, 99]);
  });

  it('finds the needed words of a later sentence when lower-casing an earlier one changes its length', () => {
    // "İ" lower-cases to two code units: the sentences after it must still be found.
    const x = read('İzmir hosts ran the test. Then nmissed was 99. The third call never returned.');
    expect(x.facts.map((f) => [f.path, f.value, f.col])).toEqual([['counters.end.nmissed', 99, 44]]);
    expect(x.claims.map((c) => [c.kind, c.col])).toEqual([['function-stuck', 63]]);
  });
});

// issue 21 class 7: a later correction decides what the thread states, in post order.
describe('later corrections', () => {
  const at = (x: ReturnType<typeof read>, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), x.case);
  const thread = '# t\n\n## alice · description\n\nThe module set maxactive to 8 and nmissed was 12.\n\n## bob · comment\n\nWhat is the maxactive?\n\n## alice · comment\n\n';
  it('a correction replaces the earlier value, without a disagreement', () => {
    const x = read(`${thread}Correction: maxactive was 20, not 8.\n\nSorry, it was nmissed 14; I misread the log.`);
    expect([at(x, 'probe.maxactive.requested'), at(x, 'counters.end.nmissed')]).toEqual([20, 14]);
    expect(x.conflicts).toEqual([]);
    expect(x.facts.filter((f) => f.path === 'probe.maxactive.requested').map((f) => f.value)).toEqual([20]);
  });
  it('a later value that is not a correction still disagrees', () => {
    const x = read(`${thread}maxactive was 20 on the second box.`);
    expect(x.conflicts.map((c) => c.path)).toEqual(['probe.maxactive.requested']);
  });
  it('an update that reports a new run corrects nothing', () => {
    const x = read(`${thread}Update: after the fix nmissed was 0.`);
    expect(x.conflicts.map((c) => c.path)).toEqual(['counters.end.nmissed']);
  });
  it('a correction replaces only what came before it', () => {
    const x = read(`${thread}Correction: maxactive was 20.\n\nLater we saw maxactive 30 on another run.`);
    expect(x.conflicts.map((c) => [c.path, c.chosen.value])).toEqual([['probe.maxactive.requested', 20]]);
  });
});
