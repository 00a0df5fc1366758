import type { Page } from 'playwright-core';

/**
 * The pictures' layout as Chromium lays it out, measured on the page: every `<text>` box of each
 * figure's SVG (getBoundingClientRect, so rotated axis titles count as drawn). One violation is
 * one string naming the figure, the check and the texts; a clean page gives [].
 *
 * - overlap: two text boxes intersect (by more than half a pixel each way);
 * - on-marker: a text box intersects a marker (capture stop, miss, peak, maxactive, percentile,
 *   histogram bins);
 * - clipped: a text box is not wholly inside its SVG;
 * - ticks: an axis with fewer than four ticks (an axis the figure must have counts as zero);
 * - broken-word: a word split between two text nodes of one `<text>` ("unknow" + "n"), or
 *   between two `<text>` elements that touch on one line.
 */
export interface LayoutRules {
  /** Axes each figure must draw, by figure name (`fig-<name>`). */
  axes: Record<string, Array<'x' | 'y'>>;
}

export const MARKERS = '.bins, .bin, .mark, .capture-stop, .miss, .peak, .maxactive, .eligible-end';

export async function layoutViolations(page: Page, rules: LayoutRules): Promise<string[]> {
  return page.evaluate(
    ({ axes, markers }) => {
      const out: string[] = [];
      const EPS = 0.5;
      type Box = { l: number; t: number; r: number; b: number };
      const box = (e: Element): Box => {
        const r = e.getBoundingClientRect();
        return { l: r.left, t: r.top, r: r.right, b: r.bottom };
      };
      const meet = (a: Box, b: Box) => Math.min(a.r, b.r) - Math.max(a.l, b.l) > EPS && Math.min(a.b, b.b) - Math.max(a.t, b.t) > EPS;
      const name = (e: Element) => JSON.stringify((e.textContent ?? '').trim().slice(0, 40));
      const word = /[\p{L}\p{N}]/u;
      for (const fig of Array.from(document.querySelectorAll('figure'))) {
        const svg = fig.querySelector('svg');
        if (svg === null) continue;
        const id = fig.id.replace(/^fig-/, '');
        const frame = box(svg);
        const texts = Array.from(svg.querySelectorAll('text')).filter((t) => (t.textContent ?? '').trim() !== '');
        const boxes = texts.map(box);
        for (let i = 0; i < texts.length; i++) {
          const a = boxes[i]!;
          if (a.l < frame.l - EPS || a.t < frame.t - EPS || a.r > frame.r + EPS || a.b > frame.b + EPS) out.push(`${id}: clipped ${name(texts[i]!)}`);
          for (let j = i + 1; j < texts.length; j++) if (meet(a, boxes[j]!)) out.push(`${id}: overlap ${name(texts[i]!)} / ${name(texts[j]!)}`);
        }
        for (const m of Array.from(svg.querySelectorAll(markers))) {
          const mb = box(m);
          texts.forEach((t, i) => {
            if (meet(boxes[i]!, mb)) out.push(`${id}: on-marker ${name(t)} on .${m.getAttribute('class')}`);
          });
        }
        for (const axis of ['x', 'y'] as const) {
          const n = svg.querySelectorAll(`[data-tick="${axis}"]`).length;
          const required = (axes[id] ?? []).includes(axis);
          if ((required || n > 0) && n < 4) out.push(`${id}: ticks ${axis} ${n}`);
        }
        texts.forEach((t) => {
          const nodes: Text[] = [];
          const w = document.createTreeWalker(t, NodeFilter.SHOW_TEXT);
          for (let n = w.nextNode(); n !== null; n = w.nextNode()) if ((n.textContent ?? '') !== '') nodes.push(n as Text);
          for (let k = 1; k < nodes.length; k++) {
            const before = nodes[k - 1]!.textContent!;
            const after = nodes[k]!.textContent!;
            if (word.test(before.slice(-1)) && word.test(after.charAt(0))) out.push(`${id}: broken-word ${JSON.stringify(before.slice(-12) + '|' + after.slice(0, 12))}`);
          }
        });
        for (let i = 0; i < texts.length; i++) {
          for (let j = 0; j < texts.length; j++) {
            if (i === j) continue;
            const a = boxes[i]!;
            const b = boxes[j]!;
            const sameLine = Math.abs(a.t - b.t) < 2 && Math.abs(a.b - b.b) < 2;
            const touching = Math.abs(b.l - a.r) < 1.5;
            const ta = texts[i]!.textContent ?? '';
            const tb = texts[j]!.textContent ?? '';
            if (sameLine && touching && word.test(ta.slice(-1)) && word.test(tb.charAt(0))) out.push(`${id}: broken-word ${JSON.stringify(ta.slice(-12) + '|' + tb.slice(0, 12))}`);
          }
        }
      }
      return out;
    },
    { axes: rules.axes, markers: MARKERS },
  );
}
