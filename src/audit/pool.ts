import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { InputError } from '../errors.js';
import type { Waiver } from '../case/waivers.js';
import { loadInput, loadInputs, shippedLoaders, type InputRef, type LoaderContext } from './inputs.js';
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
export interface PoolRequest {
  seq: number;
  refs: InputRef[];
}
export type PoolReply = { seq: number; out: WireJudged[] } | { seq: number; failed: string };

const WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * CPU time no process used, in cores, between two readings of /proc/stat: what a worker
 * started now would get. Undefined where there is no /proc/stat (then the load average says).
 */
export class IdleCores {
  private readonly first = IdleCores.read();
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
    return (cores * (b.idle - a.idle)) / (b.total - a.total);
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
    const all = { [Symbol.asyncIterator]: () => rest };
    for await (const input of loadInputs(all, o.readStdin, 8, loader)) yield await judgeLoaded(input, o.rules, o.configWaivers);
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
  const lanes = Array.from({ length: count }, () => new Lane(new Worker(WORKER_URL, { workerData: { rulesOption: o.rulesOption, configWaivers: o.configWaivers } satisfies PoolWorkerData, execArgv: [] }), local));
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

/** One worker thread and the chunks it has been sent. A worker that fails hands its chunks back to the main thread. */
class Lane {
  private readonly waiting = new Map<number, { chunk: InputRef[]; resolve: (v: Judged[]) => void; reject: (e: unknown) => void }>();
  open = true;

  /** `worker`: started with no inherited node flags (ours need none, and some stop a worker from starting at all). */
  constructor(private readonly worker: Worker, private readonly local: (chunk: InputRef[]) => Promise<Judged[]>) {
    this.worker.on('message', (m: PoolReply) => {
      const w = this.waiting.get(m.seq);
      if (!w) return;
      this.waiting.delete(m.seq);
      if ('failed' in m) this.local(w.chunk).then(w.resolve, w.reject);
      else w.resolve(m.out.map(fromWire));
    });
    const fail = () => {
      // The worker is gone (it could not start, or died): its chunks are judged here instead.
      this.open = false;
      for (const [seq, w] of this.waiting) {
        this.waiting.delete(seq);
        this.local(w.chunk).then(w.resolve, w.reject);
      }
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  get inFlight(): number {
    return this.waiting.size;
  }

  run(seq: number, chunk: InputRef[]): Promise<Judged[]> {
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { chunk, resolve, reject });
      const req: PoolRequest = { seq, refs: chunk };
      this.worker.postMessage(req);
    });
  }

  close(): void {
    this.open = false;
    this.worker.removeAllListeners('exit');
    void this.worker.terminate();
  }
}
