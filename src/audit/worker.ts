import { parentPort, workerData } from 'node:worker_threads';
import { loadInput, type InputRef } from './inputs.js';
import { judgeLoaded, loadAuditRules, toWire } from './judge.js';
import type { PoolWorkerData, PoolReply, PoolRequest } from './pool.js';

// A worker of src/audit/pool.ts: it loads the run's rules once, then reads and judges each chunk
// of files it is sent, in order, and sends back what the main thread would have got itself.

const data = workerData as PoolWorkerData;
const port = parentPort!;
const noStdin = () => Promise.reject(new Error('a worker never reads standard input'));
const rules = loadAuditRules(data.rulesOption);
let queue: Promise<void> = Promise.resolve();

port.on('message', (req: PoolRequest) => {
  // One chunk at a time, in the order sent.
  queue = queue.then(async () => {
    let reply: PoolReply;
    try {
      const r = await rules;
      const out = [];
      for (const ref of req.refs as InputRef[]) out.push(toWire(await judgeLoaded(await loadInput(ref, noStdin, { rulesDir: data.rulesOption }), r, data.configWaivers)));
      reply = { seq: req.seq, out };
    } catch (err) {
      // Not this worker's to report: the main thread judges the chunk again and meets the error itself.
      reply = { seq: req.seq, failed: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(reply);
  });
});
