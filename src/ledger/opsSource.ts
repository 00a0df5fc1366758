import type { Clock } from './clock.js';
import { MAX_LINE, type SyncFileLines } from './lines.js';
import { ReorderWindow } from './reorder.js';
import { fastOpInto, fullOpBytes, opIdSeen, type OpRecord } from './records.js';

/**
 * ops.jsonl as the ledger consumes it: lines parsed (fast path, then the full parser for what it
 * declines), problems reported, and the reorder window putting them into submit order. One owner
 * for both places it runs: the main thread, and the worker of opsThread.ts.
 */

export function isBlankLine(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

export type OpsProblemSink = (line: number, expected: string, got: string) => void;

export class OrderedOps {
  /** Valid operation lines read. */
  valid = 0;
  /** Last line number read. */
  lines = 0;
  // One object carries each line from the parser into the window, and one each line out of it
  // (the consumer copies what it keeps before it pulls again).
  private readonly slot: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 0 };
  private readonly out: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 0 };
  private readonly held: ReorderWindow;
  private ended = false;

  /**
   * `wantIds`: keep each operation's id (records name operations: probe.jsonl); `reorder`: lines
   * held ahead (see DEFAULT_OPS_REORDER in read.ts).
   */
  constructor(
    private readonly reader: SyncFileLines,
    private readonly wantIds: boolean,
    private readonly reorder: number,
    private readonly problem: OpsProblemSink,
    /** The run's time line (clock.ts): times come out as ns from its origin. */
    private readonly clock: Clock,
    /** Called every 1024 lines read (the worker's sign of life: see opsThread.ts). */
    private readonly onLines?: (lines: number) => void,
  ) {
    this.held = new ReorderWindow(wantIds);
  }

  /** The line read last when its id is still bytes in it (see opIdSeen), else undefined. */
  private idIn: Buffer | undefined;

  private read(): OpRecord | undefined {
    const reader = this.reader;
    this.idIn = undefined;
    for (;;) {
      const l = reader.next();
      if (l === undefined) return undefined;
      this.lines = l.no;
      if ((l.no & 1023) === 0) this.onLines?.(l.no);
      if (l.truncated) {
        this.problem(l.no, `a line of at most ${MAX_LINE} characters`, 'a longer line');
        continue;
      }
      if (isBlankLine(l.b, l.start, l.end)) continue;
      if (fastOpInto(this.slot, l.b, l.start, l.end, l.no, this.wantIds ? 'bytes' : false, this.clock)) {
        this.valid++;
        if (this.wantIds) this.idIn = l.b;
        return this.slot;
      }
      const r = fullOpBytes(l.b, l.start, l.end, l.no, this.clock);
      if (r.ok) {
        this.valid++;
        return r.value;
      }
      const cut = reader.lastLineUnterminated ? ' (the last line has no newline: truncated?)' : '';
      this.problem(l.no, r.expected, r.got + cut);
    }
  }

  /** The next operation in submit order (valid until the next call), or undefined at the end. */
  next(): OpRecord | undefined {
    const held = this.held;
    while (!this.ended && held.size <= this.reorder) {
      const op = this.read();
      if (op === undefined) this.ended = true;
      else if (this.idIn !== undefined) held.push(op, this.idIn, opIdSeen.from, opIdSeen.to, opIdSeen.ascii);
      else held.push(op);
    }
    return held.popInto(this.out) ? this.out : undefined;
  }
}
