import type { LineProblem } from '../errors.js';
import { numberedLines } from './lines.js';

/** One event `perf probe -a` added or `perf probe -l` lists: `probe:vfs_read__return (on vfs_read%return)`. */
export interface PerfProbeEvent {
  line: number;
  group: string;
  event: string;
  symbol: string;
  offset: number;
  retprobe: boolean;
  module?: string;
}

export interface PerfProbeResult {
  events: PerfProbeEvent[];
  /** `Added new event(s):` was printed: the definition was written to kprobe_events. */
  added: boolean;
  /** Failures: "Failed to find symbol X", "Probe point 'X' not found.", "Error: Failed to add events." */
  errors: Array<{ line: number; message: string; notFound: boolean }>;
  problems: LineProblem[];
}

/** Parse `perf probe -a ...` or `perf probe -l` output. perf cannot set maxactive (kernel-facts §9). */
export function parsePerfProbe(text: string): PerfProbeResult {
  const out: PerfProbeResult = { events: [], added: false, errors: [], problems: [] };
  for (const { no, text: raw } of numberedLines(text)) {
    const t = raw.trim();
    if (t === '') continue;
    if (/^Added new events?:$/.test(t)) {
      out.added = true;
      continue;
    }
    const ev = /^([A-Za-z_][A-Za-z0-9_]*):([A-Za-z_][A-Za-z0-9_]*)\s+\(on ([A-Za-z_][A-Za-z0-9_.]*)(?:\+([0-9]+|0x[0-9a-fA-F]+))?(%return)?(?:@\S+)?(?: in ([A-Za-z0-9_-]+))?(?: with .*)?\)$/.exec(t);
    if (ev) {
      const e: PerfProbeEvent = {
        line: no,
        group: ev[1] ?? '',
        event: ev[2] ?? '',
        symbol: ev[3] ?? '',
        offset: ev[4] ? Number(ev[4]) : 0,
        retprobe: ev[5] !== undefined,
      };
      if (ev[6] !== undefined) e.module = ev[6];
      out.events.push(e);
      continue;
    }
    const err = /^(?:Error: )?(Failed to find symbol .*|Probe point '.*' not found\.?|Failed to add events\.?|Semantic error :.*)$/.exec(t);
    if (err) out.errors.push({ line: no, message: err[1] ?? t, notFound: /not found|Failed to find symbol/.test(t) });
  }
  return out;
}
