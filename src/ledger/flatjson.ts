/**
 * A scanner for the flat JSON objects of ops.jsonl and probe.jsonl (string, integer, null and
 * boolean values), reused across lines so the hot path allocates only the strings it keeps.
 * Anything else — escapes, fractions, nesting, odd spacing it does not expect — makes it give
 * up, and the caller falls back to JSON.parse with full validation and messages.
 */
export const F_STR = 0;
export const F_NUM = 1;
export const F_NULL = 2;
export const F_TRUE = 3;
export const F_FALSE = 4;
const NULL = Buffer.from('null');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');

const EMPTY = Buffer.alloc(0);

/** Encode a key once, to compare with `keyIs`. */
export function key(name: string): Uint8Array {
  return Buffer.from(name, 'latin1');
}

export class FlatJson {
  s: Buffer = EMPTY;
  private i = 0;
  private end = 0;
  private first = true;
  keyStart = 0;
  keyEnd = 0;
  type = 0;
  vStart = 0;
  vEnd = 0;
  num = 0;

  /** Start on the line b[start, end); false when it does not open an object. */
  reset(s: Buffer, start: number, end: number): boolean {
    this.s = s;
    let i = start;
    while (i < end && s[i]! <= 32) i++;
    if (i >= end || s[i] !== 123 /* { */) return false;
    this.i = i + 1;
    this.end = end;
    this.first = true;
    return true;
  }

  private ws(): void {
    const s = this.s;
    while (this.i < this.end && s[this.i]! <= 32) this.i++;
  }

  /** 1: a field is ready; 0: the object ended cleanly; -1: give up. */
  next(): number {
    const s = this.s;
    this.ws();
    let c = (this.i < this.end ? s[this.i]! : -1);
    if (c === 125 /* } */) {
      this.i++;
      this.ws();
      return this.i === this.end ? 0 : -1;
    }
    if (!this.first) {
      if (c !== 44 /* , */) return -1;
      this.i++;
      this.ws();
      c = (this.i < this.end ? s[this.i]! : -1);
    }
    this.first = false;
    if (c !== 34) return -1;
    const ks = this.i + 1;
    let ke = -1;
    for (let k = ks; k < this.end; k++) {
      const d = s[k];
      if (d === 34) {
        ke = k;
        break;
      }
      if (d === 92) return -1;
    }
    if (ke < 0) return -1;
    this.keyStart = ks;
    this.keyEnd = ke;
    this.i = ke + 1;
    this.ws();
    if ((this.i < this.end ? s[this.i]! : -1) !== 58 /* : */) return -1;
    this.i++;
    this.ws();
    c = (this.i < this.end ? s[this.i]! : -1);
    if (c === 34) {
      const vs = this.i + 1;
      let ve = -1;
      for (let k = vs; k < this.end; k++) {
        const d = s[k]!;
        if (d === 34) {
          ve = k;
          break;
        }
        if (d === 92 || d < 32) return -1;
      }
      if (ve < 0) return -1;
      this.type = F_STR;
      this.vStart = vs;
      this.vEnd = ve;
      this.i = ve + 1;
      return 1;
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      let k = this.i;
      let neg = false;
      if (c === 45) {
        neg = true;
        k++;
      }
      const ds = k;
      let v = 0;
      while (k < this.end) {
        const d = s[k]!;
        if (d < 48 || d > 57) break;
        v = v * 10 + (d - 48);
        k++;
      }
      if (k === ds || k - ds > 16) return -1;
      const d = k < this.end ? s[k] : -1;
      if (d === 46 || d === 101 || d === 69) return -1;
      if (!Number.isSafeInteger(v)) return -1;
      this.type = F_NUM;
      this.num = neg ? -v : v;
      this.i = k;
      return 1;
    }
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

  /** The current string value. */
  str(): string {
    return this.s.toString('utf8', this.vStart, this.vEnd);
  }

  /** Does the current string value equal `w`? */
  strIs(w: Uint8Array): boolean {
    if (this.vEnd - this.vStart !== w.length) return false;
    for (let k = 0; k < w.length; k++) if (this.s[this.vStart + k] !== w[k]) return false;
    return true;
  }
}
