import type { LineProblem } from '../errors.js';
import { parseCpuList } from '../kernel/cpus.js';
import { parseOneLine } from './lines.js';

export interface CpuPossibleResult {
  /** The list as printed, e.g. `0-3,8-11`. */
  list?: string;
  /** CPUs in the mask (`0-3,8-11` is 8): what num_possible_cpus() returns. */
  count?: number;
  line?: number;
  problems: LineProblem[];
}

/** Parse `/sys/devices/system/cpu/possible`. */
export function parseCpuPossible(text: string): CpuPossibleResult {
  // The one cpulist parser says what was wrong (an id above the bound, a list too long).
  const firstLine = text.split('\n').find((l) => l.trim() !== '') ?? '';
  const first = parseCpuList(firstLine);
  const r = parseOneLine(text, first.ok ? 'a cpulist such as 0-3,8-11' : first.expected, (line) => {
    const p = parseCpuList(line);
    return p.ok ? { list: line.trim(), count: p.count } : undefined;
  });
  return { ...(r.value ?? {}), ...(r.line !== undefined ? { line: r.line } : {}), problems: r.problems };
}
