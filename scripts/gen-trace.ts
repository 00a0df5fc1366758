/**
 * Writes a realistic kretprobe trace with its ground truth: worker tasks submitting operations
 * one after another, calls that sleep and overlap, recursion, a bounded instance pool that
 * misses calls when full, an entry handler that filters some operations, operations whose call
 * site the probe cannot see (inlined), a foreign caller (the capture pipeline itself), and calls
 * still in flight when capture stops.
 *
 * Outputs: ops.jsonl, trace.txt (tracefs text: a separate entry kprobe `gate_entry` and the
 * return event `gate`), probe.jsonl (a probe module with per-instance ids), truth.json.
 *
 * Two real-world shapes on request: `--shuffle F` writes a fraction F of the ops.jsonl lines
 * when the operation completes (as a multi-threaded load generator does; those still running
 * at stop come last), so the file is out of submit order; `--tight P` makes a worker submit its
 * next operation 0.2 µs after the previous one completed with probability P, so that an entry
 * stamped in that microsecond (ftrace prints µs) could belong to either (probe.jsonl keeps ns).
 *
 *   node dist/scripts/gen-trace.js --events 1000000 --out bench-out/1m [--seed 1] [--shuffle 0.3] [--tight 0.05]
 *
 * The simulation is deterministic for a seed; it runs twice (once to find the capture-stop time
 * that yields the requested number of trace records, once to write).
 */
import { createWriteStream, mkdirSync, writeFileSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface GenParams {
  /** Trace-text records (entries + returns) to write, approximately. */
  events: number;
  seed: number;
  workers: number;
  maxactive: number;
  /** Probability that a call recurses once more (up to maxDepth). */
  pRecurse: number;
  maxDepth: number;
  /** Operations the entry handler rejects. */
  pFiltered: number;
  /** Operations that never reach the target (reaches_target: false). */
  pIneligible: number;
  /** Eligible operations whose call site is inlined: the probe sees nothing. */
  pNoEvidence: number;
  /** Mean gap between the foreign caller's calls, µs (0: no foreign caller). */
  foreignGapUs: number;
  meanCallUs: number;
  /** A share of calls sleep much longer (the ones a full pool is most likely to miss). */
  pLong: number;
  longCallUs: number;
  thinkUs: number;
  /** Fraction of ops.jsonl lines written at completion instead of at submit (0: sorted). */
  shuffle?: number | undefined;
  /** Probability that a worker's next operation starts 0.2 µs after its last one completed. */
  pTight?: number | undefined;
}

export const DEFAULT_PARAMS: GenParams = {
  events: 1000,
  seed: 1,
  workers: 48,
  maxactive: 44,
  pRecurse: 0.08,
  maxDepth: 3,
  pFiltered: 0.03,
  pIneligible: 0.05,
  pNoEvidence: 0.01,
  foreignGapUs: 400,
  meanCallUs: 150,
  pLong: 0.04,
  longCallUs: 8000,
  thinkUs: 40,
};

/** Counts the ledger must reproduce exactly, per input form. */
export interface FormTruth {
  eligible: number;
  returned: number;
  in_flight_at_stop: number;
  completed_without_return: number;
  filtered: number;
  no_probe_evidence: number;
  /** Admitted instances outstanding at once (the pool's own count). */
  high_water: number;
  /** Calls inside the function at once, admitted or missed or filtered, among calls the probe can see. */
  demand_high_water: number;
  /** Eligible operations whose missing evidence is a capacity miss (text: an unreturned entry was a miss; jsonl: every call was missed). */
  capacity_missed: number;
  pairs: number;
}

export interface Truth {
  params: GenParams;
  stop_us: number;
  ops: number;
  ineligible: number;
  nmissed: number;
  trace_records: number;
  jsonl_records: number;
  /** probe.jsonl: entry records mean accepted instances. */
  jsonl: FormTruth;
  /** trace.txt: entry records are entry-kprobe events (also for missed and filtered calls). */
  text: FormTruth;
}

export interface GenSink {
  ops(line: string): void;
  trace(line: string): void;
  jsonl(line: string): void;
}

/** A small seeded generator: the same sequence for the same seed everywhere (also the fuzzer's). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Op {
  id: string;
  task: number;
  kind: 'normal' | 'ineligible' | 'no-evidence' | 'filtered';
  submitUs: number;
  doneUs: number;
  /** Text entries without a return yet (closed when the operation completes). */
  textOpen: number;
  jsonEntries: number;
  jsonOpen: number;
  jsonFiltered: number;
  textEntries: number;
  textUnreturned: number;
  withOpField: boolean;
  /** Calls of it the pool missed. */
  missed: number;
  /** Calls of it (visible to the probe). */
  calls: number;
  /** The next operation of its worker starts 0.2 µs after it completes. */
  tightAfter: boolean;
  /** It starts 0.2 µs after its worker's previous operation completed. */
  tight: boolean;
  /** Its ops.jsonl line, held back until it completes (shuffle). */
  deferred: string | undefined;
}

interface Call {
  op: Op | undefined;
  inst: string;
  state: 'pending' | 'accepted' | 'missed' | 'filtered' | 'invisible';
}

interface Ev {
  us: number;
  kind: 'submit' | 'entry' | 'return' | 'done';
  op: Op | undefined;
  call: Call | undefined;
}

interface Worker {
  pid: number;
  comm: string;
  queue: Ev[];
  head: number;
  foreign: boolean;
  /** The next operation starts in the microsecond the last one completed. */
  tightNext: boolean;
}

const pad2 = (n: number, w: number): string => String(n).padStart(w, '0');

function stamp(us: number): string {
  const s = Math.floor(us / 1e6);
  return `${String(s).padStart(5)}.${pad2(us - s * 1e6, 6)}`;
}

/** Run the simulation; with `stopUs` undefined it only finds the stop time for `events` records. */
export function simulate(p: GenParams, sink: GenSink | undefined, stopUsIn?: number): Truth {
  const rnd = mulberry32(p.seed);
  const expo = (mean: number): number => Math.max(1, Math.round(-Math.log(1 - rnd()) * mean));
  let opSeq = 0;
  let instSeq = 0;
  const workers: Worker[] = [];
  for (let w = 0; w < p.workers; w++) workers.push({ pid: 1000 + w, comm: 'worker', queue: [], head: 0, foreign: false, tightNext: false });
  if (p.foreignGapUs > 0) workers.push({ pid: 900, comm: 'head', queue: [], head: 0, foreign: true, tightNext: false });
  // Its own stream, so that shuffling the file leaves the simulation (and its truth) unchanged.
  const shuffleRnd = mulberry32(p.seed ^ 0x9e3779b9);
  const shuffle = p.shuffle ?? 0;
  const pTight = p.pTight ?? 0;

  const newCall = (op: Op | undefined): Call => ({ op, inst: `ffff8881c0a1${(instSeq++ % 0xffff).toString(16).padStart(4, '0')}:${instSeq}`, state: 'pending' });

  // Nested calls of one operation: depth d lies strictly inside depth d-1.
  const planCalls = (queue: Ev[], op: Op | undefined, startUs: number, depth: number): number => {
    const long = rnd() < p.pLong;
    let dur = expo(long ? p.longCallUs : p.meanCallUs) + 4;
    const call = newCall(op);
    queue.push({ us: startUs, kind: 'entry', op, call });
    let end = startUs + dur;
    if (depth < p.maxDepth && rnd() < p.pRecurse) {
      const innerEnd = planCalls(queue, op, startUs + 1 + Math.floor(rnd() * 3), depth + 1);
      if (innerEnd >= end) {
        end = innerEnd + 1 + Math.floor(rnd() * 3);
        dur = end - startUs;
      }
    }
    queue.push({ us: end, kind: 'return', op, call });
    return end;
  };

  const planNext = (w: Worker, fromUs: number): void => {
    w.queue = [];
    w.head = 0;
    if (w.foreign) {
      const t = fromUs + expo(p.foreignGapUs);
      planCalls(w.queue, undefined, t, p.maxDepth);
      return;
    }
    const tight = w.tightNext;
    const submit = tight ? fromUs : fromUs + expo(p.thinkUs);
    const r = rnd();
    const kind: Op['kind'] = r < p.pIneligible ? 'ineligible' : r < p.pIneligible + p.pNoEvidence ? 'no-evidence' : r < p.pIneligible + p.pNoEvidence + p.pFiltered ? 'filtered' : 'normal';
    const op: Op = {
      id: `req-${++opSeq}`, task: w.pid, kind, submitUs: submit, doneUs: 0, textOpen: 0, jsonEntries: 0, jsonOpen: 0, jsonFiltered: 0, textEntries: 0, textUnreturned: 0, withOpField: rnd() < 0.5,
      missed: 0, calls: 0, tightAfter: false, tight, deferred: undefined,
    };
    // Only a called operation can start in the microsecond of its submit (its first entry is the record at stake).
    if (tight && kind === 'ineligible') op.tight = false;
    w.queue.push({ us: submit, kind: 'submit', op, call: undefined });
    let last = op.tight ? submit : submit + 1 + Math.floor(rnd() * 5);
    if (kind === 'ineligible') last += expo(p.meanCallUs);
    else last = planCalls(w.queue, op, last, 1);
    op.doneUs = last + 1 + Math.floor(rnd() * 5);
    w.tightNext = pTight > 0 && rnd() < pTight;
    op.tightAfter = w.tightNext;
    w.queue.push({ us: op.doneUs, kind: 'done', op, call: undefined });
    // Entries and returns of nested calls interleave: keep the worker's events in time order.
    w.queue.sort((a, b) => a.us - b.us || order(a) - order(b));
  };
  const order = (e: Ev): number => (e.kind === 'submit' ? 0 : e.kind === 'return' ? 1 : e.kind === 'entry' ? 2 : 3);

  // A binary heap of workers by their next event time.
  const heap: Worker[] = [];
  // Completion and submission stamps are 500 ns into their microsecond, so within one
  // microsecond they come after every entry and return of any task (the ledger sees them so).
  const key = (w: Worker): number => {
    const e = w.queue[w.head]!;
    return e.us * 2 + (e.kind === 'done' || e.kind === 'submit' ? 1 : 0);
  };
  const less = (a: Worker, b: Worker): boolean => key(a) < key(b) || (key(a) === key(b) && a.pid < b.pid);
  const push = (w: Worker): void => {
    heap.push(w);
    let i = heap.length - 1;
    while (i > 0) {
      const q = (i - 1) >> 1;
      if (!less(heap[i]!, heap[q]!)) break;
      [heap[i], heap[q]] = [heap[q]!, heap[i]!];
      i = q;
    }
  };
  const pop = (): Worker => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && less(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  };
  for (const w of workers) {
    planNext(w, Math.floor(rnd() * 100) + 1000);
    push(w);
  }

  let inUse = 0;
  let jsonHigh = 0;
  let demandOpen = 0;
  let demandHigh = 0;
  let textOpen = 0;
  let textHigh = 0;
  let nmissed = 0;
  let traceRecords = 0;
  let jsonlRecords = 0;
  let jsonPairs = 0;
  let textPairs = 0;
  let stopUs = stopUsIn ?? Infinity;
  const liveOps = new Set<Op>();
  let opsCount = 0;
  const foreignOpenText = { n: 0 };

  const zero = (): FormTruth => ({ eligible: 0, returned: 0, in_flight_at_stop: 0, completed_without_return: 0, filtered: 0, no_probe_evidence: 0, high_water: 0, demand_high_water: 0, capacity_missed: 0, pairs: 0 });
  const text = zero();
  const json = zero();
  let ineligible = 0;
  const classify = (op: Op, done: boolean): void => {
    if (op.kind === 'ineligible') {
      ineligible++;
      return;
    }
    text.eligible++;
    json.eligible++;
    // probe.jsonl: accepted instances, filtered records.
    if (op.jsonEntries > 0) {
      if (op.jsonOpen === 0) json.returned++;
      else if (done) json.completed_without_return++;
      else json.in_flight_at_stop++;
    } else if (op.jsonFiltered > 0) json.filtered++;
    else {
      json.no_probe_evidence++;
      if (op.missed > 0) json.capacity_missed++;
    }
    // trace.txt: entry events for every visible call; returns for accepted ones.
    const unreturned = done ? op.textUnreturned : op.textOpen;
    if (op.textEntries > 0) {
      if (unreturned === 0) text.returned++;
      else if (done) text.completed_without_return++;
      else text.in_flight_at_stop++;
      if (unreturned > 0 && op.missed > 0) text.capacity_missed++;
    } else text.no_probe_evidence++;
  };

  sink?.trace('# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |');
  sink?.jsonl(JSON.stringify({ ev: 'counter', name: 'nmissed', value: 0, epoch: 'reg-1', ts_ns: 0 }));

  // probe.jsonl keeps nanoseconds: a tight operation's first entry is 600 ns into its microsecond,
  // so the lines of one microsecond are sorted before they are written.
  let jUs = -1;
  let jBuf: Array<{ ns: number; line: string }> = [];
  const flushJ = (): void => {
    if (jBuf.length > 1) jBuf.sort((a, b) => a.ns - b.ns);
    for (const x of jBuf) sink?.jsonl(x.line);
    jBuf = [];
  };
  const jsonl = (us: number, ns: number, line: string): void => {
    if (us !== jUs) {
      flushJ();
      jUs = us;
    }
    if (sink) jBuf.push({ ns, line });
  };
  const doneNs = (op: Op): number => op.doneUs * 1000 + (op.tightAfter ? 200 : 500);
  const submitNs = (op: Op): number => op.submitUs * 1000 + (op.tight ? 400 : 500);

  const prefix = (w: Worker, us: number): string => `${w.comm.padStart(16)}-${String(w.pid).padEnd(7)} [${pad2(w.pid % 2, 3)}] ..... ${stamp(us)}`;

  for (;;) {
    const w = pop();
    const ev = w.queue[w.head]!;
    if (ev.us > stopUs) break;
    // A tight operation's first entry is 600 ns into its microsecond: in the stop microsecond it is
    // after the stop (and so is everything else of this worker).
    if (ev.us === stopUs && ev.kind === 'entry' && ev.op?.tight === true && ev.us === ev.op.submitUs) continue;
    if (stopUsIn === undefined && traceRecords >= p.events) {
      stopUs = ev.us - 1;
      break;
    }
    w.head++;
    const op = ev.op;
    const call = ev.call;
    // A tight operation's first entry comes after its submit, within the same microsecond.
    const ns = ev.us * 1000 + (ev.kind === 'entry' && op?.tight && ev.us === op.submitUs ? 600 : 0);
    switch (ev.kind) {
      case 'submit':
        // submit_ns is 500 ns after its microsecond: submitted in the stop microsecond is after the stop.
        if (ev.us >= stopUs) break;
        liveOps.add(op!);
        opsCount++;
        // stopUs is known on the writing pass, so whether the test saw it complete is known now
        // (done_ns = done µs + 500 ns, so completing in the stop microsecond is after the stop).
        {
          const line = JSON.stringify({ op: op!.id, task: op!.task, submit_ns: submitNs(op!), done_ns: op!.doneUs < stopUs ? doneNs(op!) : null, reaches_target: op!.kind !== 'ineligible' });
          if (shuffle > 0 && shuffleRnd() < shuffle) op!.deferred = line;
          else sink?.ops(line);
        }
        break;
      case 'entry': {
        if (op?.kind === 'no-evidence') {
          call!.state = 'invisible';
          break;
        }
        // The separate entry kprobe fires for every visible call.
        traceRecords++;
        textOpen++;
        demandOpen++;
        if (demandOpen > demandHigh) demandHigh = demandOpen;
        if (op) op.calls++;
        if (textOpen > textHigh) textHigh = textOpen;
        if (op) {
          op.textEntries++;
          op.textOpen++;
        } else foreignOpenText.n++;
        sink?.trace(`${prefix(w, ev.us)}: gate_entry: (pipe_read+0x4/0x470)`);
        if (op?.kind === 'filtered') {
          call!.state = 'filtered';
          op.jsonFiltered++;
          jsonlRecords++;
          jsonl(ev.us, ns, JSON.stringify(op.withOpField ? { ev: 'filtered', task: w.pid, ts_ns: ns, op: op.id } : { ev: 'filtered', task: w.pid, ts_ns: ns }));
        } else if (inUse < p.maxactive) {
          call!.state = 'accepted';
          inUse++;
          if (inUse > jsonHigh) jsonHigh = inUse;
          if (op) {
            op.jsonEntries++;
            op.jsonOpen++;
          }
          jsonlRecords++;
          const rec: Record<string, unknown> = { ev: 'entry', inst: call!.inst, task: w.pid, cpu: w.pid % 2, ts_ns: ns };
          if (op?.withOpField) rec.op = op.id;
          jsonl(ev.us, ns, JSON.stringify(rec));
        } else {
          call!.state = 'missed';
          nmissed++;
          if (op) op.missed++;
        }
        break;
      }
      case 'return':
        if (call!.state !== 'invisible' && call!.state !== 'pending') demandOpen--;
        if (call!.state === 'accepted') {
          inUse--;
          traceRecords++;
          jsonlRecords++;
          textOpen--;
          jsonPairs++;
          textPairs++;
          if (op) {
            op.jsonOpen--;
            op.textOpen--;
          } else foreignOpenText.n--;
          sink?.trace(`${prefix(w, ev.us)}: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0`);
          jsonl(ev.us, ns, JSON.stringify({ ev: 'return', inst: call!.inst, task: w.pid, cpu: w.pid % 2, ts_ns: ns, ret: 0 }));
        }
        break;
      case 'done':
        // done_ns is 500 ns after its microsecond: at the stop microsecond it is past the stop.
        if (ev.us >= stopUs) break;
        // The ledger stops counting an operation's unreturned entries once it has completed.
        textOpen -= op!.textOpen;
        op!.textUnreturned = op!.textOpen;
        op!.textOpen = 0;
        liveOps.delete(op!);
        classify(op!, true);
        if (op!.deferred !== undefined) sink?.ops(op!.deferred);
        break;
    }
    if (w.head >= w.queue.length) planNext(w, ev.us);
    push(w);
  }

  for (const op of liveOps) {
    classify(op, false);
    // A load generator writes what is still running when it stops.
    if (op.deferred !== undefined) sink?.ops(op.deferred);
  }
  // Admitted instances are the pool's, whatever form records them; demand is what an entry event sees.
  void textHigh;
  text.high_water = jsonHigh;
  text.demand_high_water = demandHigh;
  text.pairs = textPairs;
  json.high_water = jsonHigh;
  json.demand_high_water = demandHigh;
  json.pairs = jsonPairs;
  flushJ();
  sink?.jsonl(JSON.stringify({ ev: 'counter', name: 'nmissed', value: nmissed, epoch: 'reg-1', ts_ns: stopUs * 1000 }));
  return { params: p, stop_us: stopUs, ops: opsCount, ineligible, nmissed, trace_records: traceRecords, jsonl_records: jsonlRecords, jsonl: json, text };
}

/** Simulate twice: find the stop time for `events` trace records, then write with it. */
export function generate(p: GenParams, sink: GenSink): Truth {
  const dry = simulate(p, undefined);
  return simulate(p, sink, dry.stop_us);
}

/** Buffered line writers (one write per MiB). */
function fileSink(dir: string): { sink: GenSink; close: () => Promise<void> } {
  mkdirSync(dir, { recursive: true });
  const open = (name: string): { s: WriteStream; buf: string[]; n: number } => ({ s: createWriteStream(path.join(dir, name)), buf: [], n: 0 });
  const files = { ops: open('ops.jsonl'), trace: open('trace.txt'), jsonl: open('probe.jsonl') };
  const write = (f: { s: WriteStream; buf: string[]; n: number }, line: string): void => {
    f.buf.push(line);
    f.n += line.length;
    if (f.n > 1 << 20) {
      f.s.write(`${f.buf.join('\n')}\n`);
      f.buf = [];
      f.n = 0;
    }
  };
  return {
    sink: { ops: (l) => write(files.ops, l), trace: (l) => write(files.trace, l), jsonl: (l) => write(files.jsonl, l) },
    close: async () => {
      for (const f of Object.values(files)) {
        if (f.buf.length > 0) f.s.write(`${f.buf.join('\n')}\n`);
        await new Promise<void>((resolve, reject) => f.s.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
    },
  };
}

async function main(argv: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const params: GenParams = {
    ...DEFAULT_PARAMS,
    events: Number(get('--events') ?? 100000),
    seed: Number(get('--seed') ?? 1),
    shuffle: Number(get('--shuffle') ?? 0),
    pTight: Number(get('--tight') ?? 0),
  };
  const out = get('--out') ?? 'bench-out/trace';
  const { sink, close } = fileSink(out);
  const truth = generate(params, sink);
  await close();
  writeFileSync(path.join(out, 'truth.json'), `${JSON.stringify(truth, null, 2)}\n`);
  process.stdout.write(`${out}: ${truth.trace_records} trace records, ${truth.jsonl_records} probe.jsonl records, ${truth.ops} operations, nmissed ${truth.nmissed}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
