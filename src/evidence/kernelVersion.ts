import type { LineProblem } from '../errors.js';
import { parseOneLine } from './lines.js';

export interface UnameResult {
  release?: string;
  line?: number;
  problems: LineProblem[];
}

/** Parse the output of `uname -r`: one token such as `6.12.95+deb12-amd64`. */
export function parseUnameRelease(text: string): UnameResult {
  const r = parseOneLine(text, 'a kernel release such as 6.12.95+deb12-amd64', (line) => (/^\s*[0-9]+\.[0-9]+[A-Za-z0-9._+~-]*\s*$/.test(line) ? line.trim() : undefined));
  return { ...(r.value !== undefined ? { release: r.value, line: r.line! } : {}), problems: r.problems };
}

export interface ProcVersionResult {
  release?: string;
  /** `#1 SMP PREEMPT_DYNAMIC ...` tokens that say how the kernel preempts. */
  smp?: boolean;
  preempt?: 'none' | 'PREEMPT' | 'PREEMPT_DYNAMIC' | 'PREEMPT_RT';
  /** The upstream point release a distribution build names in its version string ("Debian 5.10.223-1"). */
  upstream?: string;
  line?: number;
  text?: string;
  problems: LineProblem[];
}

/** Parse `/proc/version`: `Linux version RELEASE (builder) (compiler) #N SMP PREEMPT_DYNAMIC ...`. */
export function parseProcVersion(text: string): ProcVersionResult {
  const r = parseOneLine(text, '"Linux version RELEASE ..."', (line) => {
    const m = /^Linux version (\S+)\s+(.*)$/.exec(line.trim());
    if (!m) return undefined;
    const v: Omit<ProcVersionResult, 'problems'> = { release: m[1] ?? '', text: line.trim() };
    const build = /#\S+\s+(.*)$/.exec(m[2] ?? '');
    if (build) {
      const words = (build[1] ?? '').split(/\s+/);
      v.smp = words.includes('SMP');
      // Debian writes its package version into the build string, after #N (the compiler's own
      // "(Debian 12.2.0-14)" comes before it): "#1 SMP Debian 5.10.223-1 (2024-08-10)".
      const upstream = /\bDebian (\d+\.\d+\.\d+)-/.exec(build[1] ?? '');
      if (upstream) v.upstream = upstream[1]!;
      v.preempt = words.includes('PREEMPT_RT') ? 'PREEMPT_RT' : words.includes('PREEMPT_DYNAMIC') ? 'PREEMPT_DYNAMIC' : words.includes('PREEMPT') ? 'PREEMPT' : 'none';
    }
    return v;
  });
  return { ...(r.value ?? {}), ...(r.line !== undefined ? { line: r.line } : {}), problems: r.problems };
}

export interface UnameMachineResult {
  arch?: string;
  line?: number;
  problems: LineProblem[];
}

/** Parse the output of `uname -m`: one token such as `x86_64`. */
export function parseUnameMachine(text: string): UnameMachineResult {
  const r = parseOneLine(text, 'a machine name such as x86_64', (line) => (/^\s*[A-Za-z0-9_]+\s*$/.test(line) ? line.trim() : undefined));
  return { ...(r.value !== undefined ? { arch: r.value, line: r.line! } : {}), problems: r.problems };
}
