import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors.js';
import { readSmallFile } from '../case/load.js';
import { requireDirectory } from '../fsutil.js';
import { parseRuleFile, type AnyRule, type ParsedClaimRule, type ParsedConstraint, type ParsedRule } from './parse.js';
import { parseVerdicts, type VerdictPolicy } from './verdicts.js';
import { defaultRulesDir } from './dir.js';
import type { Question } from '../triage/question-set.js';

/** Folders under rules/ that hold something other than rules (the triage questions, the write-up lexicons). */
const NOT_RULES = new Set(['questions', 'lexicon']);

export interface RuleSet {
  dir: string;
  rules: ParsedRule[];
  claims: ParsedClaimRule[];
  /** Consistency constraints (rules/constraints/): what no real capture can show. */
  constraints: ParsedConstraint[];
  /** Verdict precedence (rules/verdicts.yaml; the shipped one when `dir` has none). */
  verdicts: VerdictPolicy;
  /**
   * The triage questions under `<dir>/questions`: each fact's collect command per probe interface,
   * and so which facts an interface has no way to give (`next` names the others first). Null when
   * they do not load (a rules directory without them); undefined when not read.
   */
  questions?: Question[] | null;
}

export { defaultRulesDir };

/** Read every rule file under `dir` (default: the shipped rules) and parse it. */
export async function loadRules(dir: string = defaultRulesDir()): Promise<RuleSet> {
  await requireDirectory(dir, 'a rules directory');
  const files = await ruleFiles(dir);
  if (files.length === 0) throw new InputError({ file: dir }, 'a directory holding rule files (<section>/<rule>.yaml)', 'none');
  const parsed: AnyRule[] = [];
  const seen = new Map<string, string>();
  // One claim rule per kind of claim and subject: claimRuleFor finds it.
  const judges = new Map<string, string>();
  for (const rel of files) {
    const full = path.join(dir, rel);
    const rule = parseRuleFile(await readSmallFile(full, 'rule file'), rel, full);
    const prior = seen.get(rule.spec.id);
    if (prior) throw new InputError({ file: full, line: 1, col: 1 }, `a unique rule id (also in ${prior})`, rule.spec.id);
    seen.set(rule.spec.id, full);
    if (rule.kind === 'claim') {
      const key = `${rule.spec.claim} ${rule.spec.subject ?? ''}`;
      const other = judges.get(key);
      if (other) throw new InputError({ file: full, line: 1, col: 1 }, `one claim rule per kind of claim${rule.spec.subject ? ' and subject' : ''} (${other} judges these too)`, `claim: ${rule.spec.claim}${rule.spec.subject ? `, subject: ${rule.spec.subject}` : ''}`);
      judges.set(key, full);
    }
    parsed.push(rule);
  }
  return {
    dir,
    verdicts: await loadVerdicts(dir),
    rules: parsed.filter((r): r is ParsedRule => r.kind === 'rule'),
    claims: parsed.filter((r): r is ParsedClaimRule => r.kind === 'claim'),
    constraints: parsed.filter((r): r is ParsedConstraint => r.kind === 'constraint'),
    questions: await import('../triage/questions.js').then((m) => m.loadQuestions(path.join(dir, 'questions'))).then((q) => q.list, () => null),
  };
}

async function loadVerdicts(dir: string): Promise<VerdictPolicy> {
  const own = path.join(dir, 'verdicts.yaml');
  const file = await fs.stat(own).then(() => own, () => path.join(defaultRulesDir(), 'verdicts.yaml'));
  return parseVerdicts(await readSmallFile(file, 'verdict precedence file'), file);
}

/** Rule files under `root`, relative and sorted (the questions folder is not rules). */
export async function ruleFiles(root: string, rel = ''): Promise<string[]> {
  const entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: string[] = [];
  for (const e of entries) {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      if (!rel && NOT_RULES.has(e.name)) continue;
      out.push(...(await ruleFiles(root, r)));
    } else if (rel && /\.ya?ml$/.test(e.name)) {
      out.push(r);
    }
  }
  return out;
}
