import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';

/** One entry of tracefs `error_log`: a header, the command, and a caret under the fault. */
export interface ErrorLogEntry {
  line: number;
  /** Seconds since boot as printed, e.g. `14.184300`. */
  timestamp: string;
  /** The subsystem that logged it, e.g. `trace_kprobe`. */
  subsystem: string;
  /** The message, e.g. `Invalid probed address or symbol`. */
  reason: string;
  command?: string;
  /** 0-based column of the caret inside `command`. */
  column?: number;
  /** The word of `command` the caret points at. */
  word?: string;
}

export interface ErrorLogResult {
  entries: ErrorLogEntry[];
  problems: LineProblem[];
}

/** `CMD_PREFIX` in kernel/trace/trace.c: the caret line is indented by its length plus the position. */
const CMD_PREFIX = '  Command: ';

/** Parse tracefs `error_log` text. */
export function parseErrorLog(text: string): ErrorLogResult {
  const entries: ErrorLogEntry[] = [];
  const problems: LineProblem[] = [];
  let current: ErrorLogEntry | undefined;
  let expect: 'header' | 'command' | 'caret' = 'header';
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const header = /^\[\s*([0-9]+\.[0-9]+)\]\s+(\S.*?): error: (.*)$/.exec(line);
    if (header) {
      current = { line: no, timestamp: header[1] ?? '', subsystem: header[2] ?? '', reason: (header[3] ?? '').trim() };
      entries.push(current);
      expect = 'command';
      continue;
    }
    if (current && expect === 'command' && line.startsWith(CMD_PREFIX)) {
      current.command = line.slice(CMD_PREFIX.length);
      expect = 'caret';
      continue;
    }
    const caret = /^( *)\^\s*$/.exec(line);
    if (current && expect === 'caret' && caret && current.command !== undefined) {
      const column = (caret[1] ?? '').length - CMD_PREFIX.length;
      if (column >= 0 && column <= current.command.length) {
        current.column = column;
        const word = /^\S*/.exec(current.command.slice(column))?.[0] ?? '';
        if (word !== '') current.word = word;
        expect = 'header';
        continue;
      }
    }
    problems.push(
      problem(no, expect === 'command' ? 'a "  Command: " line' : expect === 'caret' ? 'a caret line under the command' : 'an error header "[ seconds] subsystem: error: reason"', line),
    );
  }
  return { entries, problems };
}

/**
 * The errno a tracefs write failed with, from the error_log reason. Observed and source facts
 * (kernel-notes, kernel-facts §1): a missing symbol and a blacklisted one both fail with EINVAL;
 * an ambiguous name with EADDRNOTAVAIL. Undefined for a reason we cannot map.
 */
export function errnoForReason(reason: string): string | undefined {
  const r = reason.trim().toLowerCase();
  if (r.startsWith('the symbol is not unique')) return 'EADDRNOTAVAIL';
  if (r.startsWith('probe point is not an instruction boundary')) return 'EILSEQ';
  const einval = [
    'invalid probed address or symbol',
    'failed to register probe event',
    'invalid maxactive number',
    'maxactive is too big',
    'maxactive is not for kprobe',
    'retprobe address must be an function entry',
    'invalid group name',
    'invalid event name',
    'event name is too long',
    'group name is too long',
    'invalid fetch argument',
    'invalid $-variable specified',
    'invalid type name',
    '$retval is not available on probe',
    'invalid probe point',
    'bad maxactive',
  ];
  return einval.some((prefix) => r.startsWith(prefix)) ? 'EINVAL' : undefined;
}
