import path from 'node:path';
import { InputError } from '../errors.js';
import { readSmallFile } from '../case/load.js';
import { FACT_CATALOGUE } from '../facts/facts.js';
import { nodeAt, positionOf, rangeStart } from '../yamlfile.js';
import { parseRuleFile, type AnyRule } from './parse.js';
import { ruleFiles } from './load.js';
import { requireDirectory } from '../fsutil.js';
import { CLAIM_FACTS, type Condition, type Leaf } from './schema.js';

export interface LintProblem {
  file: string;
  line: number;
  col: number;
  message: string;
}

type Catalogue = { type: string; values?: readonly string[] };
const entry = (name: string): Catalogue | undefined =>
  FACT_CATALOGUE.get(name) ?? (CLAIM_FACTS as Record<string, Catalogue>)[name];

const NUMERIC = new Set(['lessThan', 'lessThanInclusive', 'greaterThan', 'greaterThanInclusive']);

/** Problems a single leaf has on its own: wrong type for the operator, a value the fact never takes. */
function leafProblems(leaf: Leaf): string[] {
  const e = entry(leaf.fact);
  if (!e) return [];
  const v = leaf.value;
  const ref = v !== null && typeof v === 'object' && !Array.isArray(v);
  const out: string[] = [];
  if (NUMERIC.has(leaf.operator) && e.type !== 'number') out.push(`${leaf.operator} on ${leaf.fact}, which is ${e.type === 'list' ? 'a list' : `a ${e.type}`}: never true`);
  if (!ref && NUMERIC.has(leaf.operator) && typeof v !== 'number') out.push(`${leaf.operator} compares ${leaf.fact} with ${JSON.stringify(v)}, not a number: never true`);
  if ((leaf.operator === 'contains' || leaf.operator === 'doesNotContain') && e.type !== 'list') out.push(`${leaf.operator} on ${leaf.fact}, which is not a list: never true`);
  if (!ref && (leaf.operator === 'equal' || leaf.operator === 'notEqual')) {
    const want = e.type === 'list' ? null : e.type;
    if (want && typeof v !== want && !(want === 'string' && typeof v === 'number')) out.push(`${leaf.operator} compares ${leaf.fact} (a ${want}) with ${JSON.stringify(v)} (a ${typeof v})`);
    if (leaf.operator === 'equal' && e.values && typeof v === 'string' && !e.values.includes(v)) out.push(`${leaf.fact} is never ${JSON.stringify(v)} (it takes ${e.values.join(' | ')}): never true`);
  }
  if (!ref && (leaf.operator === 'in' || leaf.operator === 'notIn') && !Array.isArray(v)) out.push(`${leaf.operator} needs a list value`);
  if (!ref && leaf.operator === 'in' && Array.isArray(v) && e.values && v.every((x) => typeof x === 'string' && !e.values!.includes(x))) out.push(`${leaf.fact} takes none of ${JSON.stringify(v)}: never true`);
  return out;
}

/** Contradictions between the leaves of one `all`: equal a and equal b, empty numeric ranges. */
function allProblems(parts: Condition[]): string[] {
  const leaves = parts.filter((p): p is Leaf => 'fact' in p && !(p.value !== null && typeof p.value === 'object' && !Array.isArray(p.value)));
  const out: string[] = [];
  const byFact = new Map<string, Leaf[]>();
  for (const l of leaves) byFact.set(l.fact, [...(byFact.get(l.fact) ?? []), l]);
  for (const [fact, ls] of byFact) {
    const equals = [...new Set(ls.filter((l) => l.operator === 'equal').map((l) => JSON.stringify(l.value)))];
    if (equals.length > 1) out.push(`${fact} must equal ${equals.join(' and ')} at once: never true`);
    let lo = -Infinity;
    let hi = Infinity;
    for (const l of ls) {
      const n = l.value as number;
      if (typeof n !== 'number') continue;
      if (l.operator === 'greaterThan') lo = Math.max(lo, n + 1e-9);
      if (l.operator === 'greaterThanInclusive') lo = Math.max(lo, n);
      if (l.operator === 'lessThan') hi = Math.min(hi, n - 1e-9);
      if (l.operator === 'lessThanInclusive') hi = Math.min(hi, n);
      if (l.operator === 'equal') {
        lo = Math.max(lo, n);
        hi = Math.min(hi, n);
      }
    }
    if (lo > hi) out.push(`no value of ${fact} satisfies every bound: never true`);
  }
  return out;
}

function conditionProblems(c: Condition, p: Array<string | number>, report: (path: Array<string | number>, msg: string) => void): void {
  if ('all' in c) {
    for (const m of allProblems(c.all)) report([...p, 'all'], m);
    c.all.forEach((x, i) => conditionProblems(x, [...p, 'all', i], report));
  } else if ('any' in c) c.any.forEach((x, i) => conditionProblems(x, [...p, 'any', i], report));
  else if ('not' in c) conditionProblems(c.not, [...p, 'not'], report);
  else for (const m of leafProblems(c)) report(p, m);
}

/** Static checks of one parsed rule: conditions that can never be true. */
export function lintRule(rule: AnyRule): LintProblem[] {
  const out: LintProblem[] = [];
  const report = (p: Array<string | number>, message: string) => {
    const at = positionOf(rule.yaml.lines, rangeStart(nodeAt(rule.yaml.doc, p).node));
    out.push({ file: rule.file, ...at, message });
  };
  if (rule.kind === 'rule') conditionProblems(rule.spec.when, ['when'], report);
  else if (rule.kind === 'constraint') conditionProblems(rule.spec.broken_when, ['broken_when'], report);
  else rule.spec.judge.forEach((j, i) => conditionProblems(j.when, ['judge', i, 'when'], report));
  return out;
}

/** Lint every rule file under dir: parse errors and never-firing conditions, all of them. */
export async function lintRulesDir(dir: string): Promise<{ problems: LintProblem[]; files: number }> {
  await requireDirectory(dir, 'a rules directory');
  const files = await ruleFiles(dir);
  const problems: LintProblem[] = [];
  const ids = new Map<string, string>();
  for (const rel of files) {
    const full = path.join(dir, rel);
    try {
      const rule = parseRuleFile(await readSmallFile(full, 'rule file'), rel, full);
      if (ids.has(rule.spec.id)) problems.push({ file: full, line: 1, col: 1, message: `duplicate rule id ${rule.spec.id} (also ${ids.get(rule.spec.id)})` });
      ids.set(rule.spec.id, full);
      problems.push(...lintRule(rule));
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      problems.push({ file: err.file ?? full, line: err.line ?? 1, col: err.col ?? 1, message: err.message.replace(/^[^:]*(:\d+){0,2}: /, '') });
    }
  }
  return { problems, files: files.length };
}
