/**
 * A scanner for the flat JSON objects of ops.jsonl and probe.jsonl (string, integer, null and
 * boolean values), reused across lines so the hot path allocates only the strings it keeps.
 * Anything else — escapes, fractions, nesting, odd spacing it does not expect — makes it give
 * up, and the caller falls back to JSON.parse with full validation and messages.
 *
 * It never accepts what JSON.parse refuses (scripts/fuzz-lib.ts compares the two on mutated
 * lines): whitespace is only space, tab, CR and LF; numbers have no leading zeros; strings and
 * keys hold no raw control bytes; a line with bytes >= 0x80 must be valid UTF-8.
 */
import { isUtf8 } from 'node:buffer';
import type { Clock } from './clock.js';

export const F_STR = 0;
export const F_NUM = 1;
export const F_NULL = 2;
export const F_TRUE = 3;
export const F_FALSE = 4;
/**
 * A non-negative integer past 2^53 (up to 20 digits: a u64 of nanoseconds): its digits are
 * vStart..vEnd, `num` the nearest double. Only time fields take it (see clock.ts relDigits).
 */
export const F_BIG = 5;
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

const EMPTY = Buffer.alloc(0);

/** JSON whitespace (RFC 8259): space, tab, LF, CR — not other control bytes. */
function isWs(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

/** Buffer's own latin1 decoder, which toString('latin1') calls: not in the typings, so looked up (absent: toString). */
const latin1Slice = (Buffer.prototype as unknown as { latin1Slice?: (start: number, end: number) => string }).latin1Slice;

/** Encode a key once, to compare with `keyIs`. */
export function key(name: string): Uint8Array {
  return Buffer.from(name, 'latin1');
}

/** The hash `next` computes over a key's bytes (ASCII names). */
export function keyHash(name: string): number {
  let h = 0;
  for (let k = 0; k < name.length; k++) h = (Math.imul(h, 31) + name.charCodeAt(k)) | 0;
  return h;
}

export class FlatJson {
  s: Buffer = EMPTY;
  private i = 0;
  private end = 0;
  private first = true;
  private lineStart = 0;
  /** OR of every key and string byte of the line: >= 0x80 means the line must be checked as UTF-8. */
  private high = 0;
  keyStart = 0;
  keyEnd = 0;
  /** keyHash(name) of the current key: compare it before keyIs to skip keys the caller ignores. */
  keyHash = 0;
  type = 0;
  vStart = 0;
  /** The current string value is ASCII (so its bytes are its char codes). */
  ascii = true;
  vEnd = 0;
  num = 0;

  /** Start on the line b[start, end); false when it does not open an object. */
  reset(s: Buffer, start: number, end: number): boolean {
    this.s = s;
    let i = start;
    while (i < end && isWs(s[i]!)) i++;
    if (i >= end || s[i] !== 123 /* { */) return false;
    this.i = i + 1;
    this.end = end;
    this.first = true;
    this.lineStart = start;
    this.high = 0;
    return true;
  }

  /** 1: a field is ready; 0: the object ended cleanly; -1: give up. */
  next(): number {
    // Locals rather than fields in the byte loops: this runs for every field of every line.
    const s = this.s;
    const end = this.end;
    let i = this.i;
    while (i < end && isWs(s[i]!)) i++;
    let c = i < end ? s[i]! : -1;
    if (c === 125 /* } */) {
      i++;
      while (i < end && isWs(s[i]!)) i++;
      this.i = i;
      if (i !== end) return -1;
      return this.high < 128 || isUtf8(s.subarray(this.lineStart, end)) ? 0 : -1;
    }
    if (!this.first) {
      if (c !== 44 /* , */) return -1;
      i++;
      while (i < end && isWs(s[i]!)) i++;
      c = i < end ? s[i]! : -1;
    }
    this.first = false;
    if (c !== 34) return -1;
    const ks = i + 1;
    let k = ks;
    let h = 0;
    let high = 0;
    for (;;) {
      if (k >= end) return -1;
      const d = s[k]!;
      if (d === 34) break;
      if (d === 92 || d < 32) return -1;
      h = (Math.imul(h, 31) + d) | 0;
      high |= d;
      k++;
    }
    this.high |= high;
    this.keyStart = ks;
    this.keyEnd = k;
    this.keyHash = h;
    i = k + 1;
    while (i < end && isWs(s[i]!)) i++;
    if ((i < end ? s[i]! : -1) !== 58 /* : */) return -1;
    i++;
    while (i < end && isWs(s[i]!)) i++;
    c = i < end ? s[i]! : -1;
    if (c === 34) {
      const vs = i + 1;
      k = vs;
      let vHigh = 0;
      for (;;) {
        if (k >= end) return -1;
        const d = s[k]!;
        if (d === 34) break;
        if (d === 92 || d < 32) return -1;
        vHigh |= d;
        k++;
      }
      this.ascii = vHigh < 128;
      this.high |= vHigh;
      this.type = F_STR;
      this.vStart = vs;
      this.vEnd = k;
      this.i = k + 1;
      return 1;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      k = i;
      let neg = false;
      if (c === 45) {
        neg = true;
        k++;
      }
      const ds = k;
      let v = 0;
      while (k < end) {
        const d = s[k]!;
        if (d < 48 || d > 57) break;
        v = v * 10 + (d - 48);
        k++;
      }
      if (k === ds || k - ds > 20) return -1;
      // JSON has no leading zeros: 0 and -0 yes, 007 no.
      if (s[ds] === 48 && k - ds > 1) return -1;
      const d = k < end ? s[k] : -1;
      if (d === 46 || d === 101 || d === 69) return -1;
      this.vStart = ds;
      this.vEnd = k;
      if (!Number.isSafeInteger(v)) {
        if (neg) return -1;
        this.type = F_BIG;
        this.num = v;
        this.i = k;
        return 1;
      }
      this.type = F_NUM;
      this.num = neg ? -v : v;
      this.i = k;
      return 1;
    }
    this.i = i;
    if (this.word(NULL)) {
      this.type = F_NULL;
      this.i += 4;
      return 1;
    }
    if (this.word(TRUE)) {
      this.type = F_TRUE;
      this.i += 4;
      return 1;
    }
    if (this.word(FALSE)) {
      this.type = F_FALSE;
      this.i += 5;
      return 1;
    }
    return -1;
  }

  private word(w: Uint8Array): boolean {
    if (this.i + w.length > this.end) return false;
    for (let k = 0; k < w.length; k++) if (this.s[this.i + k] !== w[k]) return false;
    return true;
  }

  keyIs(name: Uint8Array): boolean {
    if (this.keyEnd - this.keyStart !== name.length) return false;
    for (let k = 0; k < name.length; k++) if (this.s[this.keyStart + k] !== name[k]) return false;
    return true;
  }

  /** The current value as a time: ns from the clock's origin; NaN when it is not a non-negative integer or out of the clock's range. */
  ns(clock: Clock): number {
    if (this.type === F_NUM) return this.num >= 0 ? clock.relNs(this.num) : NaN;
    if (this.type === F_BIG) return clock.relDigits(this.s, this.vStart, this.vEnd);
    return NaN;
  }

  /** The current string value. */
  str(): string {
    // toString costs a JS wrapper and an encoding lookup per call, a third of a short id's
    // decode (profile: slice + getEncodingOps); ASCII bytes decode the same as latin1.
    if (this.ascii && latin1Slice !== undefined) return latin1Slice.call(this.s, this.vStart, this.vEnd);
    return this.s.toString('utf8', this.vStart, this.vEnd);
  }

  /** Does the current string value equal `w`? */
  strIs(w: Uint8Array): boolean {
    if (this.vEnd - this.vStart !== w.length) return false;
    for (let k = 0; k < w.length; k++) if (this.s[this.vStart + k] !== w[k]) return false;
    return true;
  }
}
