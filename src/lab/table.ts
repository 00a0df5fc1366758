import type { LabRow, LabRun } from './run.js';

const num = (n: number | string | undefined | null): string => (n === undefined || n === null ? '?' : String(n));

function columns(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n') + '\n';
}

const secs = (ns: number | undefined): string => (ns === undefined ? '?' : (ns / 1e9).toFixed(1));

/**
 * The lab's summary tables, one row per bundle. Tracefs bundles: counters of the return event
 * (hits = returns, misses) and of the entry event, trace records (entries/returns). Module
 * bundles: the module's own counters at the end snapshot (nmissed, kp.nmissed, effective
 * maxactive, calls, entries/returns/filtered) and its probe records. Each with the verdict, the
 * expected one and the guest's time for the scenario. Pure.
 */
export function formatLabTable(rows: LabRow[]): string {
  const tracefs = rows.filter((r) => r.kind === 'tracefs');
  const module = rows.filter((r) => r.kind === 'module');
  const parts: string[] = [];
  if (tracefs.length > 0) {
    const head = ['scenario', 'kernel', 'maxactive', 'ret hits/misses', 'entry hits', 'records e/r', 'verdict', 'expected', 'guest s'];
    const body = tracefs.map((r) => {
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
        secs(o?.elapsedNs),
      ];
    });
    parts.push(columns(head, body));
  }
  if (module.length > 0) {
    const head = ['scenario', 'kernel', 'maxactive', 'nmissed', 'kp.nmissed', 'calls', 'entries/returns/filtered', 'records e/r/f', 'verdict', 'expected', 'guest s'];
    const body = module.map((r) => {
      const o = r.module;
      const c = o?.counters.end;
      if (o && !o.registered) {
        return [r.bundle, o.release ?? r.kernel.release, '-', `refused: ${o.refused?.errno ?? '?'}`, '-', '-', '-', '-', r.triage?.verdict ?? '(none)', r.expected?.verdict ?? '?', secs(o.elapsedNs)];
      }
      return [
        r.bundle,
        o?.release ?? r.kernel.release,
        num(c?.maxactive),
        o ? num(c?.nmissed) : (r.missing ?? 'no bundle'),
        num(c?.kp_nmissed),
        num(c?.calls),
        `${num(c?.entries)}/${num(c?.returns)}/${num(c?.filtered)}`,
        o ? `${o.records.entry}/${o.records.return}/${o.records.filtered}` : '-',
        r.triage?.verdict ?? '(none)',
        r.expected?.verdict ?? '?',
        secs(o?.elapsedNs),
      ];
    });
    parts.push(columns(head, body));
  }
  const bt = rows.filter((r) => r.kind === 'bpftrace');
  if (bt.length > 0) {
    const head = ['scenario', 'kernel', 'bpftrace', 'attached', '@returns', 'module calls/returns', 'links (text/json)', 'link missed', 'verdict', 'expected', 'guest s'];
    const body = bt.map((r) => {
      const o = r.bpftrace;
      const c = o?.module.counters.end;
      const link = o?.targetLink.json;
      return [
        r.bundle,
        o?.module.release ?? r.kernel.release,
        o?.bpftraceVersion ?? (r.missing ?? 'no bundle'),
        num(o?.output.attached?.probes),
        `${num(o?.returns)}${o?.recursionMisses ? ` +${o.recursionMisses} recursion_misses` : ''}`,
        `${num(c?.calls)}/${num(c?.returns)}`,
        o ? `${o.links.text.length}/${o.links.json.length}` : '-',
        link ? `${link.type} ${link.kprobe?.missed ?? link.multi?.missed ?? 'no field'}` : 'no link',
        r.triage?.verdict ?? '(none)',
        r.expected?.verdict ?? '?',
        secs(o?.module.elapsedNs),
      ];
    });
    parts.push(columns(head, body));
  }
  return parts.join('\n');
}

/** Time per kernel (its boots and the host's triage) and per scenario (guest time), for the log. Pure. */
export function formatLabTimes(run: LabRun): string {
  const lines: string[] = [];
  let total = 0;
  for (const [kernel, ms] of run.kernelMs) {
    total += ms;
    const boots = run.boots.filter((b) => b.kernel === kernel).map((b) => `-smp ${b.smp} ${(b.ms / 1000).toFixed(1)} s`);
    lines.push(`kernel ${kernel.release}: ${(ms / 1000).toFixed(1)} s (boots: ${boots.join(', ')})`);
    const per = run.rows
      .filter((r) => r.kernel === kernel)
      .map((r) => `${r.bundle} ${secs(r.module?.elapsedNs ?? r.observation?.elapsedNs)}`);
    lines.push(`  scenarios (s in the guest): ${per.join(', ')}`);
  }
  lines.push(`matrix: ${(run.wallMs / 1000).toFixed(1)} s wall for ${run.kernelMs.size} kernels (${(total / 1000).toFixed(1)} s of kernel time, kernels overlapping)`);
  return lines.join('\n') + '\n';
}
