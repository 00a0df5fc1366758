import type { z } from 'zod';
import { caseSchema } from './schema.js';
import type { ShapeCheck, ShapeDef, ShapeNode } from './shape.js';

/**
 * Build side of src/case/shape.ts: the zod case schema as plain data, and the source module the
 * build writes from it before compiling (scripts/gen-sources.ts; see defs.ts). Copies
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

/** The text of src/case/defs.generated.ts: the case schema's definitions as plain data (see defs.ts). */
export function makeDefsSource(): string {
  return `// Written by the build (scripts/gen-sources.ts, src/case/shape-build.ts) from src/case/schema.ts,
// before tsc compiles it: the case schema's definitions as plain data. Do not edit, do not commit;
// \`npm run build\` writes it again, and test/case/shape.test.ts checks it against the schema.
import type { ShapeNode } from './shape.js';

export const GENERATED_SHAPE: ShapeNode = JSON.parse(${JSON.stringify(JSON.stringify(shapeOf(caseSchema)))});
`;
}
