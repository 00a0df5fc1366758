import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';
import type { Waiver } from '../case/waivers.js';
import { loadInput, loadInputs, shippedLoaders, type AuditInput, type InputRef, type LoaderContext } from './inputs.js';
import { Lane, type LaneReply, type LaneRequest } from './lane.js';
import { fromWire, judgeLoaded, type AuditRules, type Judged, type WireJudged } from './judge.js';

/**
 * Judging a batch on more than one thread. The main thread walks the paths and hands out chunks
 * of files, in order, to worker threads (src/audit/worker.ts), each of which has loaded the
 * rules itself; while it would otherwise wait for the next chunk in order, it judges one itself.
 * Verdicts come out in walk order whichever thread judged them, so the output is the same
 * byte for byte as with one thread.
 */

/** A batch under this many files is judged on the main thread: a worker's start-up (its modules and rules, ~0.1 s of a core) would not pay. */
export const POOL_MIN_INPUTS = 200;
/** Files per message: enough that cloning and messaging stay a small share, few enough that the threads finish together. */
const CHUNK = 16;
/** Chunks queued on a worker, so it does not wait while the main thread judges a chunk of its own (with 2 it was idle a fifth of the time). */
const AHEAD = 4;

export interface PoolWorkerData {
  /** --rules as given (undefined: the shipped rules). */
  rulesOption: string | undefined;
  configWaivers: Waiver[];
}
export type PoolRequest = LaneRequest;
export type PoolReply = LaneReply<WireJudged>;

const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * Cores idle besides this process's main thread, between two readings of /proc/stat: what a
 * worker started now would get. This process's own other threads (V8 compiles and collects on
 * threads of its own, most while a run warms up: half a core here) are counted as idle, since a
 * worker competes with them only while they last. Undefined where there is no /proc/stat (then
 * the load average says).
 */
export class IdleCores {
  private readonly first = IdleCores.read();
  private readonly cpu = process.cpuUsage();
  private readonly wall = process.hrtime.bigint();
  private static read(): { idle: number; total: number } | undefined {
    try {
      const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!;
      if (!line.startsWith('cpu ')) return undefined;
      const f = line.trim().split(/\s+/).slice(1).map(Number);
      // user nice system idle iowait irq softirq steal (guest time is inside user already)
      const total = f.slice(0, 8).reduce((a, b) => a + (b || 0), 0);
      return { idle: (f[3] ?? 0) + (f[4] ?? 0), total };
    } catch {
      return undefined;
    }
  }
  /** Idle cores since this object was made, or undefined when too little time passed to say (under 10 ticks). */
  now(cores = availableParallelism()): number | undefined {
    const a = this.first;
    const b = IdleCores.read();
    if (!a || !b || b.total - a.total < 10) return undefined;
    const idle = (cores * (b.idle - a.idle)) / (b.total - a.total);
    const wallUs = Number(process.hrtime.bigint() - this.wall) / 1000;
    const used = process.cpuUsage(this.cpu);
    // This process's threads beyond the main one, in cores.
    const ours = wallUs > 0 ? Math.max(0, (used.user + used.system) / wallUs - 1) : 0;
    return Math.min(cores - 1, idle + ours);
  }
}

/**
 * How many worker threads judge a batch besides the main thread. `jobs` (--jobs) is the number
 * of threads in all when given. Otherwise a batch of POOL_MIN_INPUTS files or more gets a worker
 * for each core that is idle beyond the first (measured while the audit started, the main thread
 * busy; else the one-minute load average), at most one fewer than the cores. A worker costs
 * about 40% more CPU in all than one thread judging alone (its own start-up and compiled code,
 * every verdict cloned across, caches it does not share) and some 100 MB: on 2 cores it
 * gained at most a quarter of the wall time, so there the main thread judges alone; with
 * two idle cores or more it pays.
 */
export function workersFor(jobs: number | undefined, inputs: number, idleCores: number | undefined, cores = availableParallelism(), load = loadavg()[0]): number {
  if (jobs !== undefined) return Math.max(0, jobs - 1);
  if (inputs < POOL_MIN_INPUTS || cores < 2) return 0;
  // The load average counts the main thread too (it is running).
  const idle = idleCores ?? Math.max(0, cores - 1 - (load ?? cores));
  return Math.max(0, Math.min(cores - 1, Math.floor(idle + 0.25) - 1));
}

/**
 * Whether a batch that the main thread judges alone is read on a second thread (src/audit/reader.ts):
 * when its first POOL_MIN_INPUTS files are all case files (`inputs` counts them) and most of a
 * core is idle besides the main thread's (measured as for workersFor, else the load average).
 * The reading thread takes the reading and parsing off the main thread, which then only judges:
 * on an idle 2-core machine a 10,000-case audit took a quarter to a third less time. With that core busy it would only add its messages (and compete
 * with whatever keeps the core busy), so the main thread reads alone.
 */
export function readerPays(inputs: number, idleCores: number | undefined, cores = availableParallelism(), load = loadavg()[0]): boolean {
  if (inputs < POOL_MIN_INPUTS || cores < 2) return false;
  const idle = idleCores ?? Math.max(0, cores - 1 - (load ?? cores));
  return idle >= READER_IDLE;
}
/** The idle share of a core (beyond the main thread's) from which a reading thread pays. */
export const READER_IDLE = 0.75;

export interface JudgeAllOptions {
  rules: AuditRules;
  rulesOption: string | undefined;
  configWaivers: Waiver[];
  readStdin: () => Promise<string>;
  /** --jobs: threads in all (1: the main thread alone); undefined: chosen as workersFor says. */
  jobs: number | undefined;
  idle: IdleCores;
}

/** Every input of `refs` judged, in order: on the main thread alone, or with workers (see above). */
export async function* judgeAll(refs: AsyncIterable<InputRef | InputError>, o: JudgeAllOptions): AsyncGenerator<Judged> {
  const loader: LoaderContext = { rulesDir: o.rulesOption };
  const it = refs[Symbol.asyncIterator]();
  // The first files decide whether the batch is big enough; they are judged like the rest.
  const head: Array<InputRef | InputError> = [];
  let ended = false;
  const canPool = (o.jobs === undefined || o.jobs > 1) && shippedLoaders() && existsSync(fileURLToPath(WORKER_URL));
  if (canPool && o.jobs === undefined) {
    while (head.length < POOL_MIN_INPUTS) {
      const r = await it.next();
      if (r.done) {
        ended = true;
        break;
      }
      head.push(r.value);
    }
  }
  // Standard input is read by the main thread only.
  const workers = canPool && !head.some((r) => !(r instanceof InputError) && r.file === '-') ? workersFor(o.jobs, head.length, o.jobs === undefined ? o.idle.now() : undefined) : 0;
  const rest: AsyncIterator<InputRef | InputError> = {
    next: async () => (head.length ? { done: false, value: head.shift()! } : ended ? { done: true, value: undefined } : it.next()),
  };
  if (workers === 0) {
    const judge = async function* (inputs: AsyncIterable<AuditInput | InputError>) {
      for await (const input of inputs) yield await judgeLoaded(input, o.rules, o.configWaivers);
    };
    const here = (from: AsyncIterator<InputRef | InputError>) => loadInputs({ [Symbol.asyncIterator]: () => from }, o.readStdin, 8, loader);
    if (!canPool || o.jobs !== undefined || ended) {
      yield* judge(here(rest));
      return;
    }
    // A big batch: its first files are judged here, and the idle time measured meanwhile (the
    // main thread busy) decides whether the rest is read on a second thread.
    const first = head.splice(0);
    let i = 0;
    yield* judge(here({ next: async () => (i < first.length ? { done: false, value: first[i++]! } : { done: true, value: undefined }) }));
    const cases = first.filter((r) => !(r instanceof InputError) && r.kind === 'case').length;
    yield* judge(readerPays(cases, o.idle.now()) ? (await import('./reader.js')).loadInputsOnThread(it, o.readStdin, loader) : here(it));
    return;
  }
  yield* pooled(rest, o, loader, workers);
}

interface Slot {
  done: boolean;
  value?: Judged[];
  error?: unknown;
  promise: Promise<Judged[]>;
}

async function* pooled(it: AsyncIterator<InputRef | InputError>, o: JudgeAllOptions, loader: LoaderContext, count: number): AsyncGenerator<Judged> {
  const local = async (chunk: Array<InputRef | InputError>): Promise<Judged[]> => {
    const out: Judged[] = [];
    for (const ref of chunk) out.push(await judgeLoaded(await loadInput(ref, o.readStdin, loader), o.rules, o.configWaivers));
    return out;
  };
  // worker_threads is loaded only when a batch is judged on several threads.
  const { Worker } = await import('node:worker_threads');
  const lanes = Array.from({ length: count }, () => new Lane(new Worker(WORKER_URL, { workerData: { rulesOption: o.rulesOption, configWaivers: o.configWaivers } satisfies PoolWorkerData, execArgv: [] }), local, fromWire));
  // At most this many chunks judged ahead of the one printed next (memory stays bounded).
  const window = count * AHEAD + 2;
  const slots = new Map<number, Slot>();
  let next = 0;
  let printed = 0;
  let exhausted = false;
  let pendingError: InputError | undefined;
  /** The next chunk: up to CHUNK files, or one file that could not be listed (it is not sent). */
  const take = async (): Promise<Array<InputRef | InputError> | undefined> => {
    if (pendingError) {
      const e = pendingError;
      pendingError = undefined;
      return [e];
    }
    const chunk: InputRef[] = [];
    while (!exhausted && chunk.length < CHUNK) {
      const r = await it.next();
      if (r.done) exhausted = true;
      else if (r.value instanceof InputError) {
        if (chunk.length) pendingError = r.value;
        else return [r.value];
        break;
      } else chunk.push(r.value);
    }
    return chunk.length ? chunk : undefined;
  };
  const more = () => !exhausted || pendingError !== undefined;
  const keep = (promise: Promise<Judged[]>) => {
    const s: Slot = { done: false, promise };
    promise.then(
      (v) => ((s.done = true), (s.value = v)),
      (e: unknown) => ((s.done = true), (s.error = e)),
    );
    slots.set(next++, s);
  };
  try {
    for (;;) {
      for (const lane of lanes) {
        while (lane.open && lane.inFlight < AHEAD && more() && next - printed < window) {
          const chunk = await take();
          if (!chunk) break;
          keep(chunk.length === 1 && chunk[0] instanceof InputError ? local(chunk) : lane.run(next, chunk as InputRef[]));
        }
      }
      const s = slots.get(printed);
      if (s?.done) {
        slots.delete(printed++);
        if (s.error !== undefined) throw s.error;
        for (const j of s.value!) yield j;
        continue;
      }
      if (!s && !more()) return;
      // Rather than wait for the next chunk in order, the main thread judges one itself.
      if (more() && next - printed < window) {
        const chunk = await take();
        if (chunk) {
          const p = local(chunk);
          keep(p);
          await p.catch(() => undefined);
          continue;
        }
      }
      if (s) await s.promise.catch(() => undefined);
    }
  } finally {
    for (const lane of lanes) lane.close();
  }
}
