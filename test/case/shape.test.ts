import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandCasePaths } from '../../src/case/load.js';
import { caseSchema } from '../../src/case/schema.js';
import { shapeOf } from '../../src/case/shape-build.js';
import { conformTo } from '../../src/case/shape.js';
import { parseYamlFast } from '../../src/yamlfile.js';

// The case schema's snapshot (src/case/shape.ts) lets a valid case skip zod. It must never
// accept what zod refuses, and what it returns must be what zod returns, key order included.
const root = path.resolve(import.meta.dirname, '../..');
const shape = shapeOf(caseSchema);

/** What each side says about `v`: the snapshot's value (undefined = ask zod), and zod's. */
function both(v: unknown): { fast: unknown; zod: { success: boolean; data?: unknown } } {
  return { fast: conformTo(shape, v), zod: caseSchema.safeParse(v) };
}
// The same keys in the same order as zod's result (a key set to undefined included).
const shown = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (x === undefined ? '<undefined>' : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
const same = (a: unknown, b: unknown) => {
  expect(a).toEqual(b);
  expect(shown(a)).toBe(shown(b));
};

async function shippedCases(): Promise<Array<{ file: string; value: Record<string, unknown> }>> {
  const out = [];
  for (const file of await expandCasePaths([path.join(root, 'cases')])) {
    const value = parseYamlFast(await readFile(file, 'utf8'), 'case file', file);
    if (value && typeof value === 'object') out.push({ file, value: value as Record<string, unknown> });
  }
  return out;
}

describe('the case schema snapshot', () => {
  it('accepts every shipped case zod accepts, with the value zod returns', async () => {
    const cases = await shippedCases();
    let accepted = 0;
    for (const { file, value } of cases) {
      const { fast, zod } = both(value);
      expect([file, zod.success]).toEqual([file, true]);
      // Only a refinement (the CPU list form of possible_cpus) is left to zod.
      const refined = typeof (value.kernel as Record<string, unknown> | undefined)?.possible_cpus === 'string';
      if (refined) continue;
      expect([file, fast === undefined]).toEqual([file, false]);
      same(fast, zod.data);
      accepted++;
    }
    expect(accepted).toBeGreaterThan(cases.length * 0.9);
  });

  it('never accepts what zod refuses, and returns what zod returns (mutated shipped cases)', async () => {
    const cases = await shippedCases();
    const leaf = fc.oneof(
      fc.integer({ min: -3, max: 3 }), fc.constantFrom(65_536, 65_537, 1_000_000), fc.double(), fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 2 ** 53, 1.5),
      fc.boolean(), fc.constant(null), fc.constant(undefined), fc.string({ maxLength: 6 }),
      fc.constantFrom('unknown', '', 'module', 'tracefs', 'none', 'some', 'ok', 'Unknown', 'bench-1', 'Bad_Id', 'counters/nmissed-rose', 'function-stuck', '0-3,8-11', '4', 'x-'),
      fc.constant([]), fc.constant({}), fc.constant(['a']), fc.constant({ extra: 1 }),
    );
    let agreedValid = 0;
    let fastValid = 0;
    fc.assert(
      fc.property(fc.nat(cases.length - 1), fc.array(fc.tuple(fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), leaf, fc.nat(3)), { minLength: 1, maxLength: 3 }), (which, edits) => {
        const v = structuredClone(cases[which]!.value);
        for (const [walk, value, how] of edits) {
          // Walk down some path of objects and lists in the case, then set, delete or add a key there.
          let at: Record<string, unknown> = v;
          for (const step of walk.slice(1)) {
            const ks = Object.keys(at);
            const inner = at[ks[step % Math.max(ks.length, 1)] ?? ''];
            if (!inner || typeof inner !== 'object') break;
            at = inner as Record<string, unknown>;
          }
          const ks = Object.keys(at);
          const k = how === 3 ? `unknown_${walk[0]! % 3}` : ks[walk[0]! % Math.max(ks.length, 1)] ?? 'id';
          if (how === 2 && !Array.isArray(at)) delete at[k];
          else at[k] = value;
        }
        const { fast, zod } = both(v);
        if (zod.success) agreedValid++;
        if (fast !== undefined) {
          fastValid++;
          expect(zod.success).toBe(true);
          same(fast, zod.data);
        }
      }),
      { numRuns: 3000 },
    );
    // The property is not vacuous: the mutants include valid cases and the snapshot takes them.
    expect(agreedValid).toBeGreaterThan(100);
    expect(fastValid).toBeGreaterThan(agreedValid / 2);
  });

  it('agrees with zod on each kind of check, at its edges', async () => {
    const { z } = await import('zod');
    const schemas = [
      z.number().int().min(0), z.number().int().min(1).max(4), z.number().gt(0).lt(2), z.number(), z.number().int(),
      z.string().min(2), z.string().max(2), z.string().regex(/^[a-z]+(?:-[a-z]+)*$/), z.string(), z.boolean(),
      z.literal('unknown'), z.enum(['a', 'b']), z.union([z.number().int(), z.literal('unknown')]).nullish(),
      z.array(z.string().min(1)).min(1), z.array(z.number()).max(1), z.record(z.string(), z.string()),
      z.object({ a: z.number().optional(), b: z.string().nullable() }).strict(), z.union([z.object({ a: z.number() }).strict(), z.object({ b: z.string() }).strict()]),
    ];
    const values: unknown[] = [-1, 0, -0, 0.5, 1, 2, 3, 4, 5, 2 ** 53, Number.NaN, Infinity, -Infinity, '', 'a', 'ab', 'abc', 'a-b', 'a--b', 'A', 'unknown',
      true, false, null, undefined, [], [''], ['a'], [1], [1, 2], {}, { a: 1 }, { a: 1, b: 'x' }, { b: null }, { b: 'x', a: 2 }, { a: 1, c: 1 }, { b: 1 }, { x: 'y' }, { x: 1 }];
    let accepted = 0;
    for (const schema of schemas) {
      const sh = shapeOf(schema);
      for (const v of values) {
        const fast = conformTo(sh, v);
        const zod = schema.safeParse(v);
        if (zod.success && v !== undefined) expect([schema.def.type, v, fast === undefined]).toEqual([schema.def.type, v, false]);
        if (fast === undefined) continue;
        accepted++;
        expect([v, zod.success]).toEqual([v, true]);
        same(fast, zod.data);
      }
    }
    expect(accepted).toBeGreaterThan(40);
  });

  it('leaves a refinement, a default and an unknown check to zod', async () => {
    const { z } = await import('zod');
    expect(conformTo(shapeOf(z.string().refine((s) => s.length > 1)), 'ab')).toBeUndefined();
    expect(conformTo(shapeOf(z.string().default('x')), 'x')).toBeUndefined();
    expect(conformTo(shapeOf(z.string().max(3).includes('a')), 'ab')).toBeUndefined();
    expect(conformTo(shapeOf(z.object({ a: z.number() })), { a: 1 })).toBeUndefined(); // strips unknown keys: zod's to do
    expect(conformTo(shapeOf(z.object({ a: z.number() }).strict()), { a: 1 })).toEqual({ a: 1 });
  });
});

describe('the generated definitions (src/case/defs.generated.ts, written by npm run build)', () => {
  it('are the schema as it stands: a schema edit without a build fails here', async () => {
    const { GENERATED_SHAPE } = await import('../../src/case/defs.generated.js');
    expect(GENERATED_SHAPE).toEqual(shape);
    const defs = await import('../../src/case/defs.js');
    expect(defs.CASE_SHAPE).toBe(GENERATED_SHAPE);
    expect('safeParse' in defs.caseDefs).toBe(false);
  });

  it('are compiled as they were generated: the built CLI reads cases without zod', async () => {
    const dist = (await import(path.join(root, 'dist/src/case/defs.js'))) as typeof import('../../src/case/defs.js');
    expect(dist.CASE_SHAPE).toEqual(shape);
    expect(dist.caseDefs).toBe(dist.CASE_SHAPE);
    // Generated as source before compiling, never written over tsc's output.
    const compiled = readFileSync(path.join(root, 'dist/src/case/defs.js'), 'utf8');
    expect(compiled).toMatch(/from '\.\/defs\.generated\.js'/);
    expect(compiled).not.toMatch(/from ['"]zod/);
  });
});
