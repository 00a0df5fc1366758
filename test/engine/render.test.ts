import { describe, expect, it } from 'vitest';
import type { Facts } from '../../src/facts/facts.js';
import { render, renderReport } from '../../src/verdict/verdict.js';

const facts: Facts = {
  values: new Map<string, string | number | boolean | string[]>([
    ['a', 'x\u00a0y'],
    ['b', ' lead'],
    ['c', ['p', 'q']],
    ['d', []],
    ['n', 28],
    ['t', true],
  ]),
  needs: new Map(),
  inputs: new Map(),
};

describe('render', () => {
  it.each([
    ['A {a} B', 'A x y B'],
    ['{b} x', 'lead x'],
    ['x {c} {d} {zz} y', 'x p, q none unknown y'],
    ['  two  spaces {a}\n', 'two spaces x y'],
    ['nmissed {n} of {t}.', 'nmissed 28 of true.'],
    ['{x.y} and {', 'unknown and {'],
    ['no placeholders', 'no placeholders'],
  ])('%j -> %j', (template, want) => {
    expect(render(template, facts)).toBe(want);
  });

  it('prefers an extra value over the facts', () => {
    expect(render('{n} and {m}', facts, { n: 3, m: 'more' })).toBe('3 and more');
  });

  // Which placeholders were printed as "unknown": the check over every shipped case reads this.
  it.each([
    ['every placeholder known', 'on {a}: {n}', []],
    ['unknown ones in the sentence, each once', 'on {a}: {x} and {y} and {x}', ['x', 'y']],
    ['an unknown one in an optional part', 'on {a}[[ after {x} calls]]', []],
    ['an optional part with an unknown one, another outside', '{y}[[ after {x} calls]]', ['y']],
  ])('reports %s', (_situation, template, unknown) => {
    expect(renderReport(template, facts).unknown).toEqual(unknown);
  });
});
