/**
 * A hash table from id strings to values, for the ledger's two indexes that records and
 * operations go through one after another (instance ids, operation ids).
 *
 * A Map under constant insert and delete rebuilds its backing store each time deleted entries
 * fill it, and those stores lived long enough to be promoted: on a 1 M-record probe.jsonl run
 * they were 41 of the 47 MB a sampling heap profile saw promoted and then collected (the two
 * Maps' `set`, in activate and entry). Here a deleted slot is reused and the table is rebuilt
 * into a second set of arrays kept for it, so nothing is allocated but when the live entries
 * outgrow the arrays. `values()` gives insertion order, as a Map's does (a key set again keeps
 * its place; deleted and set again, it goes last).
 */
const EMPTY = 0;
const LIVE = 1;
const DELETED = 2;

function hashOf(s: string): number {
  let h = 0;
  for (let k = 0; k < s.length; k++) h = (Math.imul(h, 31) + s.charCodeAt(k)) | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x45d9f3b);
  return h ^ (h >>> 16);
}

interface Slots<V> {
  keys: (string | undefined)[];
  vals: (V | undefined)[];
  hashes: Int32Array;
  state: Uint8Array;
  seqs: Float64Array;
}

function slots<V>(cap: number): Slots<V> {
  return { keys: new Array<string | undefined>(cap).fill(undefined), vals: new Array<V | undefined>(cap).fill(undefined), hashes: new Int32Array(cap), state: new Uint8Array(cap), seqs: new Float64Array(cap) };
}

export class IdTable<V> {
  private cap = 64;
  private a: Slots<V> = slots(64);
  /** The rebuild's target, as large as `a`. */
  private b: Slots<V> = slots(64);
  private live = 0;
  /** Live and deleted slots. */
  private used = 0;
  private seq = 0;

  get size(): number {
    return this.live;
  }

  private find(key: string, h: number): number {
    const { keys, hashes, state } = this.a;
    const mask = this.cap - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const st = state[i];
      if (st === EMPTY) return -1;
      if (st === LIVE && hashes[i] === h && keys[i] === key) return i;
    }
  }

  get(key: string): V | undefined {
    const i = this.find(key, hashOf(key));
    return i < 0 ? undefined : this.a.vals[i];
  }

  set(key: string, v: V): void {
    this.swap(key, v);
  }

  /**
   * set(), giving back the value the key had (undefined: none): one hash and one probe where
   * get() then set() took two (the ledger does this for every operation and every instance).
   */
  swap(key: string, v: V): V | undefined {
    const h = hashOf(key);
    const a = this.a;
    const mask = this.cap - 1;
    let free = -1;
    let i = h & mask;
    for (; ; i = (i + 1) & mask) {
      const st = a.state[i];
      if (st === EMPTY) break;
      if (st === DELETED) {
        if (free < 0) free = i;
      } else if (a.hashes[i] === h && a.keys[i] === key) {
        const old = a.vals[i];
        a.vals[i] = v;
        return old;
      }
    }
    if (free < 0) {
      free = i;
      this.used++;
    }
    a.state[free] = LIVE;
    a.keys[free] = key;
    a.vals[free] = v;
    a.hashes[free] = h;
    a.seqs[free] = this.seq++;
    this.live++;
    if (this.used * 2 > this.cap) this.rebuild();
    return undefined;
  }

  delete(key: string): boolean {
    const i = this.find(key, hashOf(key));
    if (i < 0) return false;
    this.drop(i);
    return true;
  }

  /** get() then delete(): the value the key had, now gone (undefined: none). */
  take(key: string): V | undefined {
    const i = this.find(key, hashOf(key));
    if (i < 0) return undefined;
    const v = this.a.vals[i];
    this.drop(i);
    return v;
  }

  /** Delete the key only while it holds `v` (the same value, by ===). */
  deleteIf(key: string, v: V): void {
    const i = this.find(key, hashOf(key));
    if (i >= 0 && this.a.vals[i] === v) this.drop(i);
  }

  private drop(i: number): void {
    const a = this.a;
    a.state[i] = DELETED;
    a.keys[i] = undefined;
    a.vals[i] = undefined;
    this.live--;
  }

  /** Copy the live entries into the other arrays (larger ones when a third of these is live). */
  private rebuild(): void {
    const from = this.a;
    const oldCap = this.cap;
    let cap = oldCap;
    while (this.live * 3 > cap) cap *= 2;
    const to = cap === oldCap ? this.b : slots<V>(cap);
    to.state.fill(EMPTY);
    const mask = cap - 1;
    for (let j = 0; j < oldCap; j++) {
      if (from.state[j] !== LIVE) continue;
      const h = from.hashes[j]!;
      let i = h & mask;
      while (to.state[i] !== EMPTY) i = (i + 1) & mask;
      to.state[i] = LIVE;
      to.keys[i] = from.keys[j];
      to.vals[i] = from.vals[j];
      to.hashes[i] = h;
      to.seqs[i] = from.seqs[j]!;
    }
    // The arrays let go hold no keys or values (the next rebuild overwrites what it reads).
    from.keys.fill(undefined);
    from.vals.fill(undefined);
    this.a = to;
    this.b = cap === oldCap ? from : slots<V>(cap);
    this.cap = cap;
    this.used = this.live;
  }

  /** The values in insertion order (as a Map's values()). */
  values(): V[] {
    const { state, seqs, vals } = this.a;
    const at: number[] = [];
    for (let i = 0; i < this.cap; i++) if (state[i] === LIVE) at.push(i);
    at.sort((x, y) => seqs[x]! - seqs[y]!);
    return at.map((i) => vals[i]!);
  }
}
