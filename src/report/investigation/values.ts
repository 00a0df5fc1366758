import { formatNs } from '../../ledger/format.js';

/**
 * A number (or other value) shown in the report, with where it comes from: `source:path`, the
 * source one of `verdict` (the verdict JSON), `ledger` (the ledger JSON), `case` (the case as
 * evaluated), `fact` (a derived fact) or `observed` (the report's own pass: series and counters).
 * The HTML carries the key as `data-k` so that a reader (or a test) can check every figure
 * against the JSON it was taken from.
 */
export type Unit = 'ns' | 'ratio';

export interface Ref {
  k: string;
  v: unknown;
  /** `ns`: shown as a human duration; `ratio`: as a percentage. The raw value is kept in `data-v`. */
  unit?: Unit | undefined;
  /** What null means here when it is not "unknown" (probe.target_module: vmlinux; a finding's verdict: a warning). */
  nullAs?: string | undefined;
}

/** How a value reads in the report (the browser test formats the JSON with the same function). */
export function refText(v: unknown, unit?: Unit, nullAs?: string): string {
  if (v === null && nullAs !== undefined) return nullAs;
  if (v === undefined || v === null || v === 'unknown') return 'unknown';
  if (unit === 'ns' && typeof v === 'number') return formatNs(v);
  if (unit === 'ratio' && typeof v === 'number') return `${(v * 100).toFixed(2)} %`;
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length ? v.map((x) => refText(x)).join(', ') : 'none';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** XML/HTML text and attribute escaping. */
export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A ref as text. */
export const shown = (r: Ref): string => refText(r.v, r.unit, r.nullAs);

/** The attributes that tie an element to its source value. */
export function refAttrs(r: Ref): string {
  const raw = r.unit !== undefined && typeof r.v === 'number' ? ` data-unit="${r.unit}" data-v="${r.v}"` : '';
  const nul = r.nullAs !== undefined ? ` data-null="${esc(r.nullAs)}"` : '';
  return ` data-k="${esc(r.k)}"${raw}${nul}`;
}
