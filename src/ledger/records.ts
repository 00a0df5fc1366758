import { shown } from '../errors.js';

/**
 * The ledger's two inputs in normalised form, and the pure JSON Lines parsers for them
 * (ledger-format.md: unknown fields are ignored, never an error).
 */

/** One external operation from `ops.jsonl`. */
export interface OpRecord {
  op: string;
  /** -1 when the ledger does not know the task. */
  task: number;
  submitNs: number;
  /** null: the test had not seen it complete when capture stopped. */
  doneNs: number | null;
  /** undefined: the field was absent (treated as eligible, and said so). */
  reachesTarget: boolean | undefined;
  line: number;
}

/** One probe record: from `probe.jsonl`, or an entry/return line of trace text. */
export interface ProbeRecord {
  ev: 'entry' | 'return' | 'filtered';
  tsNs: number;
  /** -1 when absent. */
  task: number;
  inst: string | undefined;
  op: string | undefined;
  line: number;
}

/** A counter snapshot record (`"ev": "counter"`). */
export interface CounterRecord {
  name: string;
  value: number;
  epoch: string | undefined;
  tsNs: number | undefined;
  line: number;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string; got: string };

function fail(expected: string, got: string): { ok: false; expected: string; got: string } {
  return { ok: false, expected, got };
}

function parseObject(text: string): Record<string, unknown> | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return shown(text);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return shown(text);
  return v as Record<string, unknown>;
}

function isNs(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

const OP_EXAMPLE = '{"op": "req-17", "task": 311, "submit_ns": 4374190000, "done_ns": 6138369000, "reaches_target": true}';

/** Parse one `ops.jsonl` line. */
export function parseOpLine(text: string, line: number): Parsed<OpRecord> {
  const o = parseObject(text);
  if (typeof o === 'string') return fail(`a JSON object per line, like ${OP_EXAMPLE}`, o);
  const op = o.op;
  if (typeof op !== 'string' || op === '') return fail('"op": a non-empty string', `"op": ${shown(op)}`);
  const task = o.task;
  if (task !== undefined && task !== null && !(Number.isSafeInteger(task) && (task as number) >= 0)) return fail('"task": a pid (integer) or absent', `"task": ${shown(task)}`);
  if (!isNs(o.submit_ns)) return fail('"submit_ns": integer nanoseconds', `"submit_ns": ${shown(o.submit_ns)}`);
  const done = o.done_ns;
  if (done !== null && done !== undefined && !isNs(done)) return fail('"done_ns": integer nanoseconds or null', `"done_ns": ${shown(done)}`);
  if (typeof done === 'number' && done < o.submit_ns) return fail('"done_ns" not before "submit_ns"', `${done} < ${o.submit_ns}`);
  const reaches = o.reaches_target;
  if (reaches !== undefined && reaches !== null && typeof reaches !== 'boolean') return fail('"reaches_target": true or false', `"reaches_target": ${shown(reaches)}`);
  return {
    ok: true,
    value: {
      op,
      task: typeof task === 'number' ? task : -1,
      submitNs: o.submit_ns,
      doneNs: typeof done === 'number' ? done : null,
      reachesTarget: typeof reaches === 'boolean' ? reaches : undefined,
      line,
    },
  };
}

const PROBE_EXAMPLE = '{"ev": "entry", "inst": "ffff8881c0a1e400:42", "task": 311, "ts_ns": 4374190000}';

/** Parse one `probe.jsonl` line into a probe record or a counter snapshot. */
export function parseProbeLine(text: string, line: number): Parsed<ProbeRecord | CounterRecord> {
  const o = parseObject(text);
  if (typeof o === 'string') return fail(`a JSON object per line, like ${PROBE_EXAMPLE}`, o);
  const ev = o.ev;
  if (ev === 'counter') {
    if (typeof o.name !== 'string' || o.name === '') return fail('"name": the counter name (nmissed, kprobe_nmissed)', `"name": ${shown(o.name)}`);
    if (!isNs(o.value)) return fail('"value": a non-negative integer', `"value": ${shown(o.value)}`);
    if (o.ts_ns !== undefined && !isNs(o.ts_ns)) return fail('"ts_ns": integer nanoseconds', `"ts_ns": ${shown(o.ts_ns)}`);
    const epoch = o.epoch === undefined || o.epoch === null ? undefined : String(o.epoch);
    return { ok: true, value: { name: o.name, value: o.value, epoch, tsNs: o.ts_ns as number | undefined, line } };
  }
  if (ev !== 'entry' && ev !== 'return' && ev !== 'filtered') return fail('"ev": entry, return, filtered or counter', `"ev": ${shown(ev)}`);
  if (!isNs(o.ts_ns)) return fail('"ts_ns": integer nanoseconds', `"ts_ns": ${shown(o.ts_ns)}`);
  const task = o.task;
  if (task !== undefined && task !== null && !(Number.isSafeInteger(task) && (task as number) >= 0)) return fail('"task": a pid (integer) or absent', `"task": ${shown(task)}`);
  const inst = o.inst;
  if (inst !== undefined && inst !== null && typeof inst !== 'string' && typeof inst !== 'number') return fail('"inst": a string or number', `"inst": ${shown(inst)}`);
  const op = o.op;
  if (op !== undefined && op !== null && typeof op !== 'string') return fail('"op": a string', `"op": ${shown(op)}`);
  return {
    ok: true,
    value: {
      ev,
      tsNs: o.ts_ns,
      task: typeof task === 'number' ? task : -1,
      inst: inst === undefined || inst === null ? undefined : String(inst),
      op: typeof op === 'string' ? op : undefined,
      line,
    },
  };
}

export function isCounter(r: ProbeRecord | CounterRecord): r is CounterRecord {
  return (r as ProbeRecord).ev === undefined;
}
