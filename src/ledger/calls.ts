/**
 * The ledger's open calls, as rows of typed arrays named by number, not as objects.
 *
 * A call that never returns outside every operation (a miss on a task no operation owns) stays
 * open to the end of the trace, and there are more of them the longer the trace. As objects
 * (with a boxed double each), every one of them survived V8's young generation, and V8 grows
 * that generation by the bytes that survive it: the ledger's memory grew with the trace's
 * length. Rows reuse their numbers through a free list; the arrays grow only when more calls
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

// A row's doubles, and its int32s, side by side in one array each (one array to load per access).
const F = 5;
const F_TS = 0;
const F_LINE = 1;
const F_TASK = 2;
const F_PA = 3;
const F_PD = 4;
const I = 3;
const I_PREV = 0;
const I_NEXT = 1;
const I_OP = 2;

export class CallTable<Op extends CallOwner> {
  private cap = 0;
  /** Per row: entry time (trace ns) and line, the task (-1: none), the points in the two sweeps (-1: none). */
  private f: Float64Array = new Float64Array(0);
  /** Per row: neighbours in the operation's list, and the operation's slot (-1: none). Operations are numbered, not referenced, so no row points into the JS heap. */
  private i: Int32Array = new Int32Array(0);
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

  /** A row for a new call; set() gives its fields. */
  take(): number {
    const r = this.freeRows.pop();
    if (r !== undefined) return r;
    if (this.made === this.cap) this.grow();
    return this.made++;
  }

  /** A new call's fields (not yet in its operation's list: see link). */
  set(id: number, tsNs: number, line: number, task: number, pa: number, pd: number, op: Op | undefined): void {
    const f = this.f;
    const k = id * F;
    f[k + F_TS] = tsNs;
    f[k + F_LINE] = line;
    f[k + F_TASK] = task;
    f[k + F_PA] = pa;
    f[k + F_PD] = pd;
    const i = this.i;
    const j = id * I;
    i[j + I_PREV] = NO_CALL;
    i[j + I_NEXT] = NO_CALL;
    i[j + I_OP] = op === undefined ? -1 : op.slot;
  }

  /** The call left every index: its row may be taken again (its `next` still reads the same). */
  release(id: number): void {
    this.i[id * I + I_OP] = -1;
    if (id < this.insts.length) this.insts[id] = undefined;
    this.freeRows.push(id);
  }

  tsNsOf(id: number): number {
    return this.f[id * F + F_TS]!;
  }

  lineOf(id: number): number {
    return this.f[id * F + F_LINE]!;
  }

  taskOf(id: number): number {
    return this.f[id * F + F_TASK]!;
  }

  paOf(id: number): number {
    return this.f[id * F + F_PA]!;
  }

  pdOf(id: number): number {
    return this.f[id * F + F_PD]!;
  }

  nextOf(id: number): number {
    return this.i[id * I + I_NEXT]!;
  }

  op(id: number): Op | undefined {
    const s = this.i[id * I + I_OP]!;
    return s < 0 ? undefined : this.owners[s];
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
    const f = new Float64Array(cap * F);
    f.set(this.f);
    this.f = f;
    const i = new Int32Array(cap * I);
    i.set(this.i);
    this.i = i;
    this.cap = cap;
  }

  /** Put call `id` at the head of its operation's list. */
  link(id: number, op: Op): void {
    const i = this.i;
    const head = op.calls;
    i[id * I + I_PREV] = NO_CALL;
    i[id * I + I_NEXT] = head;
    if (head !== NO_CALL) i[head * I + I_PREV] = id;
    op.calls = id;
  }

  /** Take call `id` out of its operation's list (nothing if it has no operation or is not linked). */
  unlink(id: number): void {
    const op = this.op(id);
    if (op === undefined) return;
    const i = this.i;
    const prev = i[id * I + I_PREV]!;
    const next = i[id * I + I_NEXT]!;
    if (prev !== NO_CALL) i[prev * I + I_NEXT] = next;
    else if (op.calls === id) op.calls = next;
    else return; // not linked (already unlinked)
    if (next !== NO_CALL) i[next * I + I_PREV] = prev;
    i[id * I + I_PREV] = NO_CALL;
    i[id * I + I_NEXT] = NO_CALL;
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
