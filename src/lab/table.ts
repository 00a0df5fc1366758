import type { LabRow } from './run.js';

const num = (n: number | undefined | null): string => (n === undefined || n === null ? '?' : String(n));

/**
 * The lab's summary table, one row per bundle: scenario, kernel release, counters of the return
 * event (hits = returns, misses) and of the entry event, trace records (entries/returns), the
 * verdict and the expected one. Pure.
 */
export function formatLabTable(rows: LabRow[]): string {
  const head = ['scenario', 'kernel', 'maxactive', 'ret hits/misses', 'entry hits', 'records e/r', 'verdict', 'expected'];
  const body = rows.map((r) => {
    const o = r.observation;
    const failed = o && !o.registered;
    return [
      r.bundle,
      o?.release ?? r.kernel.release,
      failed ? '-' : num(o?.maxactive),
      failed ? `rejected: ${o?.errorReason ?? '?'}` : o ? `${num(o.returnHits)}/${num(o.returnMisses)}` : 'no bundle',
      failed || !o ? '-' : num(o.entryHits),
      failed || !o ? '-' : `${num(o.entries)}/${num(o.returns)}`,
      r.triage?.verdict ?? '(none)',
      r.expected?.verdict ?? '?',
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n') + '\n';
}
