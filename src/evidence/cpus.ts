import type { LineProblem } from '../errors.js';
import { countCpuList } from '../kernel/cpus.js';
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
  const r = parseOneLine(text, 'a cpulist such as 0-3,8-11', (line) => {
    const count = countCpuList(line);
    return count === undefined ? undefined : { list: line.trim(), count };
  });
  return { ...(r.value ?? {}), ...(r.line !== undefined ? { line: r.line } : {}), problems: r.problems };
}
