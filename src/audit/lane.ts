import type { Worker } from 'node:worker_threads';
import type { InputRef } from './inputs.js';

/** A worker's answer to one chunk: its outputs in wire form, or why it could not (the main thread then does the chunk itself). */
/** One chunk of files sent to a worker, numbered so its answer finds its place. */
export interface LaneRequest {
  seq: number;
  refs: InputRef[];
}

export type LaneReply<W> = { seq: number; out: W[] } | { seq: number; failed: string };

/**
 * One worker thread and the chunks of files it has been sent, answered in wire form (W, decoded
 * into T). A worker that fails hands its chunks back to the main thread (`local`).
 */
export class Lane<W, T> {
  private readonly waiting = new Map<number, { chunk: InputRef[]; resolve: (v: T[]) => void; reject: (e: unknown) => void }>();
  open = true;

  /** `worker`: started with no inherited node flags (ours need none, and some stop a worker from starting at all). */
  constructor(
    private readonly worker: Worker,
    private readonly local: (chunk: InputRef[]) => Promise<T[]>,
    private readonly decode: (w: W) => T,
  ) {
    this.worker.on('message', (m: LaneReply<W>) => {
      const w = this.waiting.get(m.seq);
      if (!w) return;
      this.waiting.delete(m.seq);
      if ('failed' in m) this.local(w.chunk).then(w.resolve, w.reject);
      else w.resolve(m.out.map(this.decode));
    });
    const fail = () => {
      // The worker is gone (it could not start, or died): its chunks are done here instead.
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

  run(seq: number, chunk: InputRef[]): Promise<T[]> {
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { chunk, resolve, reject });
      const req: LaneRequest = { seq, refs: chunk };
      this.worker.postMessage(req);
    });
  }

  close(): void {
    this.open = false;
    this.worker.removeAllListeners('exit');
    void this.worker.terminate();
  }
}
