import { describe, expect, it } from 'vitest';
import { FactSlots, num, plan, rerunChanged, run, type Derivation, type FactValue } from '../../src/facts/derive.js';

// rerunChanged marks the facts a run changed with the run's number in a Uint32Array; the number
// must start again before it passes what the array holds, or no input would read as changed and
// the derived facts would keep stale values.
const sum: Derivation = { name: 'd.sum', type: 'number', description: '', basis: '', inputs: ['a', 'b'], derive: (i) => (num(i, 'a') !== undefined && num(i, 'b') !== undefined ? num(i, 'a')! + num(i, 'b')! : undefined) };
const twice: Derivation = { name: 'd.twice', type: 'number', description: '', basis: '', inputs: ['d.sum'], derive: (i) => (num(i, 'd.sum') === undefined ? undefined : num(i, 'd.sum')! * 2) };

describe('rerunChanged across the wrap of its run numbers', () => {
  it.each([0xffffffff - 2, 0xffffffff - 1, 0xffffffff])('gives what run gives from run number %i on', (start) => {
    const p = plan([sum, twice], new Set(['a', 'b']));
    p.changedMarks.run = start;
    const whole = (a: number, b: number) => {
      const m = new Map<string, FactValue>([['a', a], ['b', b]]);
      run(p, m);
      return m;
    };
    let values = FactSlots.of(p, whole(1, 1));
    for (let k = 2; k < 8; k++) {
      values = values.copy();
      values.set(k % 2 ? 'a' : 'b', k);
      const changed = rerunChanged(p, values, k % 2 ? 'a' : 'b');
      const expected = whole(values.get('a') as number, values.get('b') as number);
      expect(values.get('d.twice')).toBe(expected.get('d.twice'));
      // The facts it changed, by place (Plan.slot).
      expect(changed.map((i) => p.slotNames[i])).toEqual([k % 2 ? 'a' : 'b', 'd.sum', 'd.twice']);
    }
    expect(p.changedMarks.run).toBeLessThan(start === 0xffffffff ? 10 : 0xffffffff + 1);
  });
});
