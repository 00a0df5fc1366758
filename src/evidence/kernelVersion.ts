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

/** What a kernel's version string (`#1 SMP PREEMPT_DYNAMIC ...`) says of how it preempts. */
export type PreemptToken = 'none' | 'PREEMPT' | 'PREEMPT_DYNAMIC' | 'PREEMPT_RT';

/** The preemption token among the words of a version string (after `#N`), `none` when there is none. */
export function preemptTokenOf(words: readonly string[]): PreemptToken {
  return words.includes('PREEMPT_RT') ? 'PREEMPT_RT' : words.includes('PREEMPT_DYNAMIC') ? 'PREEMPT_DYNAMIC' : words.includes('PREEMPT') ? 'PREEMPT' : 'none';
}

/**
 * Whether CONFIG_PREEMPTION is set, from the version string's token (the one owner of this
 * reading; uname -a and /proc/version both come here). scripts/mkcompile_h writes `PREEMPT` for
 * CONFIG_PREEMPT, `PREEMPT_RT` for CONFIG_PREEMPT_RT, and `PREEMPT_DYNAMIC` for
 * CONFIG_PREEMPT_DYNAMIC (since "sched/preempt: Tell about PREEMPT_DYNAMIC on kernel headers",
 * 2022; such kernels wrote `PREEMPT` before it); each of
 * the three selects CONFIG_PREEMPTION (PREEMPT_DYNAMIC through PREEMPT_BUILD, whatever model it
 * boots with: Debian 6.1 is PREEMPT_VOLUNTARY=y with PREEMPT_DYNAMIC=y and writes
 * PREEMPT_DYNAMIC). No token: none of the three, so CONFIG_PREEMPTION is not set, as on Debian
 * 5.10 (`#1 SMP Debian 5.10.223-1`), where the lab saw the default pool equal the CPU count.
 */
export function preemptionOf(token: PreemptToken): boolean {
  return token !== 'none';
}

export interface ProcVersionResult {
  release?: string;
  /** `#1 SMP PREEMPT_DYNAMIC ...` tokens that say how the kernel preempts. */
  smp?: boolean;
  preempt?: PreemptToken;
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
      v.preempt = preemptTokenOf(words);
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
