import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';

export type KprobeFlag = 'GONE' | 'DISABLED' | 'OPTIMIZED' | 'FTRACE';

/** One line of debugfs `kprobes/list` (`report_probe` in kernel/kprobes.c). */
export interface KprobesListEntry {
  line: number;
  /** Hex as printed; all zeros when kallsyms_show_value() hides addresses. */
  address: string;
  /** `r` when the pre-handler is the kretprobe one, otherwise `k` (there is no `p`). */
  type: 'k' | 'r';
  /** Absent when the kernel printed a raw address instead of sym+off. */
  symbol?: string;
  offset?: number;
  module?: string;
  flags: KprobeFlag[];
}

export interface KprobesListResult {
  entries: KprobesListEntry[];
  problems: LineProblem[];
}

const FLAGS = new Set<string>(['GONE', 'DISABLED', 'OPTIMIZED', 'FTRACE']);

/** Parse debugfs `kprobes/list` text. */
export function parseKprobesList(text: string): KprobesListResult {
  const entries: KprobesListEntry[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const m = /^\s*([0-9a-fA-F]+)\s+([kr])\s+(\S+)(.*)$/.exec(line);
    if (!m) {
      problems.push(problem(no, 'ADDRESS k|r SYM+0xOFF [MOD] [FLAGS]', line));
      continue;
    }
    const entry: KprobesListEntry = { line: no, address: (m[1] ?? '').toLowerCase(), type: m[2] as 'k' | 'r', flags: [] };
    const where = m[3] ?? '';
    // `%s+0x%x` normally; `%pS` (sym+off/size) when the symbol lookup failed inside report_probe.
    const sm = /^([A-Za-z_.$][A-Za-z0-9_.$]*)\+0x([0-9a-fA-F]+)(?:\/0x[0-9a-fA-F]+)?$/.exec(where);
    if (sm) {
      entry.symbol = sm[1] ?? '';
      entry.offset = parseInt(sm[2] ?? '0', 16);
    } else if (!/^(?:0x)?[0-9a-fA-F]+$/.test(where)) {
      problems.push(problem(no, 'SYM+0xOFF or a raw address in the third column', line));
      continue;
    }
    let bad = false;
    for (const tok of (m[4] ?? '').trim().split(/\s+/).filter((t) => t !== '')) {
      // report_probe prints the flags with nothing between them ("%s%s%s%s": `[DISABLED][FTRACE]`).
      const flags = /^(?:\[[A-Z]+\])+$/.test(tok) ? [...tok.matchAll(/\[([A-Z]+)\]/g)].map((x) => x[1]!) : undefined;
      if (flags && flags.every((x) => FLAGS.has(x))) entry.flags.push(...(flags as KprobeFlag[]));
      // report_probe prints the module bare; only the %pS fallback (sym+off/size) brackets it.
      else if (entry.module === undefined && entry.flags.length === 0 && /^[A-Za-z0-9_-]+$/.test(tok)) entry.module = tok;
      else if (entry.module === undefined && entry.flags.length === 0 && where.includes('/') && /^\[[A-Za-z0-9_-]+\]$/.test(tok)) entry.module = tok.slice(1, -1);
      else bad = true;
    }
    if (bad) {
      problems.push(problem(no, 'an optional module then flags among [GONE] [DISABLED] [OPTIMIZED] [FTRACE]', line));
      continue;
    }
    entries.push(entry);
  }
  return { entries, problems };
}

/** Armed means registered and live: listed without [DISABLED] or [GONE]. */
export function isArmed(entry: KprobesListEntry): boolean {
  return !entry.flags.includes('DISABLED') && !entry.flags.includes('GONE');
}
