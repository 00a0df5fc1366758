/**
 * A binary min-heap of items by a numeric key, ties broken by a second number (the ledger's
 * operations by completion; the reorder window's late lines by submit_ns, then line). The keys
 * sit in typed arrays beside the items, so a sift compares numbers in place: no comparator call
 * and no trip through each item's object (the reorder window's heap is ten thousand lines deep,
 * and a shuffled ops.jsonl sifts every third line through it).
 */
export class KeyHeap<T> {
  private items: T[] = [];
  private keys: Float64Array = new Float64Array(16);
  private ties: Float64Array = new Float64Array(16);
  private n = 0;

  get size(): number {
    return this.n;
  }

  peek(): T | undefined {
    return this.n > 0 ? this.items[0] : undefined;
  }

  /** The smallest key (Infinity when empty). */
  peekKey(): number {
    return this.n > 0 ? this.keys[0]! : Infinity;
  }

  /** The tie-breaker of the smallest (Infinity when empty). */
  peekTie(): number {
    return this.n > 0 ? this.ties[0]! : Infinity;
  }

  push(x: T, key: number, tie = 0): void {
    if (this.n === this.keys.length) {
      const k = new Float64Array(this.n * 2);
      k.set(this.keys);
      this.keys = k;
      const t = new Float64Array(this.n * 2);
      t.set(this.ties);
      this.ties = t;
    }
    const { items, keys, ties } = this;
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pk = keys[p]!;
      if (!(key < pk || (key === pk && tie < ties[p]!))) break;
      items[i] = items[p]!;
      keys[i] = pk;
      ties[i] = ties[p]!;
      i = p;
    }
    items[i] = x;
    keys[i] = key;
    ties[i] = tie;
  }

  pop(): T | undefined {
    if (this.n === 0) return undefined;
    const { items, keys, ties } = this;
    const top = items[0];
    const n = --this.n;
    if (n > 0) {
      const last = items[n]!;
      const lk = keys[n]!;
      const lt = ties[n]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        let c = l;
        if (r < n) {
          const rk = keys[r]!;
          const lck = keys[l]!;
          if (rk < lck || (rk === lck && ties[r]! < ties[l]!)) c = r;
        }
        const ck = keys[c]!;
        if (!(ck < lk || (ck === lk && ties[c]! < lt))) break;
        items[i] = items[c]!;
        keys[i] = ck;
        ties[i] = ties[c]!;
        i = c;
      }
      items[i] = last;
      keys[i] = lk;
      ties[i] = lt;
    }
    // Let the item go (the array keeps its length: it is reused).
    items[n] = undefined as T;
    return top;
  }
}
