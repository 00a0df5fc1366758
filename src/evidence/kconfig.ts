import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';

/** `y`/`m`, `n` for `# CONFIG_X is not set`, or the raw value of a string/number option. */
export type ConfigValue = 'y' | 'm' | 'n' | string;

export interface KernelConfigResult {
  /** Every option the text sets, by name without the CONFIG_ prefix, with the line it came from. */
  options: Map<string, { value: ConfigValue; line: number }>;
  problems: LineProblem[];
}

/** The options that decide what a kretprobe investigation can rely on. */
export const KPROBE_CONFIG_OPTIONS = ['KPROBES', 'KRETPROBES', 'KPROBE_EVENTS', 'KRETPROBE_ON_RETHOOK', 'FPROBE'] as const;

/** Parse a kernel `.config` (or the filtered lines of one). Other comments are ignored. */
export function parseKernelConfig(text: string): KernelConfigResult {
  const options = new Map<string, { value: ConfigValue; line: number }>();
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    const t = line.trim();
    if (t === '') continue;
    const unset = /^# CONFIG_([A-Za-z0-9_]+) is not set$/.exec(t);
    if (unset) {
      options.set(unset[1] ?? '', { value: 'n', line: no });
      continue;
    }
    if (t.startsWith('#')) continue;
    const set = /^CONFIG_([A-Za-z0-9_]+)=(.*)$/.exec(t);
    if (!set || (set[2] ?? '') === '') {
      problems.push(problem(no, 'CONFIG_NAME=value or "# CONFIG_NAME is not set"', line));
      continue;
    }
    options.set(set[1] ?? '', { value: set[2] ?? '', line: no });
  }
  return { options, problems };
}
