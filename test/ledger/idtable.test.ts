import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdTable } from '../../src/ledger/idtable.js';

// The ledger's id indexes must answer as the Maps they replace did, values() in the same order
// (finish() closes what is left in that order).
describe('IdTable', () => {
  it('agrees with a Map under any sequence of set, delete, get, swap, take and deleteIf', () => {
    const op = fc.tuple(fc.constantFrom('set', 'delete', 'get', 'swap', 'take', 'deleteIf'), fc.oneof(fc.integer({ min: 0, max: 40 }).map((n) => `id-${n}`), fc.string({ maxLength: 3 })), fc.integer({ min: -3, max: 3 }));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
        const t = new IdTable<number>();
        const m = new Map<string, number>();
        for (const [what, k, v] of ops) {
          if (what === 'set') {
            t.set(k, v);
            m.set(k, v);
          } else if (what === 'delete') expect(t.delete(k)).toBe(m.delete(k));
          else if (what === 'swap') {
            // set, giving back what get would have
            expect(t.swap(k, v)).toBe(m.get(k));
            m.set(k, v);
          } else if (what === 'take') {
            expect(t.take(k)).toBe(m.get(k));
            m.delete(k);
          } else if (what === 'deleteIf') {
            // delete only while the key holds v
            t.deleteIf(k, v);
            if (m.get(k) === v) m.delete(k);
          } else expect(t.get(k)).toBe(m.get(k));
          expect(t.size).toBe(m.size);
        }
        expect(t.values()).toEqual([...m.values()]);
      }),
      { numRuns: 300 },
    );
  });

  it('grows past its first arrays and keeps every entry', () => {
    const t = new IdTable<number>();
    for (let i = 0; i < 5000; i++) t.set(`k${i}`, i);
    for (let i = 0; i < 5000; i += 2) t.delete(`k${i}`);
    expect(t.size).toBe(2500);
    expect(t.get('k4999')).toBe(4999);
    expect(t.get('k4998')).toBeUndefined();
    expect(t.values()).toEqual(Array.from({ length: 2500 }, (_, i) => 2 * i + 1));
  });
});
