import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CallStack, CallTable, NO_CALL, type CallOwner } from '../../src/ledger/calls.js';

describe('open-call table', () => {
  it('reuses released rows: rows follow the most calls open at once, not the number of calls', () => {
    const t = new CallTable<CallOwner>();
    const stuck = [t.take(), t.take(), t.take()];
    for (let i = 0; i < 100000; i++) {
      const a = t.take();
      const b = t.take();
      t.setInst(b, `i${i}`);
      expect(t.inst(b)).toBe(`i${i}`);
      t.release(a);
      t.release(b);
    }
    expect(t.rows).toBe(stuck.length + 2);
    // A released row forgets its operation and id.
    const r = t.take();
    expect(t.inst(r)).toBeUndefined();
    expect(t.op(r)).toBeUndefined();
  });

  it('links and unlinks an operation\'s calls in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 60 }), fc.array(fc.nat()), (sizes, picks) => {
        const t = new CallTable<CallOwner>();
        const op: CallOwner = { calls: NO_CALL, slot: -1 };
        t.addOwner(op);
        const linked: number[] = [];
        for (let k = 0; k < sizes.length; k++) {
          const id = t.take();
          t.set(id, k, k, -1, k, -1, op);
          t.link(id, op);
          linked.push(id);
        }
        for (const p of picks) {
          if (linked.length === 0) break;
          const id = linked.splice(p % linked.length, 1)[0]!;
          t.unlink(id);
          t.unlink(id); // twice changes nothing
        }
        const walked: number[] = [];
        for (let c = op.calls; c !== NO_CALL; c = t.nextOf(c)) walked.push(c);
        expect(walked.sort((a, b) => a - b)).toEqual([...linked].sort((a, b) => a - b));
      }),
      { numRuns: 100 },
    );
  });
});

describe('task call stack', () => {
  it('is a stack that can also lose any element, in order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('push', 'pop', 'remove'), fc.nat(50))), (steps) => {
        const s = new CallStack();
        const model: number[] = [];
        for (const [what, x] of steps) {
          if (what === 'push') {
            s.push(x);
            model.push(x);
          } else if (what === 'pop') {
            expect(s.pop()).toBe(model.pop());
          } else {
            const i = model.lastIndexOf(x);
            expect(s.remove(x)).toBe(i >= 0);
            if (i >= 0) model.splice(i, 1);
          }
        }
        expect(s.length).toBe(model.length);
        expect(Array.from({ length: s.length }, (_, i) => s.at(i))).toEqual(model);
      }),
      { numRuns: 200 },
    );
  });
});
