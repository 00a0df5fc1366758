/**
 * The stable identifiers of the case format, apart from the zod schema (src/case/schema.ts
 * re-exports them) so that a command can name them without loading zod.
 */
export const VERDICTS = [
  'setup-failure',
  'capacity-missed',
  'observer-gap',
  'still-in-flight',
  'filtered-by-design',
  'insufficient-evidence',
  'evidence-of-stall',
  'fully-observed',
] as const;
export type VerdictId = (typeof VERDICTS)[number];

/** A leaf's value when it is not known (the same as absent, or null). */
export const UNKNOWN = 'unknown' as const;
