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

/** Buffer's own latin1 decoder (see flatjson.ts): ASCII bytes decode the same as latin1. */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (start: number, end: number) => string }).latin1Slice;

/*
 * The shape most writers give an op line: ledger-format.md's keys in its order, compact or with
 * spaces after ':' and ',', ASCII ids without escapes, integers of at most 15 digits. Read by
 * matching those bytes in place, it costs about half of the flat scan, which hashes every key,
 * skips whitespace anywhere and tracks UTF-8. Anything else (another order, another field,
 * escapes, a fraction) gives up at the first byte that differs, and the line goes to the flat
 * scan as before; after SHAPE_GIVE_UP lines in a row that do, a file is taken to be written
 * otherwise and the shape is no longer tried.
 */
const SHAPE_GIVE_UP = 256;
let opShapeMisses = 0;
/** The value shapeUint read, or the end of the string shapeStr read. */
let shapeV = 0;

/** b[i..) after spaces. */
function shapeSp(b: Buffer, i: number, end: number): number {
  while (i < end && b[i] === 32) i++;
  return i;
}

/*
 * The shapes' keys, each matched byte by byte against constants: a loop over a literal's bytes
 * (loading each from its array) was a fifth of the ops line parse. Each gives the position past
 * the key and the spaces after it, or -1 (also for i = -1, so that the steps chain).
 */

/** `"op":` at b[i]: past it and the spaces after it, or -1. */
function litOp(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 5 > end || !(b[i] === 34 && b[i + 1] === 111 && b[i + 2] === 112 && b[i + 3] === 34 && b[i + 4] === 58)) return -1;
  return shapeSp(b, i + 5, end);
}

/** `"task":` at b[i]: past it and the spaces after it, or -1. */
function litTask(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 7 > end || !(b[i] === 34 && b[i + 1] === 116 && b[i + 2] === 97 && b[i + 3] === 115 && b[i + 4] === 107 && b[i + 5] === 34 && b[i + 6] === 58)) return -1;
  return shapeSp(b, i + 7, end);
}

/** `"submit_ns":` at b[i]: past it and the spaces after it, or -1. */
function litSubmit(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 12 > end || !(b[i] === 34 && b[i + 1] === 115 && b[i + 2] === 117 && b[i + 3] === 98 && b[i + 4] === 109 && b[i + 5] === 105 && b[i + 6] === 116 && b[i + 7] === 95 && b[i + 8] === 110 && b[i + 9] === 115 && b[i + 10] === 34 && b[i + 11] === 58)) return -1;
  return shapeSp(b, i + 12, end);
}

/** `"done_ns":` at b[i]: past it and the spaces after it, or -1. */
function litDone(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 10 > end || !(b[i] === 34 && b[i + 1] === 100 && b[i + 2] === 111 && b[i + 3] === 110 && b[i + 4] === 101 && b[i + 5] === 95 && b[i + 6] === 110 && b[i + 7] === 115 && b[i + 8] === 34 && b[i + 9] === 58)) return -1;
  return shapeSp(b, i + 10, end);
}

/** `"reaches_target":` at b[i]: past it and the spaces after it, or -1. */
function litReaches(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 17 > end || !(b[i] === 34 && b[i + 1] === 114 && b[i + 2] === 101 && b[i + 3] === 97 && b[i + 4] === 99 && b[i + 5] === 104 && b[i + 6] === 101 && b[i + 7] === 115 && b[i + 8] === 95 && b[i + 9] === 116 && b[i + 10] === 97 && b[i + 11] === 114 && b[i + 12] === 103 && b[i + 13] === 101 && b[i + 14] === 116 && b[i + 15] === 34 && b[i + 16] === 58)) return -1;
  return shapeSp(b, i + 17, end);
}

/** Past `,` and the spaces after it at b[i], or -1. */
function shapeComma(b: Buffer, i: number, end: number): number {
  i = shapeSp(b, i, end);
  return i < end && b[i] === 44 ? shapeSp(b, i + 1, end) : -1;
}

/** A non-negative JSON integer of 1-15 digits at b[i] into shapeV: past it, or -1. */
function shapeUint(b: Buffer, i: number, end: number): number {
  let k = i;
  let v = 0;
  while (k < end) {
    const d = b[k]!;
    if (d < 48 || d > 57) break;
    v = v * 10 + (d - 48);
    k++;
  }
  if (k === i || k - i > 15 || (b[i] === 48 && k - i > 1)) return -1;
  const d = k < end ? b[k] : -1;
  if (d === 46 || d === 101 || d === 69) return -1;
  shapeV = v;
  return k;
}

/** A non-empty ASCII string without escapes or control bytes at b[i] (its bytes end at shapeV): past it, or -1. */
function shapeStr(b: Buffer, i: number, end: number): number {
  if (i >= end || b[i] !== 34) return -1;
  let k = i + 1;
  for (;;) {
    if (k >= end) return -1;
    const d = b[k]!;
    if (d === 34) break;
    if (d === 92 || d < 32 || d > 126) return -1;
    k++;
  }
  if (k === i + 1) return -1;
  shapeV = k;
  return k + 1;
}

/** `null` at b[i]: past it, or -1. */
function shapeNull(b: Buffer, i: number, end: number): number {
  return i + 4 <= end && b[i] === 110 && b[i + 1] === 117 && b[i + 2] === 108 && b[i + 3] === 108 ? i + 4 : -1;
}

/** Only spaces, tabs and a CR from b[i] to the end of the line. */
function shapeTail(b: Buffer, i: number, end: number): boolean {
  for (; i < end; i++) {
    const d = b[i];
    if (d !== 32 && d !== 9 && d !== 13) return false;
  }
  return true;
}

/** An op line's fields into the reader's one record. */
function putOp(out: OpRecord, op: string, task: number, submit: number, done: number | null, reaches: boolean | undefined, line: number): true {
  out.op = op;
  out.task = task;
  out.submitNs = submit;
  out.doneNs = done;
  out.reachesTarget = reaches;
  out.line = line;
  return true;
}

/** The text shapeStrOrNull read: undefined for `null`. */
let shapeS: string | undefined;

/** shapeStr's string, or `null`, at b[i], its text into shapeS: past it, or -1. */
function shapeStrOrNull(b: Buffer, i: number, end: number): number {
  const n = shapeNull(b, i, end);
  if (n >= 0) {
    shapeS = undefined;
    return n;
  }
  const from = i + 1;
  const k = shapeStr(b, i, end);
  if (k < 0) return -1;
  shapeS = latin1Slice !== undefined ? latin1Slice.call(b, from, shapeV) : b.toString('latin1', from, shapeV);
  return k;
}

/**
 * Where fastOpInto found the op id of the line it accepted last: b[from, to), its bytes are its
 * characters when `ascii`. With `wantId` 'bytes' this is all it gives (the record's `op` is ''):
 * the reorder window keeps the bytes and makes the string when it hands the operation out.
 */
export const opIdSeen = { from: 0, to: 0, ascii: true };

/** What fastOpInto makes of the op id: the string (true), nothing (false), or only opIdSeen ('bytes'). */
export type WantId = boolean | 'bytes';

/** An op line in the common shape (see above) into `out`; false: not that shape, or not valid. */
function shapeOpInto(out: OpRecord, b: Buffer, start: number, end: number, line: number, wantId: WantId, clock: Clock): boolean {
  if (start >= end || b[start] !== 123 /* { */) return false;
  let i = litOp(b, shapeSp(b, start + 1, end), end);
  const opFrom = i + 1;
  i = shapeStr(b, i, end);
  if (i < 0) return false;
  const opTo = shapeV;
  i = litTask(b, shapeComma(b, i, end), end);
  if (i < 0) return false;
  let task = -1;
  const tn = shapeNull(b, i, end);
  if (tn >= 0) i = tn;
  else {
    i = shapeUint(b, i, end);
    if (i < 0) return false;
    task = shapeV;
  }
  i = litSubmit(b, shapeComma(b, i, end), end);
  if (i < 0) return false;
  i = shapeUint(b, i, end);
  if (i < 0) return false;
  const submit = clock.relNs(shapeV);
  if (!(submit >= 0)) return false;
  i = litDone(b, shapeComma(b, i, end), end);
  if (i < 0) return false;
  let done: number | null = null;
  const dn = shapeNull(b, i, end);
  if (dn >= 0) i = dn;
  else {
    i = shapeUint(b, i, end);
    if (i < 0) return false;
    done = clock.relNs(shapeV);
    if (!(done >= 0) || done < submit) return false;
  }
  i = litReaches(b, shapeComma(b, i, end), end);
  if (i < 0 || i + 4 > end) return false;
  let reaches: boolean | undefined;
  const c = b[i];
  if (c === 116 && b[i + 1] === 114 && b[i + 2] === 117 && b[i + 3] === 101) {
    reaches = true;
    i += 4;
  } else if (c === 102 && i + 5 <= end && b[i + 1] === 97 && b[i + 2] === 108 && b[i + 3] === 115 && b[i + 4] === 101) {
    reaches = false;
    i += 5;
  } else {
    i = shapeNull(b, i, end);
    if (i < 0) return false;
  }
  i = shapeSp(b, i, end);
  if (i >= end || b[i] !== 125 /* } */) return false;
  if (!shapeTail(b, i + 1, end)) return false;
  opIdSeen.from = opFrom;
  opIdSeen.to = opTo;
  opIdSeen.ascii = true;
  return putOp(out, wantId !== true ? '' : latin1Slice !== undefined ? latin1Slice.call(b, opFrom, opTo) : b.toString('latin1', opFrom, opTo), task, submit, done, reaches, line);
}

/**
 * The fast path for a well-formed op line, written into `out` (reused by the reader: one object
 * for the whole file); false sends the line to the full parser.
 */
export function fastOpInto(out: OpRecord, b: Buffer, start: number, end: number, line: number, wantId: WantId = true, clock: Clock = ABSOLUTE): boolean {
  if (opShapeMisses < SHAPE_GIVE_UP) {
    if (shapeOpInto(out, b, start, end, line, wantId, clock)) {
      opShapeMisses = 0;
      return true;
    }
    opShapeMisses++;
  }
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
      op = wantId === true ? flat.str() : '';
      opIdSeen.from = flat.vStart;
      opIdSeen.to = flat.vEnd;
      opIdSeen.ascii = flat.ascii;
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
  return putOp(out, op, task, submit, done, reaches, line);
}

let probeShapeMisses = 0;

/** `"ev":` at b[i] (constant bytes, as the op keys): past it and the spaces after it, or -1. */
function litEv(b: Buffer, i: number, end: number): number {
  if (i < 0 || i + 5 > end || !(b[i] === 34 && b[i + 1] === 101 && b[i + 2] === 118 && b[i + 3] === 34 && b[i + 4] === 58)) return -1;
  return shapeSp(b, i + 5, end);
}

/** `"entry"` at b[i]. */
function isEntry(b: Buffer, i: number, end: number): boolean {
  return i + 7 <= end && b[i] === 34 && b[i + 1] === 101 && b[i + 2] === 110 && b[i + 3] === 116 && b[i + 4] === 114 && b[i + 5] === 121 && b[i + 6] === 34;
}

/** `"return"` at b[i]. */
function isReturn(b: Buffer, i: number, end: number): boolean {
  return i + 8 <= end && b[i] === 34 && b[i + 1] === 114 && b[i + 2] === 101 && b[i + 3] === 116 && b[i + 4] === 117 && b[i + 5] === 114 && b[i + 6] === 110 && b[i + 7] === 34;
}

/** `"filtered"` at b[i]. */
function isFiltered(b: Buffer, i: number, end: number): boolean {
  return i + 10 <= end && b[i] === 34 && b[i + 1] === 102 && b[i + 2] === 105 && b[i + 3] === 108 && b[i + 4] === 116 && b[i + 5] === 101 && b[i + 6] === 114 && b[i + 7] === 101 && b[i + 8] === 100 && b[i + 9] === 34;
}

/**
 * A probe line in the common shape into `out`: `"ev"` first, then only the fields the ledger
 * reads or a probe module writes (inst, task, cpu, ts_ns, op, ret), in any order, with values as
 * for the op shape (an instance id as an ASCII string, `ret` a signed integer). False: not that
 * shape, or not valid (the flat scan decides).
 */
function shapeProbeInto(out: ProbeRecord, b: Buffer, start: number, end: number, line: number, clock: Clock): boolean {
  if (start >= end || b[start] !== 123 /* { */) return false;
  let i = litEv(b, shapeSp(b, start + 1, end), end);
  if (i < 0) return false;
  let ev: ProbeRecord['ev'];
  if (isEntry(b, i, end)) {
    ev = 'entry';
    i += 7;
  } else if (isReturn(b, i, end)) {
    ev = 'return';
    i += 8;
  } else if (isFiltered(b, i, end)) {
    ev = 'filtered';
    i += 10;
  } else return false;
  let ts = -1;
  let task = -1;
  let inst: string | undefined;
  let op: string | undefined;
  for (;;) {
    i = shapeSp(b, i, end);
    if (i >= end) return false;
    if (b[i] === 125 /* } */) break;
    i = shapeComma(b, i, end);
    // The key: `"`, its bytes, `"`, `:`; told apart by length and a byte or two.
    if (i < 0 || b[i] !== 34) return false;
    const k0 = i + 1;
    let k = k0;
    while (k < end && b[k] !== 34) k++;
    const kn = k - k0;
    i = shapeSp(b, k + 1, end);
    if (i >= end || b[i] !== 58 /* : */) return false;
    i = shapeSp(b, i + 1, end);
    const c0 = b[k0];
    const c1 = b[k0 + 1];
    if (kn === 4 && c0 === 105 && c1 === 110 && b[k0 + 2] === 115 && b[k0 + 3] === 116) {
      // inst
      i = shapeStrOrNull(b, i, end);
      if (i < 0) return false;
      inst = shapeS;
    } else if (kn === 4 && c0 === 116 && c1 === 97 && b[k0 + 2] === 115 && b[k0 + 3] === 107) {
      // task
      const n = shapeNull(b, i, end);
      if (n >= 0) {
        task = -1;
        i = n;
      } else {
        i = shapeUint(b, i, end);
        if (i < 0) return false;
        task = shapeV;
      }
    } else if (kn === 5 && c0 === 116 && c1 === 115 && b[k0 + 2] === 95 && b[k0 + 3] === 110 && b[k0 + 4] === 115) {
      // ts_ns
      i = shapeUint(b, i, end);
      if (i < 0) return false;
      ts = clock.relNs(shapeV);
      if (!(ts >= 0)) return false;
    } else if (kn === 2 && c0 === 111 && c1 === 112) {
      // op
      i = shapeStrOrNull(b, i, end);
      if (i < 0) return false;
      op = shapeS;
    } else if (kn === 3 && ((c0 === 99 && c1 === 112 && b[k0 + 2] === 117) || (c0 === 114 && c1 === 101 && b[k0 + 2] === 116))) {
      // cpu, ret: read past, as the flat scan does with a field it does not use.
      if (b[i] === 45 /* - */ && c0 === 114) i++;
      i = shapeUint(b, i, end);
      if (i < 0) return false;
    } else return false;
  }
  if (!shapeTail(b, i + 1, end)) return false;
  if (ts < 0) return false;
  out.ev = ev;
  out.tsNs = ts;
  out.task = task;
  out.inst = inst;
  out.op = op;
  out.line = line;
  return true;
}

/**
 * The fast path for a well-formed entry/return/filtered line, written into `out` (the builder
 * keeps nothing of a record, so the reader passes one object for every line); false sends the
 * line to the full parser.
 */
export function fastProbeInto(out: ProbeRecord, b: Buffer, start: number, end: number, line: number, clock: Clock = ABSOLUTE): boolean {
  if (probeShapeMisses < SHAPE_GIVE_UP) {
    if (shapeProbeInto(out, b, start, end, line, clock)) {
      probeShapeMisses = 0;
      return true;
    }
    probeShapeMisses++;
  }
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
