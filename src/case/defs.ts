import type { z } from 'zod';
import type { ShapeNode } from './shape.js';
import { caseSchema } from './schema.js';

/**
 * The case schema's definitions, for code that reads them (the fact catalogue, src/facts) and
 * for the check of a valid case without zod (CASE_SHAPE, src/case/fast.ts).
 *
 * This is the module as tsc compiles it: the zod schema itself, and no CASE_SHAPE (every case
 * goes to zod). The build (scripts/snapshot-rules.ts, after tsc) replaces dist/src/case/defs.js
 * with the same definitions as plain data (shape-build.ts), so that nothing here loads zod. tsc
 * writes every output file on every run, so a rebuild of dist/src/case/schema.js also puts this
 * zod version back until the next snapshot: the plain data never outlives the schema it was read
 * from. Its CASE_SHAPE is also keyed by the bytes of those files and of zod's package.json, and
 * is left undefined (every case to zod) when they no longer match.
 *
 * Only the definitions (`_zod.def`, `description`) of caseDefs may be read.
 */
export const caseDefs: z.ZodType = caseSchema;
export const CASE_SHAPE: ShapeNode | undefined = undefined;
