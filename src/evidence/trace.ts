import type { LineProblem } from '../errors.js';
import { shown } from '../errors.js';

/**
 * Kernel trace-buffer text (`trace`, `trace_pipe`) and `perf script` lines for kprobe entry
 * events and kretprobe return events. Facts: kernel-facts.md §7 (ftrace text: the caller's
 * return site comes FIRST, `(caller+off/size <- func)`), §8 (perf script uses the print fmt:
 * function address FIRST, `(funcaddr <- calleraddr)`), kernel-notes.md (6.1 prints `arg1=0x0`,
 * 6.12 prints `arg1=0`; the probe sits at `+0x0` on 6.1 and `+0x4` on 6.12).
 *
 * The scanner is hand-rolled over bytes: the ledger feeds it millions of lines straight from
 * the read buffer, without decoding them into strings.
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

/**
 * `CPU:N [LOST M EVENTS]` (trace-cmd report: `CPU:N [M EVENTS DROPPED]`): the ring buffer overwrote records; pairing across this point is
 * unreliable. `CPU:N [LOST EVENTS]`, with no count, is what the `trace` file's non-consuming
 * iterator prints when the writer overtook it (v6.12 kernel/trace/trace.c print_trace_line): some
 * records were lost, how many is unknown (`count` undefined).
 */
export interface TraceLost {
  kind: 'lost';
  cpu: number;
  count: number | undefined;
}

/**
 * The `trace` file's header, `# entries-in-buffer/entries-written: A/B   #P:N` (v6.12
 * kernel/trace/trace.c print_event_info): A events in the buffer, B = A + the events the ring
 * buffer overwrote since it was last cleared (get_total_entries_cpu adds ring_buffer_overrun_cpu),
 * N the CPUs online. B - A records of this buffer were lost before the read began.
 */
export interface TraceHeader {
  kind: 'header';
  inBuffer: number;
  written: number;
  onlineCpus: number;
}

/** A line this parser does not understand (never silently read as zero). */
export interface TraceUnparsed {
  kind: 'problem';
  expected: string;
  got: string;
}

export type TraceLine = TraceRecord | TraceOther | TraceLost | TraceHeader | TraceUnparsed;

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
/** trace-cmd report's header lines, as bytes (scanTraceBytes). */
const VERSION_LINE = Buffer.from('version = ', 'latin1');
const CPUS_LINE = Buffer.from('cpus=', 'latin1');
/** Whether b[start..end) begins with `prefix` and the rest is digits. */
function prefixThenDigits(b: Uint8Array, start: number, end: number, prefix: Uint8Array): boolean {
  if (end - start <= prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (b[start + i] !== prefix[i]) return false;
  for (let i = start + prefix.length; i < end; i++) if (b[i]! < 48 || b[i]! > 57) return false;
  return true;
}

function isDigit(c: number): boolean {
  return c >= DIGIT0 && c <= DIGIT9;
}

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

function allDigits(b: Uint8Array, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (!isDigit(b[i]!)) return false;
  return true;
}

/** Strip an optional `group/` or `group:` prefix so `kfix/gate`, `kfix:gate` and `gate` compare equal. */
export function bareEventName(name: string): string {
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  const cut = Math.max(slash, colon);
  return cut >= 0 ? name.slice(cut + 1) : name;
}

/** The unit of the last stamp read by stampBytes, in ns (1000 for 6 fraction digits). */
let stampUnitNs = 1;
/** The last stamp read by stampBytes: whole seconds and nanoseconds apart, both exact. */
let stampSec = 0;
let stampFracNs = 0;

/**
 * The most seconds a kernel stamp can show: a u64 of nanoseconds (trace_clock local, mono and
 * boot all are), about 584 years.
 */
export const MAX_STAMP_SEC = 18_446_744_073;

function stampBytes(b: Uint8Array, from: number, to: number): number {
  let sec = 0;
  let i = from;
  let any = false;
  for (; i < to; i++) {
    const c = b[i]!;
    if (!isDigit(c)) break;
    sec = sec * 10 + (c - DIGIT0);
    any = true;
  }
  if (!any || i >= to || b[i] !== 46 /* . */ || sec > MAX_STAMP_SEC) return -1;
  i++;
  let frac = 0;
  let digits = 0;
  for (; i < to; i++) {
    const c = b[i]!;
    if (!isDigit(c) || digits === 9) return -1;
    frac = frac * 10 + (c - DIGIT0);
    digits++;
  }
  if (digits === 0) return -1;
  return stampOf(sec, frac, digits);
}

/** A stamp of `sec` seconds and `frac` in `digits` (1-9) fraction digits: into the stamp state, and its ns. */
function stampOf(sec: number, frac: number, digits: number): number {
  let scale = 1;
  for (let d = digits; d < 9; d++) scale *= 10;
  stampUnitNs = scale;
  stampSec = sec;
  stampFracNs = frac * scale;
  // Past 2^53 ns (about 104 days of uptime) this is the nearest double: the exact stamp is
  // stampSec and stampFracNs, which the ledger reads (src/ledger/clock.ts).
  return sec * 1e9 + stampFracNs;
}

/**
 * Convert a `seconds.fraction` stamp to integer nanoseconds without going through a float
 * (`3.995828` is not exact in binary). Accepts 1–9 fraction digits (ftrace prints 6, `perf
 * script --ns` prints 9). Returns -1 when the text is not such a stamp; past 2^53 ns the
 * nearest double (stampParts is exact).
 */
export function stampToNs(text: string): number {
  const b = Buffer.from(text, 'latin1');
  return stampBytes(b, 0, b.length);
}

/** A `seconds.fraction` stamp as whole seconds and nanoseconds, both exact; undefined when not a stamp. */
export function stampParts(text: string): { sec: number; ns: number; unitNs: number } | undefined {
  const b = Buffer.from(text, 'latin1');
  return stampBytes(b, 0, b.length) < 0 ? undefined : { sec: stampSec, ns: stampFracNs, unitNs: stampUnitNs };
}

function problem(expected: string, line: string): TraceUnparsed {
  return { kind: 'problem', expected, got: shown(line) };
}

const PREFIX_EXPECTED = '"comm-pid [cpu] flags seconds.micros: event: (...)" (ftrace) or "comm pid [cpu] seconds.micros: event: (...)" (perf script)';

/** What `scanTraceBytes` found; the numbers and positions are in `traceScan`. */
export const SCAN_SKIP = 0;
export const SCAN_ENTRY = 1;
export const SCAN_RETURN = 2;
export const SCAN_OTHER = 3;
export const SCAN_LOST = 4;
export const SCAN_PROBLEM = 5;
/** The `trace` file's header (TraceHeader): its figures in traceScan.inBuffer, .written, .cpu (CPUs online). */
export const SCAN_HEADER = 6;

/**
 * The scanner's output for the last line, reused between calls so that the hot path allocates
 * nothing: numbers, and byte positions into the buffer for the strings a caller may want.
 */
export interface TraceScan {
  source: TraceSource;
  pid: number;
  /** -1 when the line shows none. */
  tgid: number;
  cpu: number;
  /** The stamp in ns: past 2^53 (about 104 days of uptime) the nearest double; `sec` and `fracNs` are exact. */
  tsNs: number;
  /** The stamp's whole seconds and its nanoseconds, apart (exact over the whole u64 range). */
  sec: number;
  fracNs: number;
  /** The stamp's unit in ns: the record happened in [tsNs, tsNs + resNs) (1000 for ftrace's microseconds). */
  resNs: number;
  /** SCAN_LOST: the number of lost events, -1 when the marker gives none (`[LOST EVENTS]`). */
  lost: number;
  /** SCAN_HEADER: entries in the buffer, and entries written (in the buffer + overwritten). */
  inBuffer: number;
  written: number;
  commStart: number;
  commEnd: number;
  evStart: number;
  evEnd: number;
  bodyStart: number;
  arrow: number;
  close: number;
  end: number;
  /** SCAN_PROBLEM: what was expected. */
  expected: string;
}

/** The shared scan state (valid until the next scan). */
export const traceScan: TraceScan = {
  source: 'ftrace', pid: 0, tgid: -1, cpu: 0, tsNs: 0, sec: 0, fracNs: 0, resNs: 1, lost: 0, inBuffer: 0, written: 0,
  commStart: 0, commEnd: 0, evStart: 0, evEnd: 0, bodyStart: 0, arrow: -1, close: 0, end: 0, expected: '',
};

function digitsValue(b: Uint8Array, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) v = v * 10 + (b[i]! - DIGIT0);
  return v;
}

/** First index of byte `c` in b[from, to), or -1. */
function find(b: Uint8Array, c: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (b[i] === c) return i;
  return -1;
}

function findLast(b: Uint8Array, c: number, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (b[i] === c) return i;
  return -1;
}

function bytesEqual(b: Uint8Array, from: number, to: number, want: Uint8Array): boolean {
  if (to - from !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (b[from + i] !== want[i]) return false;
  return true;
}

interface EventNames {
  opts: TraceLineOptions;
  any: boolean;
  entry: Uint8Array | undefined;
  entryBare: Uint8Array | undefined;
  ret: Uint8Array | undefined;
  retBare: Uint8Array | undefined;
}
let compiled: EventNames = { opts: {}, any: false, entry: undefined, entryBare: undefined, ret: undefined, retBare: undefined };

function compileEvents(opts: TraceLineOptions): EventNames {
  if (compiled.opts === opts) return compiled;
  const enc = (s: string | undefined): Uint8Array | undefined => (s === undefined ? undefined : Buffer.from(s, 'utf8'));
  const entry = opts.entryEvent;
  const ret = opts.returnEvent;
  compiled = {
    opts,
    any: entry !== undefined || ret !== undefined,
    entry: enc(entry),
    entryBare: enc(entry === undefined ? undefined : bareEventName(entry)),
    ret: enc(ret),
    retBare: enc(ret === undefined ? undefined : bareEventName(ret)),
  };
  return compiled;
}

/** Does b[from, to) name the event, with or without a group prefix on either side? */
function eventIs(b: Uint8Array, from: number, to: number, full: Uint8Array | undefined, bare: Uint8Array | undefined): boolean {
  if (full === undefined || bare === undefined) return false;
  if (bytesEqual(b, from, to, full)) return true;
  let cut = from;
  for (let i = to - 1; i >= from; i--) {
    const c = b[i];
    if (c === 47 /* / */ || c === 58 /* : */) {
      cut = i + 1;
      break;
    }
  }
  return bytesEqual(b, cut, to, bare);
}

function scanProblem(expected: string): number {
  traceScan.expected = expected;
  return SCAN_PROBLEM;
}

/**
 * The kernel's marker, or trace-cmd report's for the same ring-buffer loss (trace-cmd.c
 * show_data: "CPU:%d [%lld EVENTS DROPPED]", "CPU:%d [EVENTS DROPPED]" when the count is
 * unknown), on a line of its own before the record that followed the loss.
 */
const LOST_RE = /^CPU:(\d+) \[(?:LOST (?:(\d+) )?EVENTS|(?:(\d+) )?EVENTS DROPPED)\]\s*$/;
const HEADER_RE = /^#\s*entries-in-buffer\/entries-written:\s*(\d+)\/(\d+)\s+#P:(\d+)\s*$/;

/** Why prefixAt failed. */
let prefixFailure = '';

/** prefixAt's failure: why, and -1. */
function fail(expected: string): number {
  prefixFailure = expected;
  return -1;
}

/**
 * The line's prefix with its CPU column at b[lb..rb]: who (`comm-pid`, an optional `(tgid)`, or
 * perf's `comm pid` / `comm pid/tid`) before it, flags and the stamp after it, into traceScan.
 * Returns the position after the stamp's colon, or -1 (prefixFailure says what was expected).
 */
function prefixAt(b: Uint8Array, start: number, lb: number, rb: number, end: number): number {
  const st = traceScan;
  st.cpu = digitsValue(b, lb + 1, rb);

  // Who: ftrace `comm-pid` then an optional `(tgid)`; perf `comm pid` or `comm pid/tid`.
  let whoEnd = lb;
  while (whoEnd > start && isBlank(b[whoEnd - 1]!)) whoEnd--;
  st.tgid = -1;
  if (whoEnd > start && b[whoEnd - 1] === 41 /* ) */) {
    const lp = findLast(b, 40 /* ( */, start + 1, whoEnd - 1);
    if (lp > start) {
      let x = lp + 1;
      let y = whoEnd - 1;
      while (x < y && isBlank(b[x]!)) x++;
      while (y > x && isBlank(b[y - 1]!)) y--;
      if (allDigits(b, x, y) && y - x < 16) st.tgid = digitsValue(b, x, y);
      else if (!(y - x === 7 && b[x] === 45 && b[x + 6] === 45)) return fail(PREFIX_EXPECTED);
      whoEnd = lp;
      while (whoEnd > start && isBlank(b[whoEnd - 1]!)) whoEnd--;
    }
  }
  // Most often ftrace's `comm-PID`: digits back from whoEnd with a dash before them. Neither perf
  // form can end so (its last token is digits, or digits/digits), and the dash is the last one,
  // so this is where the checks below come to, without scanning the task name back and forth.
  let d = whoEnd;
  while (d > start && isDigit(b[d - 1]!)) d--;
  if (d < whoEnd && d > start && b[d - 1] === 45 /* - */ && whoEnd - d < 16) {
    st.source = 'ftrace';
    st.pid = digitsValue(b, d, whoEnd);
    st.commStart = start;
    st.commEnd = d - 1;
    return stampAfter(b, rb, end);
  }
  let tokStart = whoEnd;
  while (tokStart > start && !isBlank(b[tokStart - 1]!)) tokStart--;
  if (tokStart > start && whoEnd - tokStart < 16 && allDigits(b, tokStart, whoEnd)) {
    st.source = 'perf';
    st.pid = digitsValue(b, tokStart, whoEnd);
    st.commStart = start;
    st.commEnd = tokStart;
  } else {
    const slash = tokStart > start ? find(b, 47 /* / */, tokStart, whoEnd) : -1;
    if (slash > tokStart && slash - tokStart < 16 && whoEnd - slash < 17 && allDigits(b, tokStart, slash) && allDigits(b, slash + 1, whoEnd)) {
      st.source = 'perf';
      st.tgid = digitsValue(b, tokStart, slash);
      st.pid = digitsValue(b, slash + 1, whoEnd);
      st.commStart = start;
      st.commEnd = tokStart;
    } else {
      const dash = findLast(b, 45 /* - */, start, whoEnd);
      if (dash < start || whoEnd - dash > 16 || !allDigits(b, dash + 1, whoEnd)) return fail(PREFIX_EXPECTED);
      st.source = 'ftrace';
      st.pid = digitsValue(b, dash + 1, whoEnd);
      st.commStart = start;
      st.commEnd = dash;
    }
  }
  return stampAfter(b, rb, end);
}

/** After the CPU column ending at b[rb]: optional irq-info flags (ftrace), then `seconds.fraction:`, into traceScan. The position after its colon, or -1. */
function stampAfter(b: Uint8Array, rb: number, end: number): number {
  const st = traceScan;
  let p = rb + 1;
  let tsNs = -1;
  for (let tokens = 0; tokens < 2 && tsNs < 0; tokens++) {
    while (p < end && isBlank(b[p]!)) p++;
    // The common token first, read in one pass: digits, '.', 1-9 digits, ':' that ends the token,
    // which is what stampBytes accepts of such a token. Anything else is read as below.
    let q = p;
    let sec = 0;
    let c = 0;
    while (q < end && (c = b[q]!) >= DIGIT0 && c <= DIGIT9) {
      sec = sec * 10 + (c - DIGIT0);
      q++;
    }
    if (q > p && c === 46 /* . */ && q < end && sec <= MAX_STAMP_SEC) {
      let r = q + 1;
      let frac = 0;
      while (r < end && r - q <= 9 && (c = b[r]!) >= DIGIT0 && c <= DIGIT9) {
        frac = frac * 10 + (c - DIGIT0);
        r++;
      }
      if (r > q + 1 && r < end && b[r] === 58 /* : */ && (r + 1 === end || isBlank(b[r + 1]!))) {
        tsNs = stampOf(sec, frac, r - q - 1);
        p = r + 1;
        break;
      }
    }
    q = p;
    while (q < end && !isBlank(b[q]!)) q++;
    if (q > p && b[q - 1] === 58 /* : */) tsNs = stampBytes(b, p, q - 1);
    p = q;
  }
  if (tsNs < 0) return fail('a timestamp "seconds.fraction:" after the CPU column');
  st.tsNs = tsNs;
  st.sec = stampSec;
  st.fracNs = stampFracNs;
  st.resNs = stampUnitNs;
  return p;
}

/**
 * Scan one line, given as bytes b[start, end) (no newline), without building strings: returns
 * SCAN_* and fills `traceScan`. The ledger's hot path over millions of lines; `parseTraceLine`
 * builds a record from the same scan, so there is one parser.
 */
export function scanTraceBytes(b: Uint8Array, start: number, end: number, opts: TraceLineOptions = {}): number {
  const st = traceScan;
  if (end > start && b[end - 1] === 13 /* \r */) end--;
  while (start < end && isBlank(b[start]!)) start++;
  if (start >= end) return SCAN_SKIP;
  const first = b[start]!;
  if (first === HASH) {
    // `# entries-in-buffer/...`: the one header line that carries figures (the others are legend).
    if (b[start + 2] !== 101 /* e */ || end - start > 120) return SCAN_SKIP;
    const m = HEADER_RE.exec(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
    if (!m) return SCAN_SKIP;
    st.inBuffer = Number(m[1]);
    st.written = Number(m[2]);
    st.cpu = Number(m[3]);
    return SCAN_HEADER;
  }
  // trace-cmd report's header ("version = 6", "cpus=2"): its own lines, no record.
  if ((first === 118 /* v */ && prefixThenDigits(b, start, end, VERSION_LINE)) || (first === 99 /* c */ && prefixThenDigits(b, start, end, CPUS_LINE))) return SCAN_SKIP;
  if (first === 67 /* C */ && b[start + 1] === 80 && b[start + 2] === 85 && b[start + 3] === 58) {
    const m = LOST_RE.exec(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
    if (m) {
      st.cpu = Number(m[1]);
      const count = m[2] ?? m[3];
      st.lost = count === undefined ? -1 : Number(count);
      return SCAN_LOST;
    }
  }
  st.end = end;

  // The CPU column `[NNN]` anchors the prefix, as trace-cmd reads it: the task name before it (up
  // to 15 bytes) may hold spaces, dashes and brackets, even a `[N]` of its own. So each `[digits]`
  // after a blank is tried from the left, and the first that the fixed parts fit (`-PID` or a
  // perf pid before it, an optional `(TGID)`; flags and `seconds.fraction:` after it) is the column.
  let p = -1;
  let failed = '';
  // Left as soon as a column fits: a loop condition on p would first look for another `[` over
  // the rest of the line (a fifth of the scan's time, for a result never used).
  for (let lb = find(b, 91 /* [ */, start, end); lb >= 0; lb = find(b, 91, lb + 1, end)) {
    const rb = find(b, 93 /* ] */, lb + 1, Math.min(end, lb + 8));
    if (rb < 0 || rb === lb + 1 || !allDigits(b, lb + 1, rb) || (lb !== start && !isBlank(b[lb - 1]!))) continue;
    p = prefixAt(b, start, lb, rb, end);
    if (p >= 0) break;
    if (failed === '') failed = prefixFailure;
  }
  if (p < 0) return scanProblem(failed || PREFIX_EXPECTED);

  while (p < end && isBlank(b[p]!)) p++;
  st.evStart = p;
  let evEnd = -1;
  for (let i = p; i + 1 < end; i++) {
    if (b[i] === 58 && b[i + 1] === SPACE) {
      evEnd = i;
      break;
    }
  }
  if (evEnd < 0) {
    // An event with no payload at all ends in a bare colon.
    if (end > p + 1 && b[end - 1] === 58) {
      st.evEnd = end - 1;
      return SCAN_OTHER;
    }
    return scanProblem('"event: " after the timestamp');
  }
  if (evEnd === p) return scanProblem('an event name after the timestamp');
  st.evEnd = evEnd;
  let bodyStart = evEnd + 2;

  const names = compileEvents(opts);
  let wanted = 0;
  if (names.any) {
    if (eventIs(b, p, evEnd, names.ret, names.retBare)) wanted = SCAN_RETURN;
    else if (eventIs(b, p, evEnd, names.entry, names.entryBare)) wanted = SCAN_ENTRY;
    else return SCAN_OTHER;
  }

  // Body: `(...)` then fetch args.
  while (bodyStart < end && isBlank(b[bodyStart]!)) bodyStart++;
  st.bodyStart = bodyStart;
  if (b[bodyStart] !== 40 /* ( */) {
    if (wanted === 0) return SCAN_OTHER;
    return scanProblem('a probe body "(...)" after the event name');
  }
  let close = -1;
  let arrow = -1;
  for (let i = bodyStart + 1; i < end; i++) {
    const c = b[i];
    if (c === 41 /* ) */) {
      close = i;
      break;
    }
    if (c === 60 /* < */ && arrow < 0 && b[i + 1] === 45 && b[i - 1] === SPACE && b[i + 2] === SPACE) arrow = i - 1;
  }
  if (close < 0) return scanProblem('a closing ")" (the line may be truncated)');
  st.close = close;
  st.arrow = arrow;
  const kind = arrow >= 0 ? SCAN_RETURN : SCAN_ENTRY;
  if (wanted === SCAN_ENTRY && kind === SCAN_RETURN) return scanProblem('an entry record "(func+off/size)" for the entry event');
  if (wanted === SCAN_RETURN && kind === SCAN_ENTRY) return scanProblem('a return record "(caller+off/size <- func)" for the return event');
  // What parseTraceLine would refuse is refused here, so that the ledger's scan and the parser
  // agree on every line (a property test and `npm run fuzz` compare them).
  if (kind === SCAN_RETURN) {
    if (!hasNonBlank(b, bodyStart + 1, arrow) || !hasNonBlank(b, arrow + 4, close)) return scanProblem('"(caller <- func)" with both sides');
  } else if (!hasNonBlank(b, bodyStart + 1, close)) return scanProblem('"(func+off/size)"');
  if (!fetchArgsOk(b, close + 1, end)) return scanProblem('fetch args as name=value');
  return kind;
}

function hasNonBlank(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isBlank(b[i]!)) return true;
  return false;
}

/**
 * Fetch args as parseFetchArgs reads them: `name=value` pairs apart by blanks, a name without a
 * space, a value up to the next blank or in double quotes (closed). The syntax only, over bytes.
 */
function fetchArgsOk(b: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    while (i < to && isBlank(b[i]!)) i++;
    if (i >= to) return true;
    const eq = find(b, 61 /* = */, i, to);
    if (eq < 0 || eq === i || find(b, SPACE, i, eq) >= 0) return false;
    let j = eq + 1;
    if (j < to && b[j] === 34 /* " */) {
      const q = find(b, 34, j + 1, to);
      if (q < 0) return false;
      j = q + 1;
    } else {
      while (j < to && !isBlank(b[j]!)) j++;
    }
    i = j;
  }
  return true;
}

/**
 * Parse one line. Returns null for lines that carry nothing (blank, `#` header comments).
 * The result is a record, another event, a lost-events marker, or a problem to report with
 * the line number — a line is never dropped without saying so.
 */
export function parseTraceLine(line: string, opts: TraceLineOptions = {}): TraceLine | null {
  const b = Buffer.from(line, 'utf8');
  const k = scanTraceBytes(b, 0, b.length, opts);
  const st = traceScan;
  const text = (from: number, to: number): string => b.toString('utf8', from, to);
  switch (k) {
    case SCAN_SKIP:
      return null;
    case SCAN_LOST:
      return { kind: 'lost', cpu: st.cpu, count: st.lost < 0 ? undefined : st.lost };
    case SCAN_HEADER:
      return { kind: 'header', inBuffer: st.inBuffer, written: st.written, onlineCpus: st.cpu };
    case SCAN_PROBLEM:
      return problem(st.expected, line);
    case SCAN_OTHER:
      return { kind: 'other', event: text(st.evStart, st.evEnd), tsNs: st.tsNs, pid: st.pid, cpu: st.cpu };
  }
  const { source, pid, cpu, tsNs, bodyStart, arrow, close, end } = st;
  const tgid = st.tgid;
  const event = text(st.evStart, st.evEnd);
  const comm = source === 'perf' ? text(st.commStart, st.commEnd).trim() : text(st.commStart, st.commEnd);
  const argText = text(close + 1, end);
  const args = parseFetchArgs(argText, 0, argText.length);
  if (args === undefined) return problem('fetch args as name=value', line);
  let func: string;
  let funcOffset: string | undefined;
  let caller: string | undefined;
  if (k === SCAN_RETURN) {
    const left = blankTrim(text(bodyStart + 1, arrow));
    const right = blankTrim(text(arrow + 4, close));
    if (left === '' || right === '') return problem('"(caller <- func)" with both sides', line);
    if (source === 'ftrace') {
      caller = left;
      func = right;
    } else {
      func = left;
      caller = right;
    }
  } else {
    const inner = blankTrim(text(bodyStart + 1, close));
    const plus = inner.indexOf('+');
    if (plus > 0) {
      func = inner.slice(0, plus);
      funcOffset = inner.slice(plus);
    } else {
      func = inner;
    }
  }
  const rec: TraceRecord = { kind: k === SCAN_RETURN ? 'return' : 'entry', source, event, comm, pid, cpu, tsNs, func, args };
  if (tgid >= 0) rec.tgid = tgid;
  if (funcOffset !== undefined) rec.funcOffset = funcOffset;
  if (caller !== undefined) rec.caller = caller;
  return rec;
}

/** Without the blanks (space, tab) at either end: the scanner's notion of blank, not String.trim's. */
function blankTrim(t: string): string {
  let a = 0;
  let z = t.length;
  while (a < z && isBlank(t.charCodeAt(a))) a++;
  while (z > a && isBlank(t.charCodeAt(z - 1))) z--;
  return t.slice(a, z);
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
  /** The `trace` file's header lines (one per read of the file). */
  headers: TraceHeader[];
  problems: LineProblem[];
}

/** What a trace text shows of the records its ring buffer lost: the one reading of markers and header. */
export interface TraceLoss {
  /** `[LOST N EVENTS]` markers, and how many of them (`[LOST EVENTS]`) give no count. */
  markers: number;
  countless: number;
  /** The counts the markers give, summed. */
  marked: number;
  /** The most the header of a read showed overwritten (entries written - entries in the buffer); undefined without a header. */
  overwritten: number | undefined;
}

/** No loss seen yet: the start of a TraceLoss a reader adds to (addTraceLoss). */
export const noTraceLoss = (): TraceLoss => ({ markers: 0, countless: 0, marked: 0, overwritten: undefined });

/** Add one marker or header line to `loss`. */
export function addTraceLoss(loss: TraceLoss, line: TraceLost | TraceHeader): void {
  if (line.kind === 'header') {
    loss.overwritten = Math.max(loss.overwritten ?? 0, Math.max(0, line.written - line.inBuffer));
    return;
  }
  loss.markers++;
  if (line.count === undefined) loss.countless++;
  else loss.marked += line.count;
}

/**
 * The records the buffer lost, as the ledger's lost-events fact: unknown when a marker gives no
 * count (the writer overtook the read: any number may be gone, also after the header was printed);
 * else the larger of the marked counts and the header's overwritten events. Both count the same
 * ring buffer's overruns (a consuming read's markers report the overruns since the last read, which
 * the header's total since the buffer was cleared includes), so they are not added.
 */
export function lostEventsOf(loss: TraceLoss): number | undefined {
  if (loss.countless > 0) return undefined;
  return Math.max(loss.marked, loss.overwritten ?? 0);
}

/**
 * Parse a whole (small) trace text. For large traces, stream lines into `parseTraceLine`
 * instead (src/ledger/ does); this keeps every record in memory.
 */
export function parseTraceText(text: string, opts: TraceLineOptions = {}): TraceTextSummary {
  const out: TraceTextSummary = { records: [], other: 0, lost: [], headers: [], problems: [] };
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
      case 'header':
        out.headers.push(r);
        break;
      case 'problem':
        out.problems.push({ line: no, expected: r.expected, got: r.got });
        break;
    }
  }
  return out;
}
