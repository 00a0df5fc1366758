import { parentPort, workerData } from 'node:worker_threads';
import { failOpsRing, runOpsWorker, type OpsWorkerData } from './opsThread.js';

/** Worker entry for OpsThread: parse ops.jsonl into the shared ring, then report counts and problems. */
try {
  parentPort!.postMessage(runOpsWorker(workerData as OpsWorkerData));
} catch (err) {
  failOpsRing((workerData as OpsWorkerData).sab);
  parentPort!.postMessage({ error: String((err as Error).message ?? err), code: (err as { code?: string }).code });
}
