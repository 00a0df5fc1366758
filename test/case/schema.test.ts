import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseJsonSchema } from '../../src/case/schema.js';
import { ruleJsonSchema } from '../../src/rules/schema.js';
import { BASE_FACTS } from '../../src/facts/facts.js';

describe('the published JSON Schema', () => {
  it('is the one generated from the zod case schema (run `npm run schema` after changing it)', async () => {
    const committed = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../schema/kretprobe-case-v1.schema.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(caseJsonSchema())));
  });

  it('for rule files is the one generated from the zod rule schema', async () => {
    const committed = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../schema/kretprobe-rule.schema.json'), 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(ruleJsonSchema())));
  });

  it('names every field of case-format.md, and lets every leaf be unknown', () => {
    const schema = caseJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    const top = Object.keys(schema.properties);
    expect(top).toEqual(expect.arrayContaining(['format', 'id', 'title', 'source', 'kernel', 'probe', 'coverage', 'concurrency', 'counters', 'ledger', 'latency', 'claims', 'expected']));
    // Every fact leaf admits the literal "unknown" (walk the schema to each leaf).
    const leafOf = (dotted: string): unknown => {
      let node: unknown = schema;
      for (const key of dotted.split('.')) {
        const n = node as { properties?: Record<string, unknown>; anyOf?: unknown[] };
        const obj = n.properties ? n : (n.anyOf ?? []).find((o) => (o as { properties?: unknown }).properties);
        node = (obj as { properties: Record<string, unknown> }).properties[key];
      }
      return node;
    };
    for (const f of BASE_FACTS) expect([f.name, JSON.stringify(leafOf(f.name)).includes('"const":"unknown"')]).toEqual([f.name, true]);
  });
});
