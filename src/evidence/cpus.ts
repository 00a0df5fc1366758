import type { LineProblem } from '../errors.js';
import { countCpuList } from '../kernel/cpus.js';
import { numberedLines, problem } from './lines.js';

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
  const problems: LineProblem[] = [];
  const result: CpuPossibleResult = { problems };
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const count = result.count === undefined ? countCpuList(line) : undefined;
    if (count === undefined) {
      problems.push(problem(no, result.count === undefined ? 'a cpulist such as 0-3,8-11' : 'one line only', line));
      continue;
    }
    result.list = line.trim();
    result.count = count;
    result.line = no;
  }
  return result;
}
