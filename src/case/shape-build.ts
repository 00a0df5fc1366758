import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { caseSchema } from './schema.js';
import { shapeKey, type ShapeCheck, type ShapeDef, type ShapeNode } from './shape.js';

/**
 * Build side of src/case/shape.ts: the zod case schema as plain data, and the module the build
 * writes over tsc's dist/src/case/defs.js (scripts/snapshot-rules.ts; see defs.ts). Copies
 * exactly the definition fields shape.ts reads; anything else is listed as unread, and
 * shape.ts leaves such a node to zod.
 */

type ZodDef = { type: string; [k: string]: unknown };
type ZodLike = { _zod: { def: ZodDef }; description?: string };

const NODE_FIELDS = ['innerType', 'element', 'keyType', 'valueType', 'catchall'] as const;
const PLAIN_FIELDS = ['values', 'entries'] as const;
// Fields of a check that only shape zod's error reporting, or (`when`) skip the check where
// shape.ts applies it anyway (so it is stricter, never looser).
const CHECK_FIELDS = new Set(['check', 'format', 'pattern', 'minimum', 'maximum', 'value', 'inclusive', 'abort', 'error', 'when', 'type']);

function checkOf(c: { _zod: { def: Record<string, unknown> } }): ShapeCheck {
  const def = c._zod.def;
  if (Object.keys(def).some((k) => !CHECK_FIELDS.has(k))) return { check: `unread:${String(def.check)}` };
  const out: ShapeCheck = { check: String(def.check) };
  for (const [k, v] of Object.entries(def)) {
    if (k === 'check' || typeof v === 'function') continue;
    out[k] = v instanceof RegExp ? { source: v.source, flags: v.flags } : v;
  }
  return out;
}

/** A zod schema as shape.ts reads it. */
export function shapeOf(schema: z.ZodType): ShapeNode {
  const s = schema as unknown as ZodLike;
  const def = s._zod.def;
  const out: ShapeDef = { type: def.type };
  const unread: string[] = [];
  for (const [k, v] of Object.entries(def)) {
    if (k === 'type') continue;
    if ((NODE_FIELDS as readonly string[]).includes(k)) (out as unknown as Record<string, unknown>)[k] = shapeOf(v as z.ZodType);
    else if ((PLAIN_FIELDS as readonly string[]).includes(k)) (out as unknown as Record<string, unknown>)[k] = Array.isArray(v) ? [...(v as unknown[])] : { ...(v as object) };
    else if (k === 'shape') out.shape = Object.fromEntries(Object.entries(v as Record<string, z.ZodType>).map(([key, child]) => [key, shapeOf(child)]));
    else if (k === 'options') out.options = (v as z.ZodType[]).map(shapeOf);
    else if (k === 'checks') out.checks = (v as Array<{ _zod: { def: Record<string, unknown> } }>).map(checkOf);
    else unread.push(k);
  }
  if (unread.length) out.unread = unread;
  const node: ShapeNode = { _zod: { def: out } };
  if (s.description !== undefined) node.description = s.description;
  return node;
}

/**
 * The modules the case schema's definition comes from, relative to src/case (dist/src/case
 * when built): schema.js and what it imports from this package, transitively, and the two
 * halves of the snapshot code.
 */
export async function schemaFiles(): Promise<string[]> {
  const seen = new Set<string>(['shape.js', 'shape-build.js']);
  const todo = ['schema.js'];
  while (todo.length) {
    const rel = todo.pop()!;
    if (seen.has(rel)) continue;
    seen.add(rel);
    const text = await fs.readFile(path.resolve(here, rel), 'utf8');
    for (const m of text.matchAll(/\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
      todo.push(path.relative(here, path.resolve(here, path.dirname(rel), m[1]!)).split(path.sep).join('/'));
    }
  }
  return [...seen].sort();
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** The compiled defs module (dist/src/case/defs.js when this runs from dist). */
export const DEFS_FILE = path.resolve(here, 'defs.js');

/** The text of the defs module with the case schema as plain data (see defs.ts). */
export async function makeDefsModule(): Promise<string> {
  const files = await schemaFiles();
  const literal = (v: unknown) => JSON.stringify(JSON.stringify(v));
  return `// Written by the build (scripts/snapshot-rules.ts, src/case/shape-build.ts) over tsc's output
// of src/case/defs.ts: the case schema's definitions as plain data. Do not edit; tsc puts the
// zod version back, the build writes this again.
import { shapeKey } from './shape.js';
const shape = JSON.parse(${literal(shapeOf(caseSchema))});
export const caseDefs = shape;
export const CASE_SHAPE = shapeKey(JSON.parse(${literal(files)})) === ${JSON.stringify(shapeKey(files))} ? shape : undefined;
`;
}
