import type { Case } from './case/schema.js';
import type { LoadedCase } from './case/fast.js';
import { judgeCase, type CaseVerdict, type CompiledRules } from './verdict/verdict.js';

// Apart from index.ts (which re-exports it) so that the audit command can evaluate without
// loading what the rest of the library entry point loads (the zod schema, the rule parser).

/** Rules ready to evaluate (parsed and compiled once). */
export interface Rules extends CompiledRules {}

/** Evaluate one case (a loaded file or a case object) to a justified verdict. */
export async function evaluateCase(c: LoadedCase | Case, rules: Rules): Promise<CaseVerdict> {
  if ('data' in c && 'yaml' in c) return judgeCase(c.data, rules, { file: c.file });
  return judgeCase(c, rules);
}
