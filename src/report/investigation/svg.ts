import { scaleLinear, scaleLog } from 'd3-scale';
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

/**
 * Ticks, domains and label boxes. The scales come from d3-scale (nice domains, tick steps of 1, 2
 * or 5 times a power of ten); labels are placed by estimated box so that none sits on another,
 * on a marker or outside the picture (test/report/browser.test.ts measures the result in Chromium).
 */
const CHAR_W = 7.2;
const textW = (s: string): number => s.length * CHAR_W;
interface Box { l: number; t: number; r: number; b: number }
/** The box of a 12 px text line: `x` its left edge, `y` its baseline. */
const lineBox = (x: number, y: number, w: number): Box => ({ l: x, t: y - 12, r: x + w, b: y + 4 });
const meets = (a: Box, b: Box): boolean => Math.min(a.r, b.r) > Math.max(a.l, b.l) && Math.min(a.b, b.b) > Math.max(a.t, b.t);
/** The first candidate inside `frame` that meets none of `taken` (the first candidate when none fits). */
function place(candidates: Box[], taken: Box[], frame: Box): number {
  const i = candidates.findIndex((c) => c.l >= frame.l && c.r <= frame.r && c.t >= frame.t && c.b <= frame.b && !taken.some((t) => meets(c, t)));
  return Math.max(0, i);
}

/** A count axis from zero: a nice domain of at least 4, so that there are at least four integer ticks. */
function countScale(max: number, range: [number, number]) {
  const y = scaleLinear().domain([0, Math.max(4, max)]).nice(5).range(range);
  const ticks = y.ticks(5).filter((v) => Number.isInteger(v));
  // Five digits and more in SI form ("35k"), so the labels keep clear of the axis title.
  const f = y.tickFormat(5, (y.domain()[1] ?? 0) >= 10_000 ? '~s' : ',d');
  return { y, ticks, label: (v: number) => (v === 0 ? '0' : f(v)) };
}

const UNITS: Array<[number, string]> = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
/** A duration tick: the largest unit it reaches, at most three significant digits, no trailing zeros. */
export function durationTick(ns: number): string {
  const [u, name] = UNITS.find(([u]) => Math.abs(ns) >= u) ?? [1, 'ns'];
  return `${Number((ns / u).toPrecision(3))} ${name}`;
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
  const H = 340;
  const L = 64;
  const R = 24;
  // Above the plot: three legend lines, then the capture-stop label, then the row of miss markers.
  const T = 84;
  const B = 46;
  const frame: Box = { l: 2, t: 2, r: W - 2, b: H - 2 };
  const s = p.series;
  const last = s.buckets.length ? s.buckets[s.buckets.length - 1]!.startNs + s.widthNs : s.originNs + 1;
  const t0 = s.originNs;
  const t1 = Math.max(last, p.stopNs ?? last, t0 + 1);
  const cap = typeof p.maxactive?.v === 'number' ? p.maxactive.v : undefined;
  // Headroom over the peak and the maxactive line, so their labels fit inside the plot.
  const { y, ticks: yTicks, label: yLabel } = countScale(Math.ceil(Math.max(s.peak, cap ?? 0) * 1.15), [H - B, T]);
  // Time in one unit for the whole axis (the one the capture reaches), so every tick reads alike.
  // At least 1 ns: past 2^53 ns (uptimes of centuries) t0 + 1 rounds back to t0.
  const span = Math.max(1, t1 - t0);
  const [unit, unitName] = UNITS.find(([u]) => span >= u) ?? [1, 'ns'];
  // Nanoseconds are whole: an axis of at least 5 ns has whole-number ticks.
  const x = scaleLinear().domain([0, unit === 1 ? Math.max(5, span) : span / unit]).nice(6).range([L, W - R]);
  const X = (t: number): number => x((t - t0) / unit);
  const Y = (v: number): number => y(v);
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

  // Axes and grid. The y labels are centred on their line and the x labels sit low enough that
  // the two zeros at the corner keep apart.
  for (const v of yTicks) {
    out.push(`<line x1="${L}" x2="${W - R}" y1="${r1(Y(v))}" y2="${r1(Y(v))}" stroke="${GRID}" stroke-width="0.5"/>`);
    out.push(`<text data-tick="y" x="${L - 6}" y="${r1(Y(v) + 4)}" text-anchor="end">${esc(yLabel(v))}</text>`);
  }
  const xLabel = x.tickFormat(6);
  for (const d of x.ticks(6)) {
    out.push(`<line x1="${r1(x(d))}" x2="${r1(x(d))}" y1="${H - B}" y2="${H - B + 4}" stroke="${INK}"/>`);
    out.push(`<text data-tick="x" x="${r1(x(d))}" y="${H - B + 20}" text-anchor="middle">${esc(`${xLabel(d)} ${unitName}`)}</text>`);
  }
  out.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="${INK}"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${INK}"/>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">time since the first record</text>`);
  out.push(`<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">calls in flight</text>`);

  // The series: each bucket a bar from its minimum to its maximum (the peak survives any downsampling).
  const d: string[] = [];
  for (const b of s.buckets) {
    const bx = X(b.startNs);
    const w = Math.max(0.6, X(b.startNs + s.widthNs) - bx);
    const by = Y(b.max);
    const h = Math.max(2.5, Y(b.min) - by);
    d.push(`M${r1(bx)} ${r1(by)}h${r1(w)}v${r1(h)}h${r1(-w)}z`);
  }
  if (d.length) out.push(`<path class="series" d="${d.join('')}" fill="#2b5d9b"/>`);

  // What the labels inside the plot must keep off: the capture-stop line and the peak's circle.
  const taken: Box[] = [];
  const plot: Box = { l: L + 2, t: T + 1, r: W - R - 2, b: H - B - 1 };
  if (p.stopNs !== undefined) taken.push({ l: X(p.stopNs) - 2, t: T - 12, r: X(p.stopNs) + 2, b: H - B });
  // Peak.
  if (s.peakAtNs !== undefined) {
    const px = X(s.peakAtNs);
    const py = Y(s.peak);
    taken.push({ l: px - 5, t: py - 5, r: px + 5, b: py + 5 });
    const text = `peak ${shown(p.peak)}`;
    const w = textW(text);
    const c = [lineBox(px + 7, py - 8, w), lineBox(px - 7 - w, py - 8, w), lineBox(px + 7, py + 16, w), lineBox(px - 7 - w, py + 16, w)];
    const at = c[place(c, taken, plot)]!;
    taken.push(at);
    out.push(`<circle class="peak" cx="${r1(px)}" cy="${r1(py)}" r="4" fill="none" stroke="${INK}" stroke-width="1.5"/>`);
    out.push(`<text x="${r1(at.l)}" y="${r1(at.b - 4)}">peak ${vspan(p.peak)}</text>`);
  }
  // maxactive line: its label above the line at either end, or below it.
  if (cap !== undefined && p.maxactive) {
    const cy = Y(cap);
    const text = `effective maxactive ${shown(p.maxactive)}`;
    const w = textW(text);
    // Above the line first (the series is below it when the pool is full): at the right end, just
    // left of the capture stop, in the middle, at the left end; then the same below it.
    const xs = [W - R - 6 - w, ...(p.stopNs !== undefined ? [X(p.stopNs) - 6 - w] : []), (L + W - R - w) / 2, L + 6];
    const c = [...xs.map((lx) => lineBox(lx, cy - 5, w)), ...xs.map((lx) => lineBox(lx, cy + 15, w))];
    const at = c[place(c, taken, plot)]!;
    out.push(`<line class="maxactive" x1="${L}" x2="${W - R}" y1="${r1(cy)}" y2="${r1(cy)}" stroke="#b00020" stroke-width="2" stroke-dasharray="8 4"/>`);
    out.push(`<text x="${r1(at.l)}" y="${r1(at.b - 4)}" fill="#b00020">effective maxactive ${vspan(p.maxactive)}</text>`);
  }
  // Capture stop: the line reaches up past the miss markers to its label, which sits above them.
  if (p.stopNs !== undefined) {
    const sx = X(p.stopNs);
    const w = textW('capture stop');
    const c = [lineBox(sx - 4 - w, T - 14, w), lineBox(sx + 4, T - 14, w)];
    const at = c[place(c, [], frame)]!;
    out.push(`<line class="capture-stop" x1="${r1(sx)}" x2="${r1(sx)}" y1="${T - 12}" y2="${H - B}" stroke="${INK}" stroke-width="1.5" stroke-dasharray="3 3"/>`);
    out.push(`<text x="${r1(at.l)}" y="${T - 14}">capture stop</text>`);
  }
  // Misses: where the counter was seen to rise, a row of markers on the plot's top edge.
  for (const m of p.misses) {
    const mx = X(m.tsNs);
    out.push(`<path class="miss" d="M${r1(mx)} ${T}l-5 -9h10z" fill="#b00020"/>`);
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

/**
 * Percentile labels in rows above the plot, the rightmost first, each in the lowest row where it
 * meets no label of its row, its line crosses no label below it, and no line from above crosses it.
 * Returns each label's row and left edge, in the order given.
 */
function markRows(marks: Array<{ x: number; w: number }>, right: number): Array<{ row: number; l: number }> {
  const placed: Array<{ x: number; row: number; l: number; r: number }> = [];
  const result: Array<{ row: number; l: number }> = new Array(marks.length);
  // Equal values: the later label (p99 after p50) nearer the plot, so they read top to bottom.
  const order = marks.map((m, i) => ({ ...m, i })).sort((a, b) => b.x - a.x || b.i - a.i);
  for (const m of order) {
    const l = m.x + 3 + m.w <= right ? m.x + 3 : m.x - 3 - m.w;
    const r = l + m.w;
    for (let row = 0; ; row++) {
      const fits = placed.every((o) =>
        (o.row !== row || r + 6 <= o.l || l >= o.r + 6) &&
        (o.row >= row || m.x < o.l - 1 || m.x > o.r + 1) &&
        (o.row <= row || o.x < l - 1 || o.x > r + 1));
      if (fits) {
        placed.push({ x: m.x, row, l, r });
        result[m.i] = { row, l };
        break;
      }
    }
  }
  return result;
}

/** The duration distribution on a log time axis, percentiles marked, coverage printed on it. */
export function histogramSvg(p: HistogramPicture): string {
  const W = 800;
  const L = 64;
  const R = 24;
  const B = 46;
  // Percentiles alone have no counts: a low strip is enough for their lines.
  const PLOT = p.bins.some((b) => b.count > 0) ? 180 : 72;
  const ROW = 16;
  const marks = p.marks.filter((m) => typeof m.ref.v === 'number' && (m.ref.v as number) > 0);
  const bins = p.bins.filter((b) => b.count > 0);
  const data = [...bins.flatMap((b) => [Math.max(1, b.loNs), b.hiNs]), ...marks.map((m) => m.ref.v as number)];
  // At least a decade, widened to whole decades (nothing to show: an axis from 1 µs to 1 s).
  const lo = data.length ? Math.max(1, Math.min(...data) / 2) : 1e3;
  const hi = data.length ? Math.max(lo * 10, Math.max(...data) * 2) : 1e9;
  const x = scaleLog().domain([lo, hi]).nice().range([L, W - R]);
  const [a, z] = x.domain().map((v) => Math.round(Math.log10(v))) as [number, number];
  const X = (ns: number): number => x(Math.min(Math.max(ns, 10 ** a), 10 ** z));
  // Percentile labels above the plot, in as many rows as they need.
  const labels = marks.map((m) => `${m.label} ${shown(m.ref)}`);
  const rows = markRows(marks.map((m, i) => ({ x: X(m.ref.v as number), w: textW(labels[i]!) })), W - R);
  const nRows = rows.reduce((n, r) => Math.max(n, r.row + 1), 0);
  // The coverage in bold, on as many lines as it needs to stay inside the picture.
  const coverage: string[][] = [[]];
  let used = textW('coverage: ');
  for (const c of p.coverage) {
    // CHAR_W is generous enough for the bold face too (6.6 px a character measured in Chromium).
    const w = textW(`${c.label} ${shown(c.ref)} · `);
    if (used + w > W - L - R && coverage[coverage.length - 1]!.length) {
      coverage.push([]);
      used = 16;
    }
    coverage[coverage.length - 1]!.push(`${esc(c.label)} ${vspan(c.ref)}`);
    used += w;
  }
  const T = 48 + (coverage.length - 1) * 16 + nRows * ROW + 6;
  const H = T + PLOT + B;
  const out: string[] = [svgOpen(W, H, 'Duration distribution with its coverage', `durations of ${p.from}, log time axis, with the coverage they were computed from`)];

  const decades = z - a;
  for (let e = a; e <= z; e++) {
    for (const m of decades <= 2 ? [1, 2, 5] : [1]) {
      const t = m * 10 ** e;
      if (e === z && m > 1) continue;
      const tx = x(t);
      out.push(`<line x1="${r1(tx)}" x2="${r1(tx)}" y1="${T}" y2="${H - B + 4}" stroke="${GRID}" stroke-width="0.5"/>`);
      out.push(`<text data-tick="x" x="${r1(tx)}" y="${H - B + 20}" text-anchor="middle">${esc(durationTick(t))}</text>`);
    }
  }
  out.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="${INK}"/>`);
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">duration (log scale)</text>`);
  // A count axis only when there are counts: percentiles alone have none.
  if (bins.length) {
    const { y, ticks, label } = countScale(bins.reduce((m, b) => Math.max(m, b.count), 1), [H - B, T]);
    for (const v of ticks) {
      if (v > 0) out.push(`<line x1="${L}" x2="${W - R}" y1="${r1(y(v))}" y2="${r1(y(v))}" stroke="${GRID}" stroke-width="0.5"/>`);
      out.push(`<text data-tick="y" x="${L - 6}" y="${r1(y(v) + 4)}" text-anchor="end">${esc(label(v))}</text>`);
    }
    out.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="${INK}"/>`);
    out.push(`<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">calls per bin</text>`);
    const d: string[] = [];
    for (const b of bins) {
      const bx = X(Math.max(1, b.loNs));
      const w = Math.max(0.8, X(b.hiNs) - bx - 0.4);
      d.push(`M${r1(bx)} ${r1(y(b.count))}h${r1(w)}V${H - B}h${r1(-w)}z`);
    }
    out.push(`<path class="bins" d="${d.join('')}" fill="#6b8fbf" stroke="#2b5d9b" stroke-width="0.5"/>`);
  }
  marks.forEach((m, i) => {
    const mx = X(m.ref.v as number);
    const { row, l } = rows[i]!;
    const base = T - 6 - row * ROW;
    out.push(`<line class="mark" x1="${r1(mx)}" x2="${r1(mx)}" y1="${base - 8}" y2="${H - B}" stroke="${INK}" stroke-width="1.2" stroke-dasharray="${i % 2 ? '2 2' : '5 3'}"/>`);
    out.push(`<text x="${r1(l)}" y="${base}">${esc(m.label)} ${vspan(m.ref)}</text>`);
  });
  coverage.forEach((line, i) => out.push(`<text class="coverage" x="${i ? L + 16 : L}" y="${18 + i * 16}" font-weight="bold">${i ? '' : 'coverage: '}${line.join(' · ')}${i < coverage.length - 1 ? ' ·' : ''}</text>`));
  const dy = 18 + coverage.length * 16 + 2;
  out.push(bins.length
    ? `<text x="${L}" y="${dy}">durations of ${esc(p.from)}: not representative of calls that were missed, filtered or still running</text>`
    : `<text x="${L}" y="${dy}">no distribution recorded: percentiles only, from ${esc(p.from)}</text>`);
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
  const unknownTerms = terms.some((t) => typeof t.ref.v !== 'number');
  const barW = W - L - R;
  // The hatched share: what eligible leaves beyond the known terms, and whatever the unknown terms
  // hold. With eligible unknown it cannot be measured: a fixed fifth of the bar says "and an
  // unknown amount more". It is never narrower than HATCH_MIN, or a small share vanishes.
  const HATCH_MIN = 24;
  const rest = total !== undefined && known < total ? total - known : 0;
  const hatchW = total === undefined && unknownTerms ? barW * 0.2 : rest > 0 || unknownTerms ? Math.max(HATCH_MIN, (rest / Math.max(total ?? 1, 1)) * barW) : 0;
  const knownW = barW - hatchW;
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
    const w = known > 0 ? (t.ref.v / known) * knownW : 0;
    out.push(`<rect class="term" data-term="${esc(t.name)}" x="${r1(x)}" y="${barY}" width="${r1(Math.max(1, w))}" height="${barH}" fill="${TERM_FILL[t.name] ?? '#999'}" stroke="#fff" stroke-width="1"/>`);
    x += w;
  }
  if (hatchW > 0) {
    const w = W - R - x;
    out.push(`<rect class="term" data-term="unknown" x="${r1(x)}" y="${barY}" width="${r1(w)}" height="${barH}" fill="url(#unknown-hatch)" stroke="${INK}" stroke-width="0.5"/>`);
    out.push(`<text x="${r1(x + w / 2)}" y="${barY + barH / 2 + 4}" text-anchor="middle" stroke="#fff" stroke-width="3" paint-order="stroke">?</text>`);
  }
  out.push(`<rect x="${L}" y="${barY}" width="${W - L - R}" height="${barH}" fill="none" stroke="${INK}"/>`);
  // Known terms that add up to more than eligible: the bar is as long as they are, and a black
  // line marks where eligible ends (the sentence below says so; the engine's cross-checks say why).
  const over = total !== undefined && known > total;
  if (over) {
    const ex = L + (total / known) * knownW;
    out.push(`<line class="eligible-end" x1="${r1(ex)}" x2="${r1(ex)}" y1="${barY - 4}" y2="${barY + barH + 4}" stroke="${INK}" stroke-width="2.5"/>`);
  }
  terms.forEach((t, i) => {
    const col = i % 3;
    const row = Math.floor(i / 3);
    const lx = L + col * 260;
    const ly = barY + barH + 22 + row * 20;
    const fill = typeof t.ref.v === 'number' ? TERM_FILL[t.name] ?? '#999' : 'url(#unknown-hatch)';
    out.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${fill}" stroke="${INK}" stroke-width="0.5"/><text x="${lx + 16}" y="${ly}">${esc(t.name.replace(/_/g, ' '))}: ${vspan(t.ref)}</text>`);
  });
  const state = (balanced.v === true ? '' : balanced.v === false ? ' — the identity does NOT balance' : ' — some terms are unknown (hatched)') + (over ? '; the known terms exceed eligible (black line)' : '');
  out.push(`<text x="${L}" y="${H - 8}">balanced: ${vspan(balanced)}${esc(state)}</text>`);
  out.push('</svg>');
  return out.join('');
}
