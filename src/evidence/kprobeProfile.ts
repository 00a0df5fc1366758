import type { LineProblem } from '../errors.js';
import { numberedLines, parseCounter, problem } from './lines.js';

/**
 * One row of tracefs `kprobe_profile` (`"  %-44s %15lu %15lu\n"`). For a return event the hit
 * column counts return-handler runs, not entries, and the miss column is kp.nmissed + rp.nmissed
 * (kernel-facts §4). Both are cumulative since the event was registered.
 */
export interface KprobeProfileRow {
  line: number;
  /** The event name only: the file shows no group, so two groups' `gate` look the same. */
  event: string;
  hits: number;
  misses: number;
}

export interface KprobeProfileResult {
  rows: KprobeProfileRow[];
  problems: LineProblem[];
}

/** Parse `kprobe_profile` text. */
export function parseKprobeProfile(text: string): KprobeProfileResult {
  const rows: KprobeProfileRow[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const tokens = line.trim().split(/\s+/);
    if (tokens.length !== 3) {
      problems.push(problem(no, 'an event name, a hit count and a miss count', line));
      continue;
    }
    const [event, hitText, missText] = tokens as [string, string, string];
    const hits = parseCounter(hitText);
    const misses = parseCounter(missText);
    if (hits === undefined || misses === undefined) {
      problems.push(problem(no, 'unsigned decimal hit and miss counts', line));
      continue;
    }
    rows.push({ line: no, event, hits, misses });
  }
  return { rows, problems };
}
