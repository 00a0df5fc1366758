import { z } from 'zod';
import { VERDICTS, type VerdictId } from '../case/schema.js';
import { InputError } from '../errors.js';
import { parseYaml, validateYaml } from '../yamlfile.js';

/** rules/verdicts.yaml: verdict precedence, each verdict's meaning and its fallback next step. */
const entry = z
  .object({
    id: z.enum(VERDICTS),
    meaning: z.string().min(1),
    next: z.string().min(1).describe('what to collect when this verdict is still possible but not established'),
  })
  .strict();

export const verdictsSchema = z
  .object({
    order: z.array(entry).min(1),
    fallback: entry,
    holds_back: z.array(z.enum(VERDICTS)).describe('verdicts a fired insufficient-evidence check holds back'),
  })
  .strict();

export type VerdictPolicy = z.infer<typeof verdictsSchema>;
export type VerdictEntry = z.infer<typeof entry>;

/** Parse rules/verdicts.yaml. Pure. Every verdict must appear exactly once. */
export function parseVerdicts(text: string, file: string): VerdictPolicy {
  const yaml = parseYaml(text, file, 'verdict precedence file');
  const policy = validateYaml(verdictsSchema, yaml);
  const ids: VerdictId[] = [...policy.order.map((e) => e.id), policy.fallback.id];
  for (const v of VERDICTS) {
    const n = ids.filter((x) => x === v).length;
    if (n !== 1) throw new InputError({ file, line: 1, col: 1 }, `each verdict once in order/fallback (${v})`, n === 0 ? 'missing' : `${n} times`);
  }
  return policy;
}

