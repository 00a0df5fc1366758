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
