import { describe, expect, it } from 'vitest';
import { durationTick, histogramSvg, inFlightSvg } from '../../src/report/investigation/svg.js';

// The pictures' axes as markup: tick labels by axis, in document order.
const ticks = (svg: string, axis: 'x' | 'y') => [...svg.matchAll(new RegExp(`<text data-tick="${axis}"[^>]*>([^<]*)</text>`, 'g'))].map((m) => m[1]);
const series = (peak: number, spanNs: number) => ({
  originNs: 1_000,
  widthNs: spanNs / 4,
  buckets: [0, 1, 2, 3].map((i) => ({ startNs: 1_000 + (i * spanNs) / 4, min: 0, max: i === 2 ? peak : 1, last: 1, n: 3 })),
  peak,
  peakAtNs: 1_000 + spanNs / 2,
  samples: 12,
});
const picture = (peak: number, spanNs: number, stopNs?: number) =>
  inFlightSvg({ series: series(peak, spanNs), counted: 'accepted instances outstanding', peak: { k: 'ledger:/high_water/value', v: peak }, maxactive: { k: 'ledger:/effective_maxactive/value', v: 2 }, stopNs, misses: [], missDelta: undefined, bucket: { k: 'observed:/series/widthNs', v: spanNs / 4, unit: 'ns' } });

describe('the pictures\' axes', () => {
  it.each([
    ['nanoseconds', 5, '5 ns'],
    ['a round microsecond', 1_000, '1 µs'],
    ['milliseconds to three digits', 12_345_678, '12.3 ms'],
    ['seconds without trailing zeros', 2_000_000_000, '2 s'],
  ])('a duration tick in %s', (_, ns, text) => {
    expect(durationTick(ns)).toBe(text);
  });

  it('a peak of 1 still gets a count axis of at least four integer ticks', () => {
    expect(ticks(picture(1, 3e9), 'y')).toEqual(['0', '1', '2', '3', '4']);
  });

  it('time ticks share one unit and one number of decimals, the origin included', () => {
    expect(ticks(picture(3, 2.2e9, 1_000 + 2.2e9), 'x')).toEqual(['0.0 s', '0.5 s', '1.0 s', '1.5 s', '2.0 s', '2.5 s']);
  });

  it('a capture of a few nanoseconds at an uptime of centuries (past 2^53 ns) still has a time axis of whole nanoseconds', () => {
    const svg = inFlightSvg({ series: { originNs: 1.8e19, widthNs: 1, buckets: [{ startNs: 1.8e19, min: 0, max: 1, last: 1, n: 2 }], peak: 1, peakAtNs: 1.8e19, samples: 2 }, counted: 'accepted instances outstanding', peak: { k: 'ledger:/high_water/value', v: 1 }, maxactive: undefined, stopNs: undefined, misses: [], missDelta: undefined, bucket: { k: 'observed:/series/widthNs', v: 1, unit: 'ns' } });
    expect(ticks(svg, 'x')).toEqual(['0 ns', '1 ns', '2 ns', '3 ns', '4 ns', '5 ns']);
  });

  it('counts of five digits read in SI form, zero as 0', () => {
    const svg = histogramSvg({ bins: [{ loNs: 1e4, hiNs: 2e4, count: 30_238 }, { loNs: 2e4, hiNs: 4e4, count: 100 }], marks: [], coverage: [], from: 'all admitted pairs' });
    expect(ticks(svg, 'y')).toEqual(['0', '5k', '10k', '15k', '20k', '25k', '30k', '35k']);
  });

  it('a histogram of one bin has at least four count ticks and four time ticks', () => {
    const svg = histogramSvg({ bins: [{ loNs: 2e9, hiNs: 2.2e9, count: 2 }], marks: [], coverage: [], from: 'all admitted pairs' });
    expect(ticks(svg, 'y')).toEqual(['0', '1', '2', '3', '4']);
    expect(ticks(svg, 'x').length).toBeGreaterThanOrEqual(4);
  });

  it('percentiles without a distribution: a time axis and no count axis', () => {
    const svg = histogramSvg({ bins: [], marks: [{ label: 'p50', ref: { k: 'case:/latency/p50_ns', v: 2e6, unit: 'ns' } }], coverage: [], from: 'the case (latency.from)' });
    expect(ticks(svg, 'y')).toEqual([]);
    expect(ticks(svg, 'x').length).toBeGreaterThanOrEqual(4);
    expect(svg).not.toContain('class="bins"');
  });

  it('equal percentiles stack in separate rows above the plot, p50 on top', () => {
    const ref = (p: string) => ({ k: `ledger:/durations/${p}_ns`, v: 2_138_000_000, unit: 'ns' as const });
    const svg = histogramSvg({ bins: [{ loNs: 2e9, hiNs: 2.2e9, count: 2 }], marks: ['p50', 'p90', 'p99'].map((l) => ({ label: l, ref: ref(l) })), coverage: [], from: 'all admitted pairs' });
    const rows = [...svg.matchAll(/<text x="[\d.]+" y="([\d.]+)">(p\d\d) /g)].map((m) => [m[2], Number(m[1])] as const);
    expect(rows.map(([l]) => l)).toEqual(['p50', 'p90', 'p99']);
    const ys = rows.map(([, y]) => y);
    expect(new Set(ys).size).toBe(3);
    expect(ys[0]! < ys[1]! && ys[1]! < ys[2]!).toBe(true);
  });
});
