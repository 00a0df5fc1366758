import { parentPort, workerData } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { loadInput, type InputRef } from './inputs.js';
import type { LaneReply, LaneRequest } from './lane.js';
import type { ReaderData, WireLoaded } from './reader.js';
import { errorToWire, inputToWire } from './wire.js';

// The reading thread of src/audit/reader.ts: it reads and loads each chunk of files it is sent
// (a case parsed and checked, a write-up extracted), in order, and sends back the loaded inputs.

const data = workerData as ReaderData;
const port = parentPort!;
const noStdin = () => Promise.reject(new Error('a reading thread never reads standard input'));
let queue: Promise<void> = Promise.resolve();

port.on('message', (req: LaneRequest) => {
  queue = queue.then(async () => {
    let reply: LaneReply<WireLoaded>;
    try {
      const out: WireLoaded[] = [];
      for (const ref of req.refs as InputRef[]) {
        const loaded = await loadInput(ref, noStdin, { rulesDir: data.rulesOption });
        out.push(loaded instanceof InputError ? { skipped: errorToWire(loaded) } : { input: inputToWire(loaded) });
      }
      reply = { seq: req.seq, out };
    } catch (err) {
      // Not this thread's to report: the main thread loads the chunk again and meets the error itself.
      reply = { seq: req.seq, failed: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
});
