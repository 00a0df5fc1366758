import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';

/**
 * `perf stat -e GRP:EVENT ...` output: one line per event, the count first (grouped by the
 * locale: `120,034`, `120.034`, `120 034`, or plain), then the event name, then perf's notes
 * (`( +- 0.12% )`, a percentage of time enabled). A count perf could not take prints
 * `<not counted>` or `<not supported>`: no figure. In counting mode a kprobe event's count is the
 * number of times its handler ran in the window (a return event: returns), with no record buffer
 * to lose any.
 */
export interface PerfStatCount {
  line: number;
  /** The event as given to -e: `probe:vfs_read__return`, `kprobes:myretprobe`. */
  event: string;
  count: number | undefined;
}

export interface PerfStatResult {
  /** Whether the text has perf stat's banner ("Performance counter stats for ..."). */
  banner: boolean;
  counts: PerfStatCount[];
  problems: LineProblem[];
}

/** A tracepoint-style event (GRP:EVENT), as kprobe events are named. */
const EVENT = /^[A-Za-z_][\w.-]*:[A-Za-z_][\w.]*$/;

/** Parse perf stat's output; lines of other events (cycles, task-clock) are skipped. */
export function parsePerfStat(text: string): PerfStatResult {
  const counts: PerfStatCount[] = [];
  const problems: LineProblem[] = [];
  let banner = false;
  for (const { no, text: line } of numberedLines(text)) {
    const t = line.trim();
    if (/^Performance counter stats for\b/.test(t)) {
      banner = true;
      continue;
    }
    const notCounted = /^<not (?:counted|supported)>\s+(\S+)/.exec(t);
    if (notCounted) {
      if (EVENT.test(notCounted[1]!)) counts.push({ line: no, event: notCounted[1]!, count: undefined });
      continue;
    }
    const m = /^(\d{1,3}(?:[,. \u00a0\u202f]\d{3})+|\d+)\s+(\S+)(?:\s|$)/.exec(t);
    if (!m || !EVENT.test(m[2]!)) continue;
    const count = Number(m[1]!.replace(/[,. \u00a0\u202f]/g, ''));
    if (!Number.isSafeInteger(count)) {
      problems.push(problem(no, 'an event count perf stat printed', line));
      continue;
    }
    counts.push({ line: no, event: m[2]!, count });
  }
  return { banner, counts, problems };
}
