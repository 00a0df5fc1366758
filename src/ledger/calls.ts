/**
 * The ledger's open calls, as rows of typed columns named by number, not as objects.
 *
 * A call that never returns outside every operation (a miss on a task no operation owns) stays
 * open to the end of the trace, and there are more of them the longer the trace. As objects
 * (with a boxed double each), every one of them survived V8's young generation, and V8 grows
 * that generation by the bytes that survive it: the ledger's memory grew with the trace's
 * length. Rows reuse their numbers through a free list; the columns grow only when more calls
 * are open at once than ever before, so the memory follows the most calls open at once.
 *
 * A row is released only where the call leaves every index (its task's stack, the id index,
 * its operation's list); until something takes it again its fields keep their values, so a
 * loop may read a released row's `next` before it opens the next call.
 */

/** No call (the end of an operation's list). */
export const NO_CALL = -1;

/** What a call's operation is, to the table: anything with a list head and a number of its own. */
export interface CallOwner {
  /** Its calls still open, linked through the rows' prev/next (NO_CALL: none). */
  calls: number;
  /** Its number in the table's owners (see addOwner). */
  slot: number;
}

export class CallTable<Op extends CallOwner> {
  private cap = 0;
  /** Entry time (trace ns) and line, the task (-1: none), the points in the two sweeps (-1: none). */
  tsNs: Float64Array = new Float64Array(0);
  line: Float64Array = new Float64Array(0);
  task: Float64Array = new Float64Array(0);
  pa: Float64Array = new Float64Array(0);
  pd: Float64Array = new Float64Array(0);
  /** Neighbours in the operation's list. */
  prev: Int32Array = new Int32Array(0);
  next: Int32Array = new Int32Array(0);
  /** Its operation's slot (-1: none). Operations are numbered, not referenced, so no row points into the JS heap. */
  opSlot: Int32Array = new Int32Array(0);
  /** Instance ids by row, made only when some call has one (trace text has none). */
  private readonly insts: (string | undefined)[] = [];
  private readonly owners: Op[] = [];
  private readonly freeRows: number[] = [];
  private made = 0;

  /** Number an operation object once (objects are reused, their numbers with them). */
  addOwner(op: Op): void {
    op.slot = this.owners.length;
    this.owners.push(op);
  }

  /** A row for a new call; its fields are the caller's to set. */
  take(): number {
    const r = this.freeRows.pop();
    if (r !== undefined) return r;
    if (this.made === this.cap) this.grow();
    return this.made++;
  }

  /** The call left every index: its row may be taken again. */
  release(id: number): void {
    this.opSlot[id] = -1;
    if (id < this.insts.length) this.insts[id] = undefined;
    this.freeRows.push(id);
  }

  op(id: number): Op | undefined {
    const s = this.opSlot[id]!;
    return s < 0 ? undefined : this.owners[s];
  }

  setOp(id: number, op: Op | undefined): void {
    this.opSlot[id] = op === undefined ? -1 : op.slot;
  }

  inst(id: number): string | undefined {
    return id < this.insts.length ? this.insts[id] : undefined;
  }

  setInst(id: number, inst: string | undefined): void {
    const insts = this.insts;
    if (id < insts.length) insts[id] = inst;
    else if (inst !== undefined) {
      while (insts.length < id) insts.push(undefined);
      insts.push(inst);
    }
  }

  private grow(): void {
    const cap = Math.max(1024, this.cap * 2);
    const f64 = (a: Float64Array): Float64Array => {
      const b = new Float64Array(cap);
      b.set(a);
      return b;
    };
    const i32 = (a: Int32Array): Int32Array => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.tsNs = f64(this.tsNs);
    this.line = f64(this.line);
    this.task = f64(this.task);
    this.pa = f64(this.pa);
    this.pd = f64(this.pd);
    this.prev = i32(this.prev);
    this.next = i32(this.next);
    this.opSlot = i32(this.opSlot);
    this.cap = cap;
  }

  /** Put call `id` at the head of its operation's list. */
  link(id: number, op: Op): void {
    const head = op.calls;
    this.prev[id] = NO_CALL;
    this.next[id] = head;
    if (head !== NO_CALL) this.prev[head] = id;
    op.calls = id;
  }

  /** Take call `id` out of its operation's list (nothing if it has no operation or is not linked). */
  unlink(id: number): void {
    const op = this.op(id);
    if (op === undefined) return;
    const prev = this.prev[id]!;
    const next = this.next[id]!;
    if (prev !== NO_CALL) this.next[prev] = next;
    else if (op.calls === id) op.calls = next;
    else return; // not linked (already unlinked)
    if (next !== NO_CALL) this.prev[next] = prev;
    this.prev[id] = NO_CALL;
    this.next[id] = NO_CALL;
  }

  /** Rows made so far (in use or free): the most calls ever open at once. */
  get rows(): number {
    return this.made;
  }
}

/**
 * A task's open calls, innermost last, as row numbers in a typed array: a task that misses
 * calls outside every operation piles them up here for the rest of the trace, and a JS array
 * that grew with them was copied into the young generation each time (see the file comment).
 */
export class CallStack {
  private a = new Int32Array(4);
  length = 0;

  push(id: number): void {
    if (this.length === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = id;
  }

  /** The innermost call, taken off (undefined: none). */
  pop(): number | undefined {
    return this.length === 0 ? undefined : this.a[--this.length];
  }

  /** The call at depth i (0: outermost). */
  at(i: number): number {
    return this.a[i]!;
  }

  /** Take `id` out, keeping the order of the rest; false if it is not here. */
  remove(id: number): boolean {
    const a = this.a;
    let i = this.length - 1;
    while (i >= 0 && a[i] !== id) i--;
    if (i < 0) return false;
    // Most often the innermost or next to it: a loop beats copyWithin's call on a few elements.
    const n = --this.length;
    for (; i < n; i++) a[i] = a[i + 1]!;
    return true;
  }
}
