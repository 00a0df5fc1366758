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

/** `MAJOR.MINOR` of a release string (`6.12.95+deb12-amd64` is [6, 12]). */
function majorMinor(release: string | undefined): [number, number] | undefined {
  const m = release === undefined ? null : /^v?(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * The errno a tracefs write failed with, from the error_log reason, as `__trace_kprobe_create()`
 * in kernel/trace/trace_kprobe.c returns it. The message is logged where the write was refused,
 * and the same message comes from two places for some reasons:
 * - "Invalid probed address or symbol" (BAD_PROBE_ADDR): a malformed `+offset` is refused while
 *   parsing (EINVAL). A missing symbol is refused while parsing too from the release that checks
 *   the symbol first (`validate_probe_symbol`, 926fe783c8a6, v6.7; stable trees took it at
 *   different point releases): EINVAL; before that, `register_kretprobe()` refused it: ENOENT.
 * - "The symbol is not unique" (NON_UNIQ_SYMBOL): EADDRNOTAVAIL when b022f0c7e404 added the check,
 *   EINVAL through tracefs from 926fe783c8a6 on (perf_event_open keeps EADDRNOTAVAIL).
 * - "Failed to register probe event" (FAIL_REG_PROBE): whatever register returned other than
 *   ENOENT, EILSEQ, ENOMEM and EEXIST (a blacklisted symbol: EINVAL, observed): not one errno.
 * Undefined when the reason, or the release it needs, does not decide the errno.
 */
export function errnoForReason(reason: string, opts: { release?: string | undefined; word?: string | undefined } = {}): string | undefined {
  const r = reason.trim().toLowerCase();
  const v = majorMinor(opts.release);
  const from67 = v === undefined ? undefined : v[0] > 6 || (v[0] === 6 && v[1] >= 7);
  // Releases before 5.15 had neither change in any stable tree we know of.
  const before515 = v === undefined ? undefined : v[0] < 5 || (v[0] === 5 && v[1] < 15);
  if (r.startsWith('the symbol is not unique')) return from67 ? 'EINVAL' : undefined;
  if (r.startsWith('probe point is not an instruction boundary')) return 'EILSEQ';
  if (r.startsWith('invalid probed address or symbol')) {
    if (opts.word !== undefined && /\+/.test(opts.word)) return 'EINVAL';
    return from67 ? 'EINVAL' : before515 ? 'ENOENT' : undefined;
  }
  const einval = [
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
