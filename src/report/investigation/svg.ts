import { formatNs } from '../../ledger/format.js';
import type { InFlightSeriesData } from './observe.js';
import { esc, refAttrs, shown, type Ref } from './values.js';

/**
 * The report's three pictures as self-contained SVG: no script, no external font or image, solid
 * strokes and labelled values so they read on paper in grey. Pure: data in, markup out.
 */

const FONT = 'font-family="system-ui, sans-serif" font-size="12"';
const INK = '#1a1a1a';
const GRID = '#c8c8c8';

function svgOpen(w: number, h: number, title: string, desc: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" role="img" ${FONT} fill="${INK}"><title>${esc(title)}</title><desc>${esc(desc)}</desc>`;
}

/** A `<tspan>` that carries its value's source. */
function vspan(r: Ref): string {
  return `<tspan${refAttrs(r)}>${esc(shown(r))}</tspan>`;
}

const r1 = (x: number): string => (Math.round(x * 10) / 10).toString();

/** Nice tick step for a range: 1, 2 or 5 times a power of ten. */
function niceStep(range: number, ticks: number): number {
  const raw = range / Math.max(1, ticks);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

export interface InFlightPicture {
  series: InFlightSeriesData;
  /** What the count is, in words (accepted instances, or entry events not yet returned). */
  counted: string;
  peak: Ref;
  maxactive: Ref | undefined;
  stopNs: number | undefined;
  /** Times the miss counter was seen to rise (from counter snapshots), with the rise. */
  misses: Array<{ tsNs: number; by: number }>;
  /** The miss-counter delta of the epoch, when known (shown when no snapshot times are). */
  missDelta: Ref | undefined;
  /** The bucket width, as a value of the report's own pass. */
  bucket: Ref;
}

/** In-flight calls over time against the maxactive line, with the pool-full stretches, misses and capture stop marked. */
export function inFlightSvg(p: InFlightPicture): string {
  const W = 800;
  const H = 320;
  const L = 56;
  const R = 24;
  const T = 66;
  const B = 42;
  const s = p.series;
  const last = s.buckets.length ? s.buckets[s.buckets.length - 1]!.startNs + s.widthNs : s.originNs + 1;
  const t0 = s.originNs;
  const t1 = Math.max(last, p.stopNs ?? last, t0 + 1);
  const cap = typeof p.maxactive?.v === 'number' ? p.maxactive.v : undefined;
  const yTop = Math.max(1, Math.ceil(Math.max(s.peak, cap ?? 0) * 1.1));
  const X = (t: number): number => L + ((t - t0) / (t1 - t0)) * (W - L - R);
  const Y = (v: number): number => H - B - (v / yTop) * (H - T - B);
  const out: string[] = [svgOpen(W, H, 'In-flight calls over time', `${p.counted}, per time bucket its minimum and maximum, against the effective maxactive; misses and capture stop marked`)];

  // Pool full (or beyond): shaded stretches behind the series.
  if (cap !== undefined) {
    let run: [number, number] | undefined;
    const runs: Array<[number, number, boolean]> = [];
    let over = false;
    for (const b of s.buckets) {
      if (b.max >= cap) {
        if (run === undefined) {
          run = [b.startNs, b.startNs + s.widthNs];
          over = b.max > cap;
        } else {
          run[1] = b.startNs + s.widthNs;
          over ||= b.max > cap;
        }
      } else if (run !== undefined) {
        runs.push([run[0], run[1], over]);
        run = undefined;
      }
    }
    if (run !== undefined) runs.push([run[0], run[1], over]);
    for (const [a, b, o] of runs) {
      out.push(`<rect class="pool-full" x="${r1(X(a))}" y="${T}" width="${r1(Math.max(1, X(b) - X(a)))}" height="${H - T - B}" fill="${o ? '#f4b6b6' : '#fbe3e3'}"/>`);
    }
  }

  // Axes and grid.
  const yStep = Math.max(1, niceStep(yTop, 5));
  for (let v = 0; v <= yTop; v += yStep) {
    out.push(`<line x1="${L}" x2="${W - R}" y1="${r1(Y(v))}" y2="${r1(Y(v))}" stroke="${GRID}" stroke-width="0.5"/>`);
    out.push(`<text data-tick="y" x="${L - 6}" y="${r1(Y(v) + 4)}" text-anchor="end">${v}</text>`);
  }
  const span = t1 - t0;
  const xStep = niceStep(span, 6);
  for (let d = 0; d <= span; d += xStep) {
    out.push(`<line x1="${r1(X(t0 + d))}" x2="${r1(X(t0 + d))}" y1="${H - B}" y2="${H - B + 4}" stroke="${INK}"/>`);
    out.push(`<text data-tick="x" x="${r1(X(t0 + d))}" y="${H - B + 16}" text-anchor="middle">+${esc(formatNs(d))}</text>`);
  }
  out.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="${INK}"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${INK}"/>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">time since the first record</text>`);
  out.push(`<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">calls in flight</text>`);

  // The series: each bucket a bar from its minimum to its maximum (the peak survives any downsampling).
  const d: string[] = [];
  for (const b of s.buckets) {
    const x = X(b.startNs);
    const w = Math.max(0.6, X(b.startNs + s.widthNs) - x);
    const y = Y(b.max);
    const h = Math.max(2.5, Y(b.min) - y);
    d.push(`M${r1(x)} ${r1(y)}h${r1(w)}v${r1(h)}h${r1(-w)}z`);
  }
  if (d.length) out.push(`<path class="series" d="${d.join('')}" fill="#2b5d9b"/>`);

  // maxactive line.
  if (cap !== undefined && p.maxactive) {
    out.push(`<line class="maxactive" x1="${L}" x2="${W - R}" y1="${r1(Y(cap))}" y2="${r1(Y(cap))}" stroke="#b00020" stroke-width="2" stroke-dasharray="8 4"/>`);
    out.push(`<text x="${W - R}" y="${r1(Y(cap) - 5)}" text-anchor="end" fill="#b00020">effective maxactive ${vspan(p.maxactive)}</text>`);
  }
  // Peak.
  if (s.peakAtNs !== undefined) {
    const px = X(s.peakAtNs);
    out.push(`<circle class="peak" cx="${r1(px)}" cy="${r1(Y(s.peak))}" r="4" fill="none" stroke="${INK}" stroke-width="1.5"/>`);
    out.push(`<text x="${r1(Math.min(px + 7, W - R - 60))}" y="${r1(Math.max(T + 12, Y(s.peak) - 8))}">peak ${vspan(p.peak)}</text>`);
  }
  // Capture stop.
  if (p.stopNs !== undefined) {
    const x = X(p.stopNs);
    out.push(`<line class="capture-stop" x1="${r1(x)}" x2="${r1(x)}" y1="${T - 6}" y2="${H - B}" stroke="${INK}" stroke-width="1.5" stroke-dasharray="3 3"/>`);
    out.push(`<text x="${r1(x - 4)}" y="${T - 8}" text-anchor="end">capture stop</text>`);
  }
  // Misses: where the counter was seen to rise.
  for (const m of p.misses) {
    const x = X(m.tsNs);
    out.push(`<path class="miss" d="M${r1(x)} ${T}l-5 -9h10z" fill="#b00020"/>`);
  }
  const legend: string[] = [
    `<rect x="${L}" y="8" width="12" height="12" fill="#2b5d9b"/><text x="${L + 16}" y="18">${esc(p.counted)} (min–max per bucket of ${vspan(p.bucket)})</text>`,
  ];
  if (cap !== undefined) legend.push(`<rect x="${L}" y="24" width="12" height="12" fill="${p.series.peak > cap ? '#f4b6b6' : '#fbe3e3'}" stroke="${GRID}"/><text x="${L + 16}" y="34">pool full${p.series.peak > cap ? ' (darker: more calls than the pool holds, so some were missed)' : ''}</text>`);
  const missText = p.misses.length
    ? `▼ snapshots at which the miss counter had risen; rise in the epoch: ${p.missDelta !== undefined ? vspan(p.missDelta) : 'unknown'}`
    : p.missDelta !== undefined ? `miss counter rise in the epoch: ${vspan(p.missDelta)} (no snapshot times)` : 'miss counter: unknown';
  legend.push(`<text x="${L}" y="50" fill="#b00020">${missText}</text>`);
  out.push(...legend);
  out.push('</svg>');
  return out.join('');
}

export interface HistogramPicture {
  bins: Array<{ loNs: number; hiNs: number; count: number }>;
  marks: Array<{ label: string; ref: Ref }>;
  /** The coverage lines printed on the picture: each a label and its values. */
  coverage: Array<{ label: string; ref: Ref }>;
  from: string;
}

/** The duration distribution on a log time axis, percentiles marked, coverage printed on it. */
export function histogramSvg(p: HistogramPicture): string {
  const W = 800;
  const H = 280;
  const L = 56;
  const R = 24;
  const T = 64;
  const B = 42;
  const out: string[] = [svgOpen(W, H, 'Duration distribution with its coverage', `durations of ${p.from}, log time axis, with the coverage they were computed from`)];
  const marks = p.marks.filter((m) => typeof m.ref.v === 'number' && (m.ref.v as number) > 0);
  // At least a decade either side of the data, so a narrow distribution still has an axis.
  const data = [...p.bins.filter((b) => b.count > 0).flatMap((b) => [Math.max(1, b.loNs), b.hiNs]), ...marks.map((m) => m.ref.v as number)];
  // Nothing to show: an axis from 1 µs to 1 s.
  const lo = data.length ? Math.max(1, data.reduce((m, x) => Math.min(m, x), Infinity) / 4) : 1e3;
  const hi = data.length ? Math.max(lo * 10, data.reduce((m, x) => Math.max(m, x), 0) * 4) : 1e9;
  const a = Math.log10(lo);
  const z = Math.log10(hi);
  const X = (ns: number): number => L + ((Math.log10(Math.max(ns, lo)) - a) / (z - a || 1)) * (W - L - R);
  const top = p.bins.reduce((m, b) => Math.max(m, b.count), 1);
  const Y = (n: number): number => H - B - (n / top) * (H - T - B);

  const decades = Math.floor(z) - Math.ceil(a) + 1;
  for (let e = Math.floor(a); e <= Math.ceil(z); e++) {
    for (const m of decades < 3 ? [1, 2, 5] : [1]) {
      const t = m * Math.pow(10, e);
      if (t < lo || t > hi) continue;
      const x = X(t);
      out.push(`<line x1="${r1(x)}" x2="${r1(x)}" y1="${T}" y2="${H - B + 4}" stroke="${GRID}" stroke-width="0.5"/>`);
      out.push(`<text data-tick="x" x="${r1(x)}" y="${H - B + 16}" text-anchor="middle">${esc(formatNs(t))}</text>`);
    }
  }
  out.push(`<text data-tick="y" x="${L - 6}" y="${T + 4}" text-anchor="end">${top}</text><text data-tick="y" x="${L - 6}" y="${H - B + 4}" text-anchor="end">0</text>`);
  out.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="${INK}"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${INK}"/>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">duration (log scale)</text>`);
  out.push(`<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">calls per bin</text>`);
  const d: string[] = [];
  for (const b of p.bins) {
    if (b.count === 0) continue;
    const x = X(Math.max(1, b.loNs));
    const w = Math.max(0.8, X(b.hiNs) - x - 0.4);
    const y = Y(b.count);
    d.push(`M${r1(x)} ${r1(y)}h${r1(w)}V${H - B}h${r1(-w)}z`);
  }
  if (d.length) out.push(`<path class="bins" d="${d.join('')}" fill="#6b8fbf" stroke="#2b5d9b" stroke-width="0.5"/>`);
  else out.push(`<text x="${(L + W - R) / 2}" y="${(T + H - B) / 2}" text-anchor="middle">no distribution recorded: percentiles only (from the case)</text>`);
  marks.forEach((m, i) => {
    const x = X(m.ref.v as number);
    out.push(`<line class="mark" x1="${r1(x)}" x2="${r1(x)}" y1="${T - 4}" y2="${H - B}" stroke="${INK}" stroke-width="1.2" stroke-dasharray="${i % 2 ? '2 2' : '5 3'}"/>`);
    out.push(`<text x="${r1(Math.min(x + 3, W - R - 40))}" y="${T + 10 + (i % 4) * 13}" stroke="#fff" stroke-width="3" paint-order="stroke">${esc(m.label)} ${vspan(m.ref)}</text>`);
  });
  const cov = p.coverage.map((c) => `${esc(c.label)} ${vspan(c.ref)}`).join(' · ');
  out.push(`<text class="coverage" x="${L}" y="18" font-weight="bold">coverage: ${cov}</text>`);
  out.push(`<text x="${L}" y="36">durations of ${esc(p.from)}: not representative of calls that were missed, filtered or still running</text>`);
  out.push('</svg>');
  return out.join('');
}

export interface IdentityTerm {
  name: string;
  ref: Ref;
}

const TERM_FILL: Record<string, string> = {
  returned: '#3b7d3b',
  filtered: '#8a8a8a',
  in_flight_at_stop: '#d9a520',
  capacity_missed: '#b00020',
  not_covered: '#6a3d9a',
  unexplained: '#1a1a1a',
};

/** eligible = returned + filtered + in flight + capacity missed + not covered + unexplained, as one bar. */
export function identityBarSvg(eligible: Ref, terms: IdentityTerm[], balanced: Ref): string {
  const W = 800;
  const L = 20;
  const R = 20;
  const rows = Math.ceil(terms.length / 3);
  const H = 112 + rows * 20;
  const out: string[] = [svgOpen(W, H, 'Accounting identity', 'eligible operations split into returned, filtered, in flight at stop, capacity missed, not covered and unexplained')];
  const total = typeof eligible.v === 'number' ? eligible.v : undefined;
  const known = terms.filter((t) => typeof t.ref.v === 'number').reduce((s, t) => s + (t.ref.v as number), 0);
  // With eligible unknown and a term unknown, the unknown share cannot be measured: a fixed
  // hatched tail (a fifth of the bar) says "and an unknown amount more" rather than nothing.
  const unknownTerms = terms.some((t) => typeof t.ref.v !== 'number');
  const openTail = total === undefined && unknownTerms ? 0.2 : 0;
  const scale = Math.max(total ?? 0, known, 1) / (1 - openTail);
  out.push('<defs><pattern id="unknown-hatch" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#fff"/><line x1="0" y1="0" x2="0" y2="8" stroke="#777" stroke-width="3"/></pattern></defs>');
  // The equation on two lines: on one it ran past the picture's right edge.
  const term = (t: IdentityTerm) => `${esc(t.name.replace(/_/g, ' '))} ${vspan(t.ref)}`;
  const half = Math.ceil(terms.length / 2);
  out.push(`<text x="${L}" y="18" font-weight="bold">eligible ${vspan(eligible)} = ${terms.slice(0, half).map(term).join(' + ')} +</text>`);
  out.push(`<text x="${L + 16}" y="36" font-weight="bold">${terms.slice(half).map(term).join(' + ')}</text>`);
  let x = L;
  const barY = 46;
  const barH = 34;
  for (const t of terms) {
    if (typeof t.ref.v !== 'number' || t.ref.v === 0) continue;
    const w = (t.ref.v / scale) * (W - L - R);
    out.push(`<rect class="term" data-term="${esc(t.name)}" x="${r1(x)}" y="${barY}" width="${r1(Math.max(1, w))}" height="${barH}" fill="${TERM_FILL[t.name] ?? '#999'}" stroke="#fff" stroke-width="1"/>`);
    x += w;
  }
  if ((total !== undefined && known < total) || openTail > 0) {
    const w = openTail > 0 ? W - L - R - (x - L) : ((total! - known) / scale) * (W - L - R);
    out.push(`<rect class="term" data-term="unknown" x="${r1(x)}" y="${barY}" width="${r1(w)}" height="${barH}" fill="url(#unknown-hatch)" stroke="${INK}" stroke-width="0.5"/>`);
    out.push(`<text x="${r1(x + w / 2)}" y="${barY + barH / 2 + 4}" text-anchor="middle">?</text>`);
  }
  out.push(`<rect x="${L}" y="${barY}" width="${W - L - R}" height="${barH}" fill="none" stroke="${INK}"/>`);
  terms.forEach((t, i) => {
    const col = i % 3;
    const row = Math.floor(i / 3);
    const lx = L + col * 260;
    const ly = barY + barH + 22 + row * 20;
    out.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${TERM_FILL[t.name] ?? '#999'}"/><text x="${lx + 16}" y="${ly}">${esc(t.name.replace(/_/g, ' '))}: ${vspan(t.ref)}</text>`);
  });
  const state = balanced.v === true ? '' : balanced.v === false ? ' — the identity does NOT balance' : ' — some terms are unknown (hatched)';
  out.push(`<text x="${L}" y="${H - 8}">balanced: ${vspan(balanced)}${esc(state)}</text>`);
  out.push('</svg>');
  return out.join('');
}
