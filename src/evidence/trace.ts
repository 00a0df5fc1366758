import type { LineProblem } from '../errors.js';
import { shown } from '../errors.js';

/**
 * Kernel trace-buffer text (`trace`, `trace_pipe`) and `perf script` lines for kprobe entry
 * events and kretprobe return events. Facts: kernel-facts.md §7 (ftrace text: the caller's
 * return site comes FIRST, `(caller+off/size <- func)`), §8 (perf script uses the print fmt:
 * function address FIRST, `(funcaddr <- calleraddr)`), kernel-notes.md (6.1 prints `arg1=0x0`,
 * 6.12 prints `arg1=0`; the probe sits at `+0x0` on 6.1 and `+0x4` on 6.12).
 *
 * The scanner is hand-rolled (indexOf/charCodeAt): the ledger feeds it millions of lines.
 */

/** Where a line came from: the kernel's own text output, or `perf script`. */
export type TraceSource = 'ftrace' | 'perf';

/** One kprobe entry or kretprobe return record. */
export interface TraceRecord {
  kind: 'entry' | 'return';
  source: TraceSource;
  /** The event name as printed: `gate` in ftrace text, `probe:vfs_read__return` in perf script. */
  event: string;
  comm: string;
  /** The thread id (ftrace `comm-PID`, perf's tid column). */
  pid: number;
  /** Only when the line shows it (ftrace `(tgid)` column with options/record-tgid, perf `pid/tid`). */
  tgid?: number;
  cpu: number;
  /** The timestamp in nanoseconds (ftrace prints `seconds.microseconds`). */
  tsNs: number;
  /**
   * The probed function: a symbol without offset in ftrace text (`pipe_read`), a hex address in
   * perf script (`ffffffff811e6f30`).
   */
  func: string;
  /** Entry records only: the probe point's offset as printed, e.g. `+0x4/0x470` (6.12) or `+0x0/0x470` (6.1). */
  funcOffset?: string;
  /** Return records only: the return site, e.g. `vfs_read+0x338/0x370` (ftrace) or a hex address (perf). */
  caller?: string;
  /** Fetch args in print order, values as printed (`0x0` on 6.1, `0` on 6.12). */
  args: Record<string, string>;
}

/** A well-formed trace line that is not a probe record this parser was asked about. */
export interface TraceOther {
  kind: 'other';
  event: string;
  tsNs: number;
  pid: number;
  cpu: number;
}

/** `CPU:N [LOST M EVENTS]`: the ring buffer overwrote records; pairing across this point is unreliable. */
export interface TraceLost {
  kind: 'lost';
  cpu: number;
  count: number;
}

/** A line this parser does not understand (never silently read as zero). */
export interface TraceUnparsed {
  kind: 'problem';
  expected: string;
  got: string;
}

export type TraceLine = TraceRecord | TraceOther | TraceLost | TraceUnparsed;

export interface TraceLineOptions {
  /**
   * Names of the entry and return events (`gate_entry`, `gate`; `probe:vfs_read`,
   * `probe:vfs_read__return`). A group prefix on either side is ignored. When neither is given,
   * the body's shape decides: `(a <- b)` is a return, `(a)` an entry.
   */
  entryEvent?: string | undefined;
  returnEvent?: string | undefined;
}

const SPACE = 32;
const TAB = 9;
const DIGIT0 = 48;
const DIGIT9 = 57;
const HASH = 35;
const LBRACKET = 91;
const RBRACKET = 93;

function isDigit(c: number): boolean {
  return c >= DIGIT0 && c <= DIGIT9;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function allDigits(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (!isDigit(s.charCodeAt(i))) return false;
  return true;
}

/** Strip an optional `group/` or `group:` prefix so `kfix/gate`, `kfix:gate` and `gate` compare equal. */
export function bareEventName(name: string): string {
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const cut = Math.max(slash, colon);
  return cut >= 0 ? name.slice(cut + 1) : name;
}

/**
 * Convert a `seconds.fraction` stamp to integer nanoseconds without going through a float
 * (`3.995828` is not exact in binary). Accepts 1–9 fraction digits (ftrace prints 6, `perf
 * script --ns` prints 9). Returns -1 when the text is not such a stamp.
 */
export function stampToNs(s: string, from: number, to: number): number {
  let sec = 0;
  let i = from;
  let any = false;
  for (; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) break;
    sec = sec * 10 + (c - DIGIT0);
    any = true;
  }
  if (!any || i >= to || s.charCodeAt(i) !== 46 /* . */) return -1;
  i++;
  let frac = 0;
  let digits = 0;
  for (; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c) || digits === 9) return -1;
    frac = frac * 10 + (c - DIGIT0);
    digits++;
  }
  if (digits === 0) return -1;
  let scale = 1;
  for (let d = digits; d < 9; d++) scale *= 10;
  const ns = sec * 1e9 + frac * scale;
  return Number.isSafeInteger(ns) ? ns : -1;
}

function problem(expected: string, line: string): TraceUnparsed {
  return { kind: 'problem', expected, got: shown(line) };
}

const PREFIX_EXPECTED = '"comm-pid [cpu] flags seconds.micros: event: (...)" (ftrace) or "comm pid [cpu] seconds.micros: event: (...)" (perf script)';

/**
 * Parse one line. Returns null for lines that carry nothing (blank, `#` header comments).
 * The result is a record, another event, a lost-events marker, or a problem to report with
 * the line number — a line is never dropped without saying so.
 */
export function parseTraceLine(line: string, opts: TraceLineOptions = {}): TraceLine | null {
  let end = line.length;
  if (end > 0 && line.charCodeAt(end - 1) === 13 /* \r */) end--;
  let start = 0;
  while (start < end && isBlank(line.charCodeAt(start))) start++;
  if (start >= end) return null;
  const first = line.charCodeAt(start);
  if (first === HASH) return null;
  if (first === 67 /* C */ && line.startsWith('CPU:', start)) {
    const m = /^CPU:(\d+) \[LOST (\d+) EVENTS\]\s*$/.exec(line.slice(start, end));
    if (m) return { kind: 'lost', cpu: Number(m[1]), count: Number(m[2]) };
  }

  // The CPU column `[NNN]` anchors the prefix: the comm before it may contain spaces and dashes.
  let lb = line.indexOf('[', start);
  let rb = -1;
  while (lb >= 0 && lb < end) {
    rb = line.indexOf(']', lb + 1);
    if (rb > lb + 1 && allDigits(line, lb + 1, rb) && (lb === start || isBlank(line.charCodeAt(lb - 1)))) break;
    lb = line.indexOf('[', lb + 1);
    rb = -1;
  }
  if (lb < 0 || rb < 0) return problem(PREFIX_EXPECTED, line);
  const cpu = Number(line.slice(lb + 1, rb));

  // Who: ftrace `comm-pid` then an optional `(tgid)`; perf `comm pid` or `comm pid/tid`.
  let whoEnd = lb;
  while (whoEnd > start && isBlank(line.charCodeAt(whoEnd - 1))) whoEnd--;
  let tgid: number | undefined;
  if (whoEnd > start && line.charCodeAt(whoEnd - 1) === 41 /* ) */) {
    const lp = line.lastIndexOf('(', whoEnd - 1);
    if (lp > start) {
      const inner = line.slice(lp + 1, whoEnd - 1).trim();
      if (/^\d+$/.test(inner)) tgid = Number(inner);
      else if (inner !== '-------') return problem(PREFIX_EXPECTED, line);
      whoEnd = lp;
      while (whoEnd > start && isBlank(line.charCodeAt(whoEnd - 1))) whoEnd--;
    }
  }
  let tokStart = whoEnd;
  while (tokStart > start && !isBlank(line.charCodeAt(tokStart - 1))) tokStart--;
  let source: TraceSource;
  let comm: string;
  let pid: number;
  const slash = line.indexOf('/', tokStart);
  if (tokStart > start && allDigits(line, tokStart, whoEnd)) {
    source = 'perf';
    pid = Number(line.slice(tokStart, whoEnd));
    comm = line.slice(start, tokStart).trim();
  } else if (tokStart > start && slash > tokStart && slash < whoEnd && allDigits(line, tokStart, slash) && allDigits(line, slash + 1, whoEnd)) {
    source = 'perf';
    tgid = Number(line.slice(tokStart, slash));
    pid = Number(line.slice(slash + 1, whoEnd));
    comm = line.slice(start, tokStart).trim();
  } else {
    const dash = line.lastIndexOf('-', whoEnd - 1);
    if (dash < start || !allDigits(line, dash + 1, whoEnd)) return problem(PREFIX_EXPECTED, line);
    source = 'ftrace';
    pid = Number(line.slice(dash + 1, whoEnd));
    comm = line.slice(start, dash);
  }

  // After the CPU: optional irq-info flags (ftrace), then `seconds.fraction:`.
  let p = rb + 1;
  let tsNs = -1;
  for (let tokens = 0; tokens < 2 && tsNs < 0; tokens++) {
    while (p < end && isBlank(line.charCodeAt(p))) p++;
    let q = p;
    while (q < end && !isBlank(line.charCodeAt(q))) q++;
    if (q > p && line.charCodeAt(q - 1) === 58 /* : */) tsNs = stampToNs(line, p, q - 1);
    p = q;
  }
  if (tsNs < 0) return problem('a timestamp "seconds.fraction:" after the CPU column', line);

  while (p < end && isBlank(line.charCodeAt(p))) p++;
  const evEnd = line.indexOf(': ', p);
  let event: string;
  let bodyStart: number;
  if (evEnd < 0 || evEnd >= end) {
    // An event with no payload at all ends in a bare colon.
    if (end > p && line.charCodeAt(end - 1) === 58) {
      event = line.slice(p, end - 1);
      return { kind: 'other', event, tsNs, pid, cpu };
    }
    return problem('"event: " after the timestamp', line);
  } else {
    event = line.slice(p, evEnd);
    bodyStart = evEnd + 2;
  }
  if (event === '') return problem('an event name after the timestamp', line);

  let wanted: 'entry' | 'return' | undefined;
  if (opts.entryEvent !== undefined || opts.returnEvent !== undefined) {
    const bare = bareEventName(event);
    if (opts.returnEvent !== undefined && (event === opts.returnEvent || bare === bareEventName(opts.returnEvent))) wanted = 'return';
    else if (opts.entryEvent !== undefined && (event === opts.entryEvent || bare === bareEventName(opts.entryEvent))) wanted = 'entry';
    else return { kind: 'other', event, tsNs, pid, cpu };
  }

  // Body: `(...)` then fetch args.
  while (bodyStart < end && isBlank(line.charCodeAt(bodyStart))) bodyStart++;
  if (line.charCodeAt(bodyStart) !== 40 /* ( */) {
    if (wanted === undefined) return { kind: 'other', event, tsNs, pid, cpu };
    return problem(`a probe body "(...)" after "${event}: "`, line);
  }
  const close = line.indexOf(')', bodyStart + 1);
  if (close < 0 || close >= end) return problem('a closing ")" (the line may be truncated)', line);
  const arrow = line.indexOf(' <- ', bodyStart + 1);
  const isReturn = arrow >= 0 && arrow < close;
  if (wanted === 'entry' && isReturn) return problem(`an entry record "(func+off/size)" for ${event}`, line);
  if (wanted === 'return' && !isReturn) return problem(`a return record "(caller+off/size <- func)" for ${event}`, line);

  const args = parseFetchArgs(line, close + 1, end);
  if (args === undefined) return problem('fetch args as name=value', line);
  let func: string;
  let funcOffset: string | undefined;
  let caller: string | undefined;
  if (isReturn) {
    const left = line.slice(bodyStart + 1, arrow).trim();
    const right = line.slice(arrow + 4, close).trim();
    if (left === '' || right === '') return problem('"(caller <- func)" with both sides', line);
    if (source === 'ftrace') {
      caller = left;
      func = right;
    } else {
      func = left;
      caller = right;
    }
  } else {
    const inner = line.slice(bodyStart + 1, close).trim();
    if (inner === '') return problem('"(func+off/size)"', line);
    const plus = inner.indexOf('+');
    if (plus > 0) {
      func = inner.slice(0, plus);
      funcOffset = inner.slice(plus);
    } else {
      func = inner;
    }
  }
  const rec: TraceRecord = { kind: isReturn ? 'return' : 'entry', source, event, comm, pid, cpu, tsNs, func, args };
  if (tgid !== undefined) rec.tgid = tgid;
  if (funcOffset !== undefined) rec.funcOffset = funcOffset;
  if (caller !== undefined) rec.caller = caller;
  return rec;
}

/** `name=value` pairs separated by blanks; a value may be a double-quoted string. Undefined when malformed. */
function parseFetchArgs(line: string, from: number, to: number): Record<string, string> | undefined {
  const args: Record<string, string> = {};
  let i = from;
  while (i < to) {
    while (i < to && isBlank(line.charCodeAt(i))) i++;
    if (i >= to) break;
    const eq = line.indexOf('=', i);
    if (eq < 0 || eq >= to || eq === i) return undefined;
    const name = line.slice(i, eq);
    if (name.indexOf(' ') >= 0) return undefined;
    let j = eq + 1;
    let value: string;
    if (line.charCodeAt(j) === 34 /* " */) {
      const q = line.indexOf('"', j + 1);
      if (q < 0 || q >= to) return undefined;
      value = line.slice(j + 1, q);
      j = q + 1;
    } else {
      while (j < to && !isBlank(line.charCodeAt(j))) j++;
      value = line.slice(eq + 1, j);
    }
    args[name] = value;
    i = j;
  }
  return args;
}

/**
 * A fetch-arg value as a signed 64-bit integer: `0x…` hex (6.1 style, and how untyped values
 * print on 64-bit, so `0xfffffffffffffff5` is -11) or decimal (`0`, `-11`). Undefined otherwise.
 */
export function fetchArgInteger(value: string): bigint | undefined {
  if (/^0[xX][0-9a-fA-F]{1,16}$/.test(value)) return BigInt.asIntN(64, BigInt(value));
  if (/^-?\d{1,20}$/.test(value)) return BigInt.asIntN(64, BigInt(value));
  return undefined;
}

/** Entry and return counts of a whole trace text, with every problem line numbered. */
export interface TraceTextSummary {
  records: TraceRecord[];
  other: number;
  lost: TraceLost[];
  problems: LineProblem[];
}

/**
 * Parse a whole (small) trace text. For large traces, stream lines into `parseTraceLine`
 * instead (src/ledger/ does); this keeps every record in memory.
 */
export function parseTraceText(text: string, opts: TraceLineOptions = {}): TraceTextSummary {
  const out: TraceTextSummary = { records: [], other: 0, lost: [], problems: [] };
  let no = 0;
  let from = 0;
  while (from < text.length) {
    let nl = text.indexOf('\n', from);
    if (nl < 0) nl = text.length;
    no++;
    const r = parseTraceLine(text.slice(from, nl), opts);
    from = nl + 1;
    if (r === null) continue;
    switch (r.kind) {
      case 'entry':
      case 'return':
        out.records.push(r);
        break;
      case 'other':
        out.other++;
        break;
      case 'lost':
        out.lost.push(r);
        break;
      case 'problem':
        out.problems.push({ line: no, expected: r.expected, got: r.got });
        break;
    }
  }
  return out;
}
