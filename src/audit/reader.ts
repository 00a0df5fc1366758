import { InputError } from '../errors.js';
import { loadInput, type AuditInput, type InputRef, type LoaderContext } from './inputs.js';
import { errorFromWire, inputFromWire } from './judge.js';
import { Lane } from './lane.js';
import type { WireError, WireInput } from './wire.js';

/**
 * Reading a batch of cases on a second thread while the main thread judges. Reading a case
 * file and parsing its YAML is a quarter to a third of a case audit's time; here a worker thread
 * (src/audit/readWorker.ts) reads and loads chunks of case files ahead, in order, and the main
 * thread only decodes what it sends. Unlike the judging pool (src/audit/pool.ts), what crosses is
 * small (the case, its text) and the worker loads no rules, so one idle core is enough for it to
 * pay (pool.ts, readerPays). Write-ups are read here: their extraction, with every fact's
 * position, costs about as much to clone across as to make, and judging them (the completion
 * search) is most of their time (1,000 write-ups took no less time). Inputs come out in the order
 * given, the same as loadInputs gives them.
 */

/** Files per message, and messages ahead of the one being judged (at most READ_CHUNK × READ_AHEAD inputs held). */
const READ_CHUNK = 32;
const READ_AHEAD = 4;

export interface ReaderData {
  /** --rules as given (undefined: the shipped rules): a write-up's lexicon comes from there. */
  rulesOption: string | undefined;
}
/** A loaded input, or why it could not be, as the reading thread sends it. */
export type WireLoaded = { input: WireInput } | { skipped: WireError };

const READER_URL = new URL('./readWorker.js', import.meta.url);

/** Inputs loaded by a reading thread and by the main thread so far (the benches and tests read them). */
export const READER_STATS = { thread: 0, here: 0 };

/** loadInputs (src/audit/inputs.ts) with the reading and loading done on a worker thread. */
export async function* loadInputsOnThread(from: AsyncIterator<InputRef | InputError>, readStdin: () => Promise<string>, ctx: LoaderContext = {}): AsyncGenerator<AuditInput | InputError> {
  const local = async (chunk: Array<InputRef | InputError>): Promise<Array<AuditInput | InputError>> => {
    const out: Array<AuditInput | InputError> = [];
    for (const ref of chunk) out.push(await loadInput(ref, readStdin, ctx));
    READER_STATS.here += out.length;
    return out;
  };
  // worker_threads is loaded only when a batch is read on a second thread. Its young generation
  // is kept small: what it parses is garbage once sent, and the default (16 MB semi-spaces) put
  // 30 MB on the audit's peak RSS for no time gained (10,000 cases: 200 MB, 168 MB at 8 MB).
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(READER_URL, { workerData: { rulesOption: ctx.rulesDir } satisfies ReaderData, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  const lane = new Lane<WireLoaded, AuditInput | InputError>(worker, local, (w) => {
    READER_STATS.thread++;
    return 'skipped' in w ? errorFromWire(w.skipped) : inputFromWire(w.input);
  });
  let seq = 0;
  let exhausted = false;
  /** What could not go into the chunk before it, to be read here: a file the walk could not list, standard input, a write-up. */
  let held: InputRef | InputError | undefined;
  /** The next chunk, and whether the main thread loads it itself. */
  const take = async (): Promise<{ refs: Array<InputRef | InputError>; here: boolean } | undefined> => {
    if (held) {
      const h = held;
      held = undefined;
      return { refs: [h], here: true };
    }
    const refs: InputRef[] = [];
    while (!exhausted && refs.length < READ_CHUNK) {
      const r = await from.next();
      if (r.done) exhausted = true;
      else if (r.value instanceof InputError || r.value.file === '-' || r.value.kind !== 'case') {
        if (!refs.length) return { refs: [r.value], here: true };
        held = r.value;
        break;
      } else refs.push(r.value);
    }
    return refs.length ? { refs, here: false } : undefined;
  };
  const queue: Array<Promise<Array<AuditInput | InputError>>> = [];
  try {
    for (;;) {
      while (queue.length < READ_AHEAD && (!exhausted || held)) {
        const chunk = await take();
        if (!chunk) break;
        const p = chunk.here || !lane.open ? local(chunk.refs) : lane.run(seq++, chunk.refs as InputRef[]);
        p.catch(() => {}); // surfaced in order below
        queue.push(p);
      }
      const next = queue.shift();
      if (!next) return;
      for (const input of await next) yield input;
    }
  } finally {
    lane.close();
  }
}
