import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';
import { baseSymbol } from './family.js';

/** One line of debugfs `kprobes/blacklist`: `0x%px-0x%px\t%ps`, `%ps` maybe followed by ` [mod]`. */
export interface BlacklistEntry {
  line: number;
  start: string;
  end: string;
  symbol: string;
  module?: string;
}

export interface BlacklistResult {
  entries: BlacklistEntry[];
  problems: LineProblem[];
}

/** Parse debugfs `kprobes/blacklist` text. */
export function parseBlacklist(text: string): BlacklistResult {
  const entries: BlacklistEntry[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const m = /^\s*0x([0-9a-fA-F]+)-0x([0-9a-fA-F]+)\s+(\S+)(?:\s+\[([A-Za-z0-9_-]+)\])?\s*$/.exec(line);
    if (!m) {
      problems.push(problem(no, '0xSTART-0xEND<TAB>SYMBOL [MOD]', line));
      continue;
    }
    const entry: BlacklistEntry = { line: no, start: (m[1] ?? '').toLowerCase(), end: (m[2] ?? '').toLowerCase(), symbol: m[3] ?? '' };
    if (m[4] !== undefined) entry.module = m[4];
    entries.push(entry);
  }
  return { entries, problems };
}

/**
 * The blacklist entry that covers `symbol`, if any. within_kprobe_blacklist() cuts a name at its
 * first `.`, so a clone is covered by its base symbol's entry (kernel-facts §10).
 */
export function blacklistEntryFor(entries: BlacklistEntry[], symbol: string): BlacklistEntry | undefined {
  const base = baseSymbol(symbol);
  return entries.find((e) => e.symbol === symbol || baseSymbol(e.symbol) === base);
}
