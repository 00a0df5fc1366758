import { closeSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { InputError } from '../errors.js';
import { openInputSync } from '../fsutil.js';
import { addTraceLoss, lostEventsOf, noTraceLoss, SCAN_ENTRY, SCAN_HEADER, SCAN_LOST, SCAN_OTHER, SCAN_PROBLEM, SCAN_RETURN, scanTraceBytes, traceScan, type TraceLineOptions } from '../evidence/trace.js';
import { shown } from '../errors.js';
import { LedgerBuilder, type EntrySemantics, type LedgerObserver, type LedgerResult } from './ledger.js';
import { forEachLine, MAX_LINE, SyncFileLines } from './lines.js';
import { Clock, CLOCK_RANGE_EXPECTED } from './clock.js';
import type { OpsThread } from './opsThread.js';
import { isBlankLine, OrderedOps } from './opsSource.js';
import { fastProbeInto, fullProbeBytes, isCounter, type OpRecord, type ProbeRecord } from './records.js';

/**
 * How far ops.jsonl may be out of submit order: the reader holds this many operation lines ahead
 * and hands them out smallest submit_ns first. A line further out of place than that arrives after
 * the trace has passed its submit time, and the ledger refuses it (exit 2, naming the line) rather
 * than count its records as foreign. Memory grows with the window: measured about 140 bytes per
 * line held when records name operations (probe.jsonl, the id string), 55 bytes for trace text.
 */
export const DEFAULT_OPS_REORDER = 32_768;

/**
 * Smallest ops.jsonl worth a second thread: a worker takes ~40 ms to start (its own V8 and the
 * parser's modules) and ~20 MB, while the main thread parses ~3 MB of ops lines in that time.
 */
export const DEFAULT_OPS_THREAD_MIN_BYTES = 32 << 20;

/**
 * Cores the ops thread needs free, by the 1-minute load average, before it is started for an
 * ops.jsonl of DEFAULT_OPS_THREAD_MIN_BYTES: the main thread takes one, the worker wants most of
 * another. On a 2-core machine shared with two other workers (issue 24's bench, loads 4-8) the
 * thread lost at 1 M records (ops.jsonl 50 MB) in 5 of 8 runs, by up to 1.55x wall.
 */
export const OPS_THREAD_SPARE_CORES = 1.5;

/**
 * ...but from this size of ops.jsonl on it is taken whatever the load: at 10 M records (ops.jsonl
 * 500 MB) it won in 6 of 8 runs at loads 2-9, by up to 1.35x wall (two runnable threads also get
 * a larger share of busy cores than one), and lost the other two by at most 1.08x.
 */
export const OPS_THREAD_BUSY_MIN_BYTES = 256 << 20;

/**
 * Does a second thread pay for an ops.jsonl of `bytes` now? Measured when the ledger starts: a
 * second CPU, and the cores less the load average (0 where the platform keeps none, as on
 * Windows) leave OPS_THREAD_SPARE_CORES, or the file has OPS_THREAD_BUSY_MIN_BYTES.
 */
export function opsThreadPays(bytes: number, cores = availableParallelism(), load = loadavg()[0] ?? 0): boolean {
  return cores > 1 && (cores - load >= OPS_THREAD_SPARE_CORES || bytes >= OPS_THREAD_BUSY_MIN_BYTES);
}

/** The probe-record formats the ledger reads; `auto` looks at the first line that carries data. */
export type TraceFormat = 'jsonl' | 'trace-text' | 'perf-script';

export interface ReportedProblem {
  file: string;
  line: number;
  expected: string;
  got: string;
}

/**
 * Line problems: all counted, the first few kept (a bad 2 GB file must not fill memory with
 * them). "First" by place, not by arrival: ops.jsonl's lines before the trace's, each file by
 * line. Arrival order depends on whether ops.jsonl was read on a second thread (its problems
 * then come at the end), which depends on the machine's CPUs; the report must not.
 */
export class ProblemLog {
  count = 0;
  readonly first: ReportedProblem[] = [];
  /** `opsFile`: the file whose problems come first. */
  constructor(
    readonly keep = 20,
    private readonly opsFile?: string,
  ) {}
  private before(a: ReportedProblem, b: ReportedProblem): boolean {
    const ra = a.file === this.opsFile ? 0 : 1;
    const rb = b.file === this.opsFile ? 0 : 1;
    return ra !== rb ? ra < rb : a.line < b.line;
  }
  add(p: ReportedProblem): void {
    this.count++;
    const first = this.first;
    if (first.length === this.keep && !this.before(p, first[first.length - 1]!)) return;
    // Insertion into a short sorted list (keep is 20); equal places keep their arrival order.
    let i = first.length;
    while (i > 0 && this.before(p, first[i - 1]!)) i--;
    first.splice(i, 0, p);
    if (first.length > this.keep) first.pop();
  }
}

export interface ReadLedgerOptions {
  /** Path of ops.jsonl (read with a pull reader, so it must be a file, not stdin). */
  opsFile?: string | undefined;
  /** The probe records: a stream, or chunks from lines.ts fileChunksSync (one reused buffer). */
  trace: { name: string; stream: NodeJS.ReadableStream | AsyncIterable<Buffer> | Iterable<Buffer> };
  format?: TraceFormat | 'auto' | undefined;
  events?: TraceLineOptions | undefined;
  semantics?: EntrySemantics | undefined;
  /** ns since boot (a bigint past 2^53). */
  captureStartNs?: number | bigint | undefined;
  captureStopNs?: number | bigint | undefined;
  nmissedDelta?: number | undefined;
  /** The return probe cannot reject calls (LedgerOptions.noFiltering). */
  noFiltering?: boolean | undefined;
  /** Taps for pictures (see LedgerObserver); times given to it are ns since boot (the nearest double past 2^53). */
  observe?: LedgerObserver | undefined;
  /** Operation lines held ahead to put ops.jsonl into submit order (default DEFAULT_OPS_REORDER). */
  opsReorder?: number | undefined;
  /**
   * Parse and order ops.jsonl on a worker thread while the trace is scanned: true when a second
   * CPU exists, false never, undefined (the default) when a core is also free now or the file is
   * large (opsThreadPays).
   */
  opsThread?: boolean | undefined;
  /**
   * ...and only when ops.jsonl has at least this many bytes (default
   * DEFAULT_OPS_THREAD_MIN_BYTES): the thread's start-up is on the critical path (the ledger
   * waits for its first operation), and below this it costs more than the parse it takes over.
   */
  opsThreadMinBytes?: number | undefined;
  /** The effective maxactive, when known (caps the admitted high-water ceiling). */
  maxactive?: number | undefined;
  /** Bytes read so far (for a progress bar). */
  onProgress?: ((bytes: number) => void) | undefined;
}

export interface LedgerReport {
  result: LedgerResult;
  format: TraceFormat | undefined;
  lines: { trace: number; ops: number };
  /** Well-formed trace lines of other events (ignored). */
  otherEvents: number;
  /**
   * What the trace text shows its ring buffer lost: `[LOST N EVENTS]` markers, and `events`, the
   * records lost (src/evidence/trace.ts lostEventsOf: the markers' counts or the `trace` header's
   * overwritten entries; null when a `[LOST EVENTS]` marker gives no count); `overwritten`, the
   * header's entries written less entries in the buffer, when the text has the header.
   */
  lost: { markers: number; events: number | null; overwritten?: number };
  problems: ProblemLog;
  /** Non-fatal observations about the input as a whole. */
  notes: string[];
}

/** What readLedger must release however it ends: the ops worker, and the descriptor it reads. */
interface Held {
  thread?: OpsThread;
  fd?: number;
}

/** Read an ops ledger and a probe trace, stream them through the ledger, and summarise. */
export async function readLedger(opts: ReadLedgerOptions): Promise<LedgerReport> {
  const held: Held = {};
  try {
    return await readLedgerHolding(opts, held);
  } finally {
    // A worker still running (the trace failed first) is stopped before its descriptor closes.
    await held.thread?.stop();
    if (held.fd !== undefined) closeSync(held.fd);
  }
}

async function readLedgerHolding(opts: ReadLedgerOptions, held: Held): Promise<LedgerReport> {
  const problems = new ProblemLog(20, opts.opsFile);
  const notes: string[] = [];
  // One time line for the run (clock.ts): its origin is fixed by the first time read.
  const clock = new Clock();
  const traceName = opts.trace.name;
  let format: TraceFormat | undefined = opts.format === 'auto' ? undefined : opts.format;

  let opsReader: SyncFileLines | undefined;
  let opsFile = '';
  let opsProblems = 0;
  let opsFirstProblem: ReportedProblem | undefined;
  if (opts.opsFile !== undefined) {
    opsFile = opts.opsFile;
    opsReader = new SyncFileLines(openInputSync(opsFile, 'ops.jsonl file'));
  }
  function addOpsProblem(p: ReportedProblem): void {
    opsProblems++;
    if (opsFirstProblem === undefined) opsFirstProblem = p;
    problems.add(p);
  }
  // The reorder window: lines are held until `reorder` more have been read, then handed out in
  // submit order. Made with the builder, once the format says whether ids are needed.
  const reorder = Math.max(1, opts.opsReorder ?? DEFAULT_OPS_REORDER);
  let ordered: OrderedOps | undefined;
  let thread: OpsThread | undefined;
  const threadOut: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 0 };
  const nextOp = opsReader === undefined
    ? undefined
    : (): OpRecord | undefined => (thread !== undefined ? (thread.next(threadOut) ? threadOut : undefined) : ordered!.next());

  // node:worker_threads and the worker's module only when a thread may be used.
  const threadPays = opts.opsThread !== false && opsReader !== undefined && opsReader.size >= (opts.opsThreadMinBytes ?? DEFAULT_OPS_THREAD_MIN_BYTES) && (opts.opsThread === true ? availableParallelism() > 1 : opsThreadPays(opsReader.size));
  const Thread = threadPays ? (await import('./opsThread.js')).OpsThread : undefined;
  // Semantics follow the format unless the caller says otherwise; fixed at the first record.
  let builder: LedgerBuilder | undefined;
  const captureNs = (v: number | bigint | undefined, name: string): number | undefined => {
    if (v === undefined) return undefined;
    const r = clock.relAny(v);
    if (r !== r) throw new InputError({}, `${name}: ${CLOCK_RANGE_EXPECTED}`, String(v));
    return r;
  };
  const makeBuilder = (semantics: EntrySemantics): LedgerBuilder => {
    // Only probe.jsonl records can name an operation.
    const wantIds = format === 'jsonl';
    // Set by the first record; with none, by a capture bound, else by the first operation.
    const captureStartNs = captureNs(opts.captureStartNs, '--capture-start-ns');
    const captureStopNs = captureNs(opts.captureStopNs, '--capture-stop-ns');
    if (opsReader !== undefined) {
      // The worker reads times onto the ledger's line, so the origin must be known first.
      if (Thread !== undefined && clock.set) {
        // The worker reads the descriptor opened (and checked to be a regular file) above;
        // readLedger closes it once the worker has ended.
        held.fd = opsReader.release();
        thread = held.thread = new Thread(held.fd, problems.keep, wantIds, reorder, undefined, clock.originSec);
      } else {
        ordered = new OrderedOps(opsReader, wantIds, reorder, (line, expected, got) => addOpsProblem({ file: opsFile, line, expected, got }), clock);
      }
    }
    return new LedgerBuilder({
      semantics: opts.semantics ?? semantics,
      observe: observeAbsolute(opts.observe, clock),
      // Only probe.jsonl records can name an operation.
      opIds: format === 'jsonl',
      nextOp,
      captureStartNs,
      captureStopNs,
      showNs: (rel) => clock.absBig(rel).toString(),
      nmissedDelta: opts.nmissedDelta,
      noFiltering: opts.noFiltering,
      maxactive: opts.maxactive,
      opsOrderExpected: `operation lines at most ${reorder} lines out of submit_ns order (sort ops.jsonl by submit_ns, or raise --ops-reorder)`,
      warn: (source, line, expected, got) => problems.add({ file: source === 'ops' ? opsFile : traceName, line, expected, got }),
      fail: (source, line, expected, got) => {
        void thread?.stop();
        throw new InputError({ file: source === 'ops' ? opsFile : traceName, line }, expected, got);
      },
    });
  };

  let records = 0;
  let traceProblems = 0;
  let firstTraceProblem: ReportedProblem | undefined;
  let other = 0;
  const loss = noTraceLoss();
  const events = opts.events ?? {};
  const traceProblem = (line: number, expected: string, got: string): void => {
    traceProblems++;
    const p = { file: traceName, line, expected, got };
    if (firstTraceProblem === undefined) firstTraceProblem = p;
    problems.add(p);
  };

  // Without event names, the body's shape says entry or return, so every probe in the trace
  // counts: another function's return would close a call of this one. The records must then be
  // of one function and one event of each kind, or the run is refused (issue 25).
  const bind = events.entryEvent === undefined && events.returnEvent === undefined ? new ProbeBinding() : undefined;

  let lastLine = 0;
  const scratch: ProbeRecord = { ev: 'entry', tsNs: 0, task: -1, inst: undefined, op: undefined, line: 0 };
  const splitter = await forEachLine(
    opts.trace.stream,
    (b, start, end, no, truncated) => {
      lastLine = no;
      if (truncated) {
        traceProblem(no, `a line of at most ${MAX_LINE} characters`, 'a longer line (binary data or a file without newlines?)');
        return;
      }
      if (format === undefined) {
        let i = start;
        while (i < end && (b[i] === 32 || b[i] === 9)) i++;
        if (i === end) return;
        if (b[i] === 35 /* # */) {
          // The `trace` file's header comes before any record: its overwritten entries count.
          if (scanTraceBytes(b, start, end) === SCAN_HEADER) addTraceLoss(loss, { kind: 'header', inBuffer: traceScan.inBuffer, written: traceScan.written, onlineCpus: traceScan.cpu });
          return;
        }
        format = b[i] === 123 /* { */ ? 'jsonl' : 'trace-text';
      }
      if (format === 'jsonl') {
        if (fastProbeInto(scratch, b, start, end, no, clock)) {
          builder ??= makeBuilder('instance');
          records++;
          builder.add(scratch);
          return;
        }
        if (isBlankLine(b, start, end)) return;
        const r = fullProbeBytes(b, start, end, no, clock);
        if (!r.ok) {
          // A record the time line cannot hold is not dropped: its call would look missed.
          if (r.expected.endsWith(CLOCK_RANGE_EXPECTED)) throw new InputError({ file: traceName, line: no }, r.expected, r.got);
          traceProblem(no, r.expected, r.got);
          return;
        }
        builder ??= makeBuilder('instance');
        records++;
        if (isCounter(r.value)) builder.addCounter(r.value);
        else builder.add(r.value);
        return;
      }
      const k = scanTraceBytes(b, start, end, events);
      if (k === SCAN_ENTRY || k === SCAN_RETURN) {
        if (bind !== undefined) {
          const other = bind.check(b, k, no);
          if (other !== undefined) throw new InputError({ file: traceName, line: no }, 'the records of one probed function, with one entry and one return event (name them with --entry-event and --return-event)', other);
        }
        const ts = clock.rel(traceScan.sec, traceScan.fracNs);
        if (ts !== ts) throw new InputError({ file: traceName, line: no }, `a stamp ${CLOCK_RANGE_EXPECTED}`, `${traceScan.sec}.${String(traceScan.fracNs).padStart(9, '0')}`);
        if (builder === undefined) {
          builder = makeBuilder('event');
          if (traceScan.source === 'perf') format = 'perf-script';
        }
        records++;
        // Trace text carries no instance id: the ledger pairs by the task's stack. The builder
        // keeps nothing of the record it is given, so one object serves every line.
        scratch.ev = k === SCAN_ENTRY ? 'entry' : 'return';
        scratch.tsNs = ts;
        scratch.resNs = traceScan.resNs;
        scratch.task = traceScan.pid;
        scratch.line = no;
        builder.add(scratch);
      } else if (k === SCAN_OTHER) other++;
      else if (k === SCAN_LOST) addTraceLoss(loss, { kind: 'lost', cpu: traceScan.cpu, count: traceScan.lost < 0 ? undefined : traceScan.lost });
      else if (k === SCAN_HEADER) addTraceLoss(loss, { kind: 'header', inBuffer: traceScan.inBuffer, written: traceScan.written, onlineCpus: traceScan.cpu });
      else if (k === SCAN_PROBLEM) traceProblem(no, traceScan.expected, shown(b.toString('utf8', start, Math.min(end, start + 200))));
    },
    opts.onProgress,
  );
  if (splitter.lastLineUnterminated && firstTraceProblem?.line === lastLine) {
    firstTraceProblem.got += ' (the last line has no newline: truncated?)';
  }

  if (records === 0 && traceProblems > 0) {
    const p = firstTraceProblem!;
    throw new InputError({ file: p.file, line: p.line }, p.expected, `${p.got}${traceProblems > 1 ? ` (and ${traceProblems - 1} more unreadable lines, no record)` : ''}`);
  }
  builder ??= makeBuilder(format === 'jsonl' ? 'instance' : 'event');
  const result = absoluteTimes(builder.finish(), clock);
  opsReader?.close();
  let opsValid = ordered?.valid ?? 0;
  let opsLines = ordered?.lines ?? 0;
  if (thread !== undefined) {
    // The worker reports what stopped it (a read error of ops.jsonl): said as a problem of that file.
    const e = await thread.end().catch((err: unknown) => {
      throw new InputError({ file: opsFile }, 'an ops.jsonl file that can be read to its end', err instanceof Error ? err.message : String(err), { cause: err });
    });
    opsValid = e.valid;
    opsLines = e.lines;
    for (const p of e.problems) addOpsProblem({ file: opsFile, line: p.line, expected: p.expected, got: p.got });
    // Counted, not kept, past the first few.
    for (let i = e.problems.length; i < e.problemCount; i++) opsProblems++, problems.count++;
  }
  if (opsReader !== undefined && opsValid === 0 && opsProblems > 0) {
    const p = opsFirstProblem!;
    throw new InputError({ file: p.file, line: p.line }, p.expected, p.got);
  }
  if (records === 0) notes.push(`${traceName}: no probe records at all${other > 0 ? ` (${other} lines of other events: check --entry-event/--return-event)` : ''}`);
  const lostEvents = lostEventsOf(loss);
  if (loss.markers > 0 || (loss.overwritten ?? 0) > 0) {
    const how = [loss.markers > 0 ? `${loss.markers} marker${loss.markers === 1 ? '' : 's'}${loss.countless > 0 ? `, ${loss.countless} without a count` : ''}` : '', (loss.overwritten ?? 0) > 0 ? `the header: ${loss.overwritten} overwritten` : ''].filter(Boolean).join('; ');
    notes.push(`${traceName}: the ring buffer lost ${lostEvents ?? 'an unknown number of'} events (${how}): records are missing, so unpaired entries and returns may be artefacts`);
  }
  return {
    result,
    format,
    lines: { trace: splitter.lines, ops: opsLines },
    otherEvents: other,
    lost: { markers: loss.markers, events: lostEvents ?? null, ...(loss.overwritten !== undefined ? { overwritten: loss.overwritten } : {}) },
    problems,
    notes,
  };
}

/** The observer sees ns since boot, as before the ledger kept its own time line. */
function observeAbsolute(o: LedgerObserver | undefined, clock: Clock): LedgerObserver | undefined {
  if (o === undefined) return undefined;
  const out: LedgerObserver = {};
  if (o.inFlight !== undefined) {
    const f = o.inFlight.bind(o);
    out.inFlight = (open, ts) => f(open, clock.absNum(ts));
  }
  if (o.duration !== undefined) out.duration = o.duration.bind(o);
  if (o.counter !== undefined) {
    const f = o.counter.bind(o);
    out.counter = (c) => f(c.tsNs === undefined ? c : { ...c, tsNs: clock.absNum(c.tsNs) });
  }
  return out;
}

/**
 * The builder's times are ns from the clock's origin: back to ns since boot. A number holds them
 * exactly up to 2^53 ns; past that `exactNs` gives each as decimal text (and the number is the
 * nearest double).
 */
function absoluteTimes(r: LedgerResult, clock: Clock): LedgerResult {
  const w = r.window;
  const times: Array<[string, number | undefined]> = [
    ['firstNs', w.firstNs],
    ['lastNs', w.lastNs],
    ['stopNs', w.stopNs],
    ['highWaterAtNs', r.highWater.atNs],
    ['demandAtNs', r.demand?.atNs],
  ];
  if (times.some(([, t]) => t !== undefined && clock.beyondDouble(t))) {
    const exact: Record<string, string> = {};
    for (const [name, t] of times) if (t !== undefined) exact[name] = clock.absBig(t).toString();
    r.exactNs = exact;
  }
  const abs = (t: number | undefined): number | undefined => (t === undefined ? undefined : clock.absNum(t));
  r.window = { firstNs: abs(w.firstNs), lastNs: abs(w.lastNs), stopNs: abs(w.stopNs) };
  r.highWater.atNs = abs(r.highWater.atNs);
  if (r.demand !== undefined) r.demand.atNs = abs(r.demand.atNs);
  return r;
}

/** A byte range copied out of a line, with the line it came from. */
interface Seen {
  bytes: Buffer;
  line: number;
}

/**
 * The probe of a trace read without event names: the first entry event, the first return event
 * and (ftrace text, which prints symbols) the first probed function. A record of another one is
 * named, so that the reader can refuse the trace rather than pair across functions. perf script
 * prints addresses, an entry's at the probe's offset, so there only the event names are compared.
 */
class ProbeBinding {
  private entryEvent: Seen | undefined;
  private returnEvent: Seen | undefined;
  private func: Seen | undefined;

  /** The record just scanned (SCAN_ENTRY or SCAN_RETURN, `traceScan`): undefined if it is of the probe, else what it is instead. */
  check(b: Buffer, kind: number, line: number): string | undefined {
    const st = traceScan;
    const ret = kind === SCAN_RETURN;
    const ev = ret ? this.returnEvent : this.entryEvent;
    if (ev === undefined) {
      const seen = { bytes: Buffer.from(b.subarray(st.evStart, st.evEnd)), line };
      if (ret) this.returnEvent = seen;
      else this.entryEvent = seen;
    } else if (!same(b, st.evStart, st.evEnd, ev.bytes)) {
      return `${ret ? 'return' : 'entry'} event ${quote(b, st.evStart, st.evEnd)} besides ${quote(ev.bytes, 0, ev.bytes.length)} (line ${ev.line})`;
    }
    if (st.source !== 'ftrace') return undefined;
    // ftrace: `(caller+off/size <- func)` for a return, `(func+off/size)` for an entry.
    let from: number;
    let to: number;
    if (ret) {
      from = st.arrow + 4;
      to = st.close;
    } else {
      from = st.bodyStart + 1;
      to = from;
      while (to < st.close && b[to] !== 43 /* + */) to++;
    }
    while (from < to && (b[from] === 32 || b[from] === 9)) from++;
    while (to > from && (b[to - 1] === 32 || b[to - 1] === 9)) to--;
    const f = this.func;
    if (f === undefined) this.func = { bytes: Buffer.from(b.subarray(from, to)), line };
    else if (!same(b, from, to, f.bytes)) return `a ${ret ? 'return' : 'entry'} of ${quote(b, from, to)} besides ${quote(f.bytes, 0, f.bytes.length)} (line ${f.line})`;
    return undefined;
  }
}

function same(b: Buffer, from: number, to: number, want: Buffer): boolean {
  if (to - from !== want.length) return false;
  for (let i = 0; i < want.length; i++) if (b[from + i] !== want[i]) return false;
  return true;
}

function quote(b: Buffer, from: number, to: number): string {
  return shown(b.toString('utf8', from, Math.min(to, from + 80)));
}
