import { describe, expect, it } from 'vitest';
import { identityBarSvg } from '../../src/report/investigation/svg.js';

const TERMS = ['returned', 'filtered', 'in_flight_at_stop', 'capacity_missed', 'not_covered', 'unexplained'];
const bar = (eligible: number | null, values: Array<number | null>) =>
  identityBarSvg({ k: 'verdict:/accounting/eligible', v: eligible }, TERMS.map((name, i) => ({ name, ref: { k: `verdict:/accounting/${name}`, v: values[i] } })), { k: 'verdict:/accounting/balanced', v: null });
const hatched = (svg: string) => [...svg.matchAll(/<rect [^>]*data-term="unknown"[^>]* width="([\d.]+)"[^>]*fill="url\(#unknown-hatch\)"/g)].map((m) => Number(m[1]));

describe('the identity bar', () => {
  it('eligible unknown and terms unknown: a visible hatched share, not a bar of the known terms alone', () => {
    const widths = hatched(bar(null, [91, null, null, null, null, null]));
    expect(widths).toHaveLength(1);
    expect(widths[0]).toBeGreaterThan(100);
  });

  it('every term known: nothing hatched', () => {
    expect(hatched(bar(3, [2, 0, 0, 1, 0, 0]))).toEqual([]);
  });

  it('the equation is split over two lines, each within the picture', () => {
    const svg = bar(null, [91, null, null, null, null, null]);
    const titles = [...svg.matchAll(/<text [^>]*font-weight="bold">(.*?)<\/text>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));
    expect(titles).toHaveLength(2);
    // 800 px wide at about 7.5 px a character in the bold sans-serif: at most ~100 characters a line.
    for (const t of titles) expect(t.length).toBeLessThan(100);
  });
});

describe('the identity bar when the known terms exceed eligible', () => {
  it('marks where eligible ends and says so', () => {
    const svg = bar(100, [80, 10, 0, 20, null, 0]);
    const line = /<line class="eligible-end" x1="([\d.]+)"/.exec(svg);
    expect(line).not.toBeNull();
    // 100 of the 110 known, over the bar less its 24 px hatched share: (760 - 24) * 100 / 110 + 20.
    expect(Number(line![1])).toBeCloseTo(689.1, 0);
    expect(svg).toContain('exceed eligible');
  });

  it('a bar within eligible has no such line', () => {
    expect(bar(100, [80, 10, 0, 10, 0, 0])).not.toContain('eligible-end');
  });
});
