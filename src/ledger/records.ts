import { isUtf8 } from 'node:buffer';
import { shown } from '../errors.js';
import { firstInvalidUtf8 } from '../fsutil.js';
import { Clock, CLOCK_RANGE_EXPECTED } from './clock.js';
import { F_FALSE, F_NULL, F_NUM, F_STR, F_TRUE, FlatJson, key, keyHash } from './flatjson.js';

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
  /**
   * How finely `tsNs` is known: the record happened in [tsNs, tsNs + resNs). 1 (default) for
   * probe.jsonl's integer nanoseconds; 1000 for ftrace's `seconds.microseconds` stamps.
   */
  resNs?: number | undefined;
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

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
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

/**
 * Without a clock, times are ns since boot as they are, up to 2^53 (what the parsers did before
 * the ledger kept its own time line, clock.ts).
 */
const ABSOLUTE = new Clock(0);

/**
 * A JSON time value as ns from the clock's origin: past 2^53 a double has rounded it, so the
 * integer literal is read again from the text. 'range': an integer the clock cannot place;
 * undefined: not a non-negative integer.
 */
function timeValue(v: unknown, name: string, text: string, clock: Clock): number | 'range' | undefined {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return undefined;
  let r: number;
  if (Number.isSafeInteger(v)) r = clock.relNs(v);
  else {
    const m = new RegExp(`"${name}"\\s*:\\s*(\\d{1,20})(?![\\d.eE])`).exec(text);
    if (m === null || Number(m[1]) !== v) return undefined;
    const b = Buffer.from(m[1]!, 'latin1');
    r = clock.relDigits(b, 0, b.length);
  }
  return r === r ? r : 'range';
}

function timeFail(name: string, v: unknown, t: 'range' | undefined, what = 'integer nanoseconds'): { ok: false; expected: string; got: string } {
  return t === 'range' ? fail(`"${name}": ${CLOCK_RANGE_EXPECTED}`, `"${name}": ${shown(v)}`) : fail(`"${name}": ${what}`, `"${name}": ${shown(v)}`);
}

const OP_EXAMPLE = '{"op": "req-17", "task": 311, "submit_ns": 4374190000, "done_ns": 6138369000, "reaches_target": true}';

const flat = new FlatJson();
const K_OP = key('op');
const H_OP = keyHash('op');
const K_TASK = key('task');
const H_TASK = keyHash('task');
const K_SUBMIT = key('submit_ns');
const H_SUBMIT = keyHash('submit_ns');
const K_DONE = key('done_ns');
const H_DONE = keyHash('done_ns');
const K_REACHES = key('reaches_target');
const H_REACHES = keyHash('reaches_target');
const K_EV = key('ev');
const H_EV = keyHash('ev');
const K_TS = key('ts_ns');
const H_TS = keyHash('ts_ns');
const K_INST = key('inst');
const H_INST = keyHash('inst');
const V_ENTRY = key('entry');
const V_RETURN = key('return');
const V_FILTERED = key('filtered');

/**
 * The fast path for a well-formed op line, written into `out` (reused by the reader: one object
 * for the whole file); false sends the line to the full parser.
 */
export function fastOpInto(out: OpRecord, b: Buffer, start: number, end: number, line: number, wantId = true, clock: Clock = ABSOLUTE): boolean {
  if (!flat.reset(b, start, end)) return false;
  let op: string | undefined;
  let task = -1;
  let submit = -1;
  let done: number | null = null;
  let reaches: boolean | undefined;
  for (;;) {
    const r = flat.next();
    if (r === 0) break;
    if (r < 0) return false;
    const t = flat.type;
    const kh = flat.keyHash;
    if (kh === H_OP && flat.keyIs(K_OP)) {
      if (t !== F_STR || flat.vEnd === flat.vStart) return false;
      // Trace text never names an operation: its id is not needed, so not decoded.
      op = wantId ? flat.str() : '';
    } else if (kh === H_TASK && flat.keyIs(K_TASK)) {
      if (t === F_NUM && flat.num >= 0) task = flat.num;
      else if (t !== F_NULL) return false;
    } else if (kh === H_SUBMIT && flat.keyIs(K_SUBMIT)) {
      submit = flat.ns(clock);
      if (!(submit >= 0)) return false;
    } else if (kh === H_DONE && flat.keyIs(K_DONE)) {
      if (t !== F_NULL) {
        done = flat.ns(clock);
        if (!(done >= 0)) return false;
      } else done = null;
    } else if (kh === H_REACHES && flat.keyIs(K_REACHES)) {
      if (t === F_TRUE) reaches = true;
      else if (t === F_FALSE) reaches = false;
      else if (t !== F_NULL) return false;
    }
  }
  if (op === undefined || submit < 0 || (done !== null && done < submit)) return false;
  out.op = op;
  out.task = task;
  out.submitNs = submit;
  out.doneNs = done;
  out.reachesTarget = reaches;
  out.line = line;
  return true;
}

/**
 * The fast path for a well-formed entry/return/filtered line, written into `out` (the builder
 * keeps nothing of a record, so the reader passes one object for every line); false sends the
 * line to the full parser.
 */
export function fastProbeInto(out: ProbeRecord, b: Buffer, start: number, end: number, line: number, clock: Clock = ABSOLUTE): boolean {
  if (!flat.reset(b, start, end)) return false;
  let ev: ProbeRecord['ev'] | undefined;
  let ts = -1;
  let task = -1;
  let inst: string | undefined;
  let op: string | undefined;
  for (;;) {
    const r = flat.next();
    if (r === 0) break;
    if (r < 0) return false;
    const t = flat.type;
    const kh = flat.keyHash;
    if (kh === H_EV && flat.keyIs(K_EV)) {
      if (t !== F_STR) return false;
      if (flat.strIs(V_ENTRY)) ev = 'entry';
      else if (flat.strIs(V_RETURN)) ev = 'return';
      else if (flat.strIs(V_FILTERED)) ev = 'filtered';
      else return false;
    } else if (kh === H_TS && flat.keyIs(K_TS)) {
      ts = flat.ns(clock);
      if (!(ts >= 0)) return false;
    } else if (kh === H_TASK && flat.keyIs(K_TASK)) {
      if (t === F_NUM && flat.num >= 0) task = flat.num;
      else if (t !== F_NULL) return false;
    } else if (kh === H_INST && flat.keyIs(K_INST)) {
      if (t === F_STR) inst = flat.str();
      else if (t === F_NUM) inst = String(flat.num);
      else if (t !== F_NULL) return false;
    } else if (kh === H_OP && flat.keyIs(K_OP)) {
      if (t === F_STR) op = flat.str();
      else if (t !== F_NULL) return false;
    }
  }
  if (ev === undefined || ts < 0) return false;
  out.ev = ev;
  out.tsNs = ts;
  out.task = task;
  out.inst = inst;
  out.op = op;
  out.line = line;
  return true;
}

/** A line's bytes as text for the full parsers: bytes that are not UTF-8 are refused, not replaced. */
function lineText(b: Buffer, start: number, end: number): string | { ok: false; expected: string; got: string } {
  const bytes = b.subarray(start, end);
  if (!isUtf8(bytes)) {
    const at = firstInvalidUtf8(bytes);
    return fail('a line of UTF-8 text', `the byte 0x${bytes[at]!.toString(16).padStart(2, '0')} at column ${bytes.toString('utf8', 0, at).length + 1}, which is not UTF-8`);
  }
  return bytes.toString('utf8');
}

/** The full `ops.jsonl` parser over bytes (what the reader falls back to when the fast path declines). */
export function fullOpBytes(b: Buffer, start: number, end: number, line: number, clock: Clock = ABSOLUTE): Parsed<OpRecord> {
  const text = lineText(b, start, end);
  return typeof text === 'string' ? parseOpLine(text, line, clock) : text;
}

/** The full `probe.jsonl` parser over bytes. */
export function fullProbeBytes(b: Buffer, start: number, end: number, line: number, clock: Clock = ABSOLUTE): Parsed<ProbeRecord | CounterRecord> {
  const text = lineText(b, start, end);
  return typeof text === 'string' ? parseProbeLine(text, line, clock) : text;
}

/** Parse one `ops.jsonl` line given as bytes b[start, end): a fast path, then the full parser. */
export function parseOpBytes(b: Buffer, start: number, end: number, line: number): Parsed<OpRecord> {
  const fast: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line };
  if (fastOpInto(fast, b, start, end, line)) return { ok: true, value: fast };
  return fullOpBytes(b, start, end, line);
}

/** Parse one `ops.jsonl` line. */
export function parseOpLine(text: string, line: number, clock: Clock = ABSOLUTE): Parsed<OpRecord> {
  const o = parseObject(text);
  if (typeof o === 'string') return fail(`a JSON object per line, like ${OP_EXAMPLE}`, o);
  const op = o.op;
  if (typeof op !== 'string' || op === '') return fail('"op": a non-empty string', `"op": ${shown(op)}`);
  const task = o.task;
  if (task !== undefined && task !== null && !(Number.isSafeInteger(task) && (task as number) >= 0)) return fail('"task": a pid (integer) or absent', `"task": ${shown(task)}`);
  const submit = timeValue(o.submit_ns, 'submit_ns', text, clock);
  if (typeof submit !== 'number') return timeFail('submit_ns', o.submit_ns, submit);
  const doneRaw = o.done_ns;
  const done = doneRaw === null || doneRaw === undefined ? null : timeValue(doneRaw, 'done_ns', text, clock);
  if (done !== null && typeof done !== 'number') return timeFail('done_ns', doneRaw, done, 'integer nanoseconds or null');
  if (done !== null && done < submit) return fail('"done_ns" not before "submit_ns"', `${shown(doneRaw)} < ${shown(o.submit_ns)}`);
  const reaches = o.reaches_target;
  if (reaches !== undefined && reaches !== null && typeof reaches !== 'boolean') return fail('"reaches_target": true or false', `"reaches_target": ${shown(reaches)}`);
  return {
    ok: true,
    value: {
      op,
      task: typeof task === 'number' ? task : -1,
      submitNs: submit,
      doneNs: done,
      reachesTarget: typeof reaches === 'boolean' ? reaches : undefined,
      line,
    },
  };
}

const PROBE_EXAMPLE = '{"ev": "entry", "inst": "ffff8881c0a1e400:42", "task": 311, "ts_ns": 4374190000}';

/** Parse one `probe.jsonl` line given as bytes b[start, end): a fast path, then the full parser. */
export function parseProbeBytes(b: Buffer, start: number, end: number, line: number): Parsed<ProbeRecord | CounterRecord> {
  const fast: ProbeRecord = { ev: 'entry', tsNs: 0, task: -1, inst: undefined, op: undefined, line };
  if (fastProbeInto(fast, b, start, end, line)) return { ok: true, value: fast };
  return fullProbeBytes(b, start, end, line);
}

/** Parse one `probe.jsonl` line into a probe record or a counter snapshot. */
export function parseProbeLine(text: string, line: number, clock: Clock = ABSOLUTE): Parsed<ProbeRecord | CounterRecord> {
  const o = parseObject(text);
  if (typeof o === 'string') return fail(`a JSON object per line, like ${PROBE_EXAMPLE}`, o);
  const ev = o.ev;
  if (ev === 'counter') {
    if (typeof o.name !== 'string' || o.name === '') return fail('"name": the counter name (nmissed, kprobe_nmissed)', `"name": ${shown(o.name)}`);
    if (!isCount(o.value)) return fail('"value": a non-negative integer', `"value": ${shown(o.value)}`);
    const cts = o.ts_ns === undefined ? undefined : timeValue(o.ts_ns, 'ts_ns', text, clock);
    if (o.ts_ns !== undefined && typeof cts !== 'number') return timeFail('ts_ns', o.ts_ns, cts);
    if (o.epoch !== undefined && o.epoch !== null && typeof o.epoch !== 'string' && typeof o.epoch !== 'number') return fail('"epoch": a registration label (string)', `"epoch": ${shown(o.epoch)}`);
    const epoch = o.epoch === undefined || o.epoch === null ? undefined : String(o.epoch);
    return { ok: true, value: { name: o.name, value: o.value, epoch, tsNs: cts as number | undefined, line } };
  }
  if (ev !== 'entry' && ev !== 'return' && ev !== 'filtered') return fail('"ev": entry, return, filtered or counter', `"ev": ${shown(ev)}`);
  const ts = timeValue(o.ts_ns, 'ts_ns', text, clock);
  if (typeof ts !== 'number') return timeFail('ts_ns', o.ts_ns, ts);
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
      tsNs: ts,
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
