/**
 * kretprobe-triage as a library. The CLI uses exactly this: load rules, load a case, evaluate.
 */
import type { Rules } from './evaluate.js';
import { loadRules as readRules } from './rules/load.js';
import { compileRules } from './verdict/verdict.js';

export { loadCase, loadCases, updateCaseFile, expandCasePaths } from './case/load.js';
export { parseCase, CASE_FORMAT, type LoadedCase } from './case/parse.js';
export { caseSchema, caseJsonSchema, VERDICTS, CLAIM_KINDS, CLAIM_SUBJECTS, JUDGEMENTS, type Case, type VerdictId, type Judgement, type ClaimKind, type ClaimSubject } from './case/schema.js';
export { parseRuleFile } from './rules/parse.js';
export { InputError } from './errors.js';
export type { CaseVerdict, Finding, ClaimResult, Accounting } from './verdict/verdict.js';
export type { RuleSet } from './rules/load.js';

export { evaluateCase, type Rules } from './evaluate.js';

/** Read and compile the rules under `dir` (default: the rules shipped with the package). */
export async function loadRules(dir?: string, options: { memo?: boolean } = {}): Promise<Rules> {
  return compileRules(await readRules(dir), options);
}

