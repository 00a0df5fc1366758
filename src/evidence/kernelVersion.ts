import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';

export interface UnameResult {
  release?: string;
  line?: number;
  problems: LineProblem[];
}

/** Parse the output of `uname -r`: one token such as `6.12.95+deb12-amd64`. */
export function parseUnameRelease(text: string): UnameResult {
  const problems: LineProblem[] = [];
  const result: UnameResult = { problems };
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    if (result.release === undefined && /^\s*[0-9][A-Za-z0-9._+~-]*\s*$/.test(line)) {
      result.release = line.trim();
      result.line = no;
    } else {
      problems.push(problem(no, result.release === undefined ? 'a kernel release such as 6.12.95+deb12-amd64' : 'one line only', line));
    }
  }
  return result;
}

export interface ProcVersionResult {
  release?: string;
  /** `#1 SMP PREEMPT_DYNAMIC ...` tokens that say how the kernel preempts. */
  smp?: boolean;
  preempt?: 'none' | 'PREEMPT' | 'PREEMPT_DYNAMIC' | 'PREEMPT_RT';
  line?: number;
  text?: string;
  problems: LineProblem[];
}

/** Parse `/proc/version`: `Linux version RELEASE (builder) (compiler) #N SMP PREEMPT_DYNAMIC ...`. */
export function parseProcVersion(text: string): ProcVersionResult {
  const problems: LineProblem[] = [];
  const result: ProcVersionResult = { problems };
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const m = /^Linux version (\S+)\s+(.*)$/.exec(line.trim());
    if (!m || result.release !== undefined) {
      problems.push(problem(no, result.release === undefined ? '"Linux version RELEASE ..."' : 'one line only', line));
      continue;
    }
    result.release = m[1] ?? '';
    result.line = no;
    result.text = line.trim();
    const build = /#\S+\s+(.*)$/.exec(m[2] ?? '');
    if (build) {
      const words = (build[1] ?? '').split(/\s+/);
      result.smp = words.includes('SMP');
      result.preempt = words.includes('PREEMPT_RT')
        ? 'PREEMPT_RT'
        : words.includes('PREEMPT_DYNAMIC')
          ? 'PREEMPT_DYNAMIC'
          : words.includes('PREEMPT')
            ? 'PREEMPT'
            : 'none';
    }
  }
  return result;
}

export interface UnameMachineResult {
  arch?: string;
  line?: number;
  problems: LineProblem[];
}

/** Parse the output of `uname -m`: one token such as `x86_64`. */
export function parseUnameMachine(text: string): UnameMachineResult {
  const problems: LineProblem[] = [];
  const result: UnameMachineResult = { problems };
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    if (result.arch === undefined && /^\s*[A-Za-z0-9_]+\s*$/.test(line)) {
      result.arch = line.trim();
      result.line = no;
    } else problems.push(problem(no, 'a machine name such as x86_64', line));
  }
  return result;
}
