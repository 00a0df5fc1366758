/**
 * A hash table from id strings to values, for the ledger's two indexes that records and
 * operations go through one after another (instance ids, operation ids).
 *
 * A Map under constant insert and delete rebuilds its backing store each time deleted entries
 * fill it, and those stores lived long enough to be promoted: on a 1 M-record probe.jsonl run
 * they were 41 of the 47 MB a sampling heap profile saw promoted and then collected (the two
 * Maps' `set`, in activate and entry). Here a delete shifts the entries after it in its run
 * back (linear probing's deletion without tombstones), so the table is rebuilt only when the
 * live entries outgrow it: nothing is allocated but then. Tombstones, before, filled half the
 * slots every few hundred deletes and forced a rebuild of the whole table each time (1.5 % of
 * a 1 M-record probe.jsonl run) and lengthened every probe. `values()` gives insertion order,
 * as a Map's does (a key set again keeps its place; deleted and set again, it goes last).
 */
const EMPTY = 0;
const LIVE = 1;

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
  private live = 0;
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
    let i = h & mask;
    for (; a.state[i] !== EMPTY; i = (i + 1) & mask) {
      if (a.hashes[i] === h && a.keys[i] === key) {
        const old = a.vals[i];
        a.vals[i] = v;
        return old;
      }
    }
    a.state[i] = LIVE;
    a.keys[i] = key;
    a.vals[i] = v;
    a.hashes[i] = h;
    a.seqs[i] = this.seq++;
    this.live++;
    if (this.live * 2 > this.cap) this.rebuild();
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

  /**
   * Empty slot i, moving back into it each later entry of its run that may sit there (its home
   * slot is not cyclically after i), and so on from the slot that entry left: every entry stays
   * reachable from its home without passing an empty slot.
   */
  private drop(i: number): void {
    const { keys, vals, hashes, state, seqs } = this.a;
    const mask = this.cap - 1;
    for (let j = (i + 1) & mask; state[j] !== EMPTY; j = (j + 1) & mask) {
      const home = hashes[j]! & mask;
      if (((j - home) & mask) < ((j - i) & mask)) continue;
      keys[i] = keys[j];
      vals[i] = vals[j];
      hashes[i] = hashes[j]!;
      seqs[i] = seqs[j]!;
      i = j;
    }
    state[i] = EMPTY;
    keys[i] = undefined;
    vals[i] = undefined;
    this.live--;
  }

  /** Copy the live entries into larger arrays (with a third of the slots live, at most). */
  private rebuild(): void {
    const from = this.a;
    const oldCap = this.cap;
    let cap = oldCap;
    while (this.live * 3 > cap) cap *= 2;
    const to = slots<V>(cap);
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
    this.a = to;
    this.cap = cap;
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
