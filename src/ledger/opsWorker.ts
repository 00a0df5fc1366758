import { parentPort, workerData } from 'node:worker_threads';
import { runOpsWorker } from './opsThread.js';

/** Worker entry for OpsThread: parse ops.jsonl into the shared ring, then report counts and problems. */
const { file, sab, keep } = workerData as { file: string; sab: SharedArrayBuffer; keep: number };
try {
  parentPort!.postMessage(runOpsWorker(file, sab, keep));
} catch (err) {
  parentPort!.postMessage({ error: String((err as Error).message ?? err), code: (err as { code?: string }).code });
}
