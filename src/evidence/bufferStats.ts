import type { LineProblem } from '../errors.js';
import { numberedLines, parseCounter, problem } from './lines.js';

/**
 * The ftrace ring buffer's per-CPU statistics: tracefs `per_cpu/cpuN/stats` (v6.12
 * kernel/trace/trace.c tracing_stats_read: `entries`, `overrun`, `commit overrun`, `bytes`,
 * `oldest event ts`, `now ts`, `dropped events`, `read events`), one block per CPU. The collector
 * writes them as `CPU: N` followed by the file, which is also how trace-cmd prints them at the
 * end of a recording. What the buffer lost on a CPU since it was last cleared: `overrun` (events
 * overwritten when the buffer wrapped), `commit overrun` (events dropped when nested writes filled
 * it) and `dropped events` (events refused when full with overwrite off).
 */
export interface BufferStatsCpu {
  /** From a `CPU: N` line before the block; undefined when the block has none (a single file pasted). */
  cpu: number | undefined;
  /** The block's first line. */
  line: number;
  entries: number | undefined;
  overrun: number | undefined;
  commitOverrun: number | undefined;
  /** Absent before 3.10 (the kernel did not count them). */
  dropped: number | undefined;
}

export interface BufferStatsResult {
  cpus: BufferStatsCpu[];
  problems: LineProblem[];
}

const KEYS: Record<string, keyof Pick<BufferStatsCpu, 'entries' | 'overrun' | 'commitOverrun' | 'dropped'>> = {
  entries: 'entries',
  overrun: 'overrun',
  'commit overrun': 'commitOverrun',
  'dropped events': 'dropped',
};

/** Lines the file has that carry no loss (read, not checked beyond their shape). */
const OTHER_KEYS = new Set(['bytes', 'oldest event ts', 'now ts', 'read events']);

/** Parse per-CPU ring-buffer statistics (one or more blocks). */
export function parseBufferStats(text: string): BufferStatsResult {
  const cpus: BufferStatsCpu[] = [];
  const problems: LineProblem[] = [];
  let label: number | undefined;
  let cur: BufferStatsCpu | undefined;
  for (const { no, text: raw } of numberedLines(text)) {
    const line = raw.trim();
    if (line === '') continue;
    const cpu = /^CPU:?\s*(\d+)$/.exec(line);
    if (cpu) {
      label = Number(cpu[1]);
      cur = undefined;
      continue;
    }
    const kv = /^([a-z][a-z ]*[a-z]):\s*(\S+)$/.exec(line);
    const key = kv?.[1];
    if (!kv || key === undefined || (!(key in KEYS) && !OTHER_KEYS.has(key))) {
      problems.push(problem(no, 'a per-CPU ring-buffer statistic ("overrun: N") or a "CPU: N" line', raw));
      continue;
    }
    // `entries` opens each CPU's block.
    if (key === 'entries' || cur === undefined) {
      cur = { cpu: label, line: no, entries: undefined, overrun: undefined, commitOverrun: undefined, dropped: undefined };
      cpus.push(cur);
      label = undefined;
    }
    const field = KEYS[key];
    if (field === undefined) continue;
    const n = parseCounter(kv[2]!);
    if (n === undefined) {
      problems.push(problem(no, `an unsigned decimal ${key}`, raw));
      continue;
    }
    cur[field] = n;
  }
  return { cpus, problems };
}

/**
 * The events a CPU's buffer lost since it was last cleared: overrun + commit overrun + dropped
 * events; undefined when the block lacks one of them (a kernel before 3.10 did not count dropped
 * events, yet could refuse them with overwrite off; a pasted excerpt may leave lines out).
 */
export function lostOf(c: BufferStatsCpu): number | undefined {
  if (c.overrun === undefined || c.commitOverrun === undefined || c.dropped === undefined) return undefined;
  return c.overrun + c.commitOverrun + c.dropped;
}
