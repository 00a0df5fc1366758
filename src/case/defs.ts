import type { z } from 'zod';
import type { ShapeNode } from './shape.js';
import { GENERATED_SHAPE } from './defs.generated.js';

/**
 * The case schema's definitions, for code that reads them (the fact catalogue, src/facts) and
 * for the check of a valid case without zod (CASE_SHAPE, src/case/fast.ts).
 *
 * They are the zod schema of src/case/schema.ts as plain data, which `npm run build` writes as
 * source (src/case/defs.generated.ts, by scripts/gen-sources.ts) before tsc compiles the
 * project, so that nothing here loads zod. The generated file is not kept in git; the build
 * always writes it from the schema as it stands, and test/case/shape.test.ts fails when it does
 * not match the schema.
 *
 * Only the definitions (`_zod.def`, `description`) of caseDefs may be read.
 */
export const CASE_SHAPE: ShapeNode | undefined = GENERATED_SHAPE;
export const caseDefs = GENERATED_SHAPE as unknown as z.ZodType;
