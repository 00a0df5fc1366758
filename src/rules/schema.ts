import { z } from 'zod';
import { CLAIM_KINDS, CLAIM_SUBJECTS, JUDGEMENTS, VERDICTS } from '../case/schema.js';

/**
 * The rule formats, defined once. A rule file holds metadata (id, title, source, the sentences
 * it renders) apart from its conditions (`when`), which compile to json-rules-engine.
 */

export const OPERATORS = [
  'equal', 'notEqual', 'lessThan', 'lessThanInclusive', 'greaterThan', 'greaterThanInclusive',
  'in', 'notIn', 'contains', 'doesNotContain',
] as const;
export type Operator = (typeof OPERATORS)[number];

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export type Leaf = { fact: string; operator: Operator; value: string | number | boolean | Array<string | number | boolean> | { fact: string } };
export type Condition = { all: Condition[] } | { any: Condition[] } | { not: Condition } | Leaf;

export const leafSchema = z
  .object({
    fact: z.string().min(1).describe('a fact name (rules explain lists them)'),
    operator: z.enum(OPERATORS),
    value: z.union([scalar, z.array(scalar), z.object({ fact: z.string().min(1) }).strict()]),
  })
  .strict();

export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z.object({ all: z.array(conditionSchema).min(1) }).strict(),
    z.object({ any: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
    leafSchema,
  ]),
);

const common = {
  id: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/, { message: 'folder/name, kebab-case' }).describe('equals the file path under rules/, without .yaml'),
  title: z.string().min(1).describe('one line'),
  source: z.string().min(1).describe('a seed section heading, or kernel-facts.md §N / kernel-notes.md'),
};

export const ruleSchema = z
  .object({
    ...common,
    verdict: z.enum([...VERDICTS, 'warning'] as const).describe('the verdict this finding supports, or warning'),
    weight: z.number().int().min(1).max(100).describe('rank among findings of the same verdict'),
    requires: z.array(z.string().min(1)).optional().describe('facts without which the check does not apply (it neither fires nor waits for them)'),
    when: conditionSchema,
    explains: z.string().min(1).describe('why it matters, with {fact.name} placeholders'),
    next: z.string().min(1).describe('the next step for the engineer'),
  })
  .strict();

export const claimRuleSchema = z
  .object({
    ...common,
    claim: z.enum(CLAIM_KINDS),
    // Claims about another run (the case's claim `subject`) are judged by the rule for that
    // subject; a rule without one judges claims about the case's own run.
    subject: z.enum(CLAIM_SUBJECTS).optional(),
    judge: z
      .array(
        z
          .object({
            judgement: z.enum(JUDGEMENTS),
            when: conditionSchema,
            because: z.string().min(1),
          })
          .strict(),
      )
      .min(1),
    otherwise: z.object({ judgement: z.enum(JUDGEMENTS), because: z.string().min(1) }).strict(),
  })
  .strict();

/**
 * A consistency constraint (rules/constraints/): what no real capture can show. `broken_when`
 * states the violation over facts; a known case for which it holds contradicts itself (a
 * contradiction finding naming the facts in conflict, and no definite verdict rests on them), and
 * a completion of a partial case for which it holds is not a possible world.
 */
export const constraintSchema = z
  .object({
    ...common,
    broken_when: conditionSchema.describe('the evidence contradicts itself when this holds'),
    explains: z.string().min(1).describe('why the facts cannot all be true, with {fact.name} placeholders'),
    next: z.string().min(1).describe('what to recheck'),
  })
  .strict();

export type RuleSpec = z.infer<typeof ruleSchema>;
export type ConstraintSpec = z.infer<typeof constraintSchema>;
export type ClaimRuleSpec = z.infer<typeof claimRuleSchema>;

/** Facts only claim rules may use: the verdict already reached and the findings that fired. */
export const CLAIM_FACTS = {
  'verdict.primary': { type: 'string', description: 'the primary verdict reached for the case', values: [...VERDICTS] },
  'findings.fired': { type: 'list', description: 'ids of the rules that fired' },
} as const;

/** The JSON Schema published for rule files, derived from the same definitions. */
export function ruleJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(z.union([ruleSchema, claimRuleSchema]), { io: 'input' }) as Record<string, unknown>;
  return { ...schema, title: 'kretprobe-triage rule file (a check, or a claim judgement)' };
}
