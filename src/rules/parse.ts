import { InputError, shown } from '../errors.js';
import { FACT_CATALOGUE } from '../facts/facts.js';
import { nodeAt, parseYaml, positionOf, rangeStart, validateYaml, type YamlFile } from '../yamlfile.js';
import { CLAIM_FACTS, claimRuleSchema, constraintSchema, ruleSchema, type ClaimRuleSpec, type Condition, type ConstraintSpec, type Leaf, type RuleSpec } from './schema.js';
import { isKnownSource, normaliseSource, SEED_SECTIONS } from './seed.js';

export interface ParsedRule {
  kind: 'rule';
  spec: RuleSpec;
  file: string;
  yaml: YamlFile;
}
export interface ParsedClaimRule {
  kind: 'claim';
  spec: ClaimRuleSpec;
  file: string;
  yaml: YamlFile;
}
export interface ParsedConstraint {
  kind: 'constraint';
  spec: ConstraintSpec;
  file: string;
  yaml: YamlFile;
}
export type AnyRule = ParsedRule | ParsedClaimRule | ParsedConstraint;

/** The folder of rules/ that holds the consistency constraints. */
export const CONSTRAINTS_FOLDER = 'constraints';

/**
 * Parse one rule file. Pure: `relPath` (e.g. `counters/nmissed-rose.yaml`) is both where errors
 * point and where the id comes from — a rule's id is its path, so they cannot drift.
 */
export function parseRuleFile(text: string, relPath: string, file = relPath): AnyRule {
  const yaml = parseYaml(text, file, 'rule file');
  const value = yaml.value as Record<string, unknown> | null;
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError({ file, line: 1, col: 1 }, 'a rule (a mapping with id, title, source, when, ...)', 'something else');
  }
  const idFromPath = relPath.replace(/\\/g, '/').replace(/\.ya?ml$/, '');
  const isConstraint = idFromPath.split('/')[0] === CONSTRAINTS_FOLDER;
  const isClaim = !isConstraint && 'claim' in value;
  const spec = isConstraint ? validateYaml(constraintSchema, yaml) : isClaim ? validateYaml(claimRuleSchema, yaml) : validateYaml(ruleSchema, yaml);
  const at = (path: Array<string | number>) => ({ file, ...positionOf(yaml.lines, rangeStart(nodeAt(yaml.doc, path).node)) });

  if (spec.id !== idFromPath) throw new InputError(at(['id']), `id: ${idFromPath} (a rule's id is its path under rules/)`, `id: ${spec.id}`);
  const folder = idFromPath.split('/')[0]!;
  if (!(folder in SEED_SECTIONS) && folder !== 'claims' && folder !== CONSTRAINTS_FOLDER) {
    throw new InputError(at(['id']), `a rule under one of ${[...Object.keys(SEED_SECTIONS), 'claims', CONSTRAINTS_FOLDER].join(', ')}`, `${folder}/`);
  }
  if (!isKnownSource(spec.source)) {
    throw new InputError(at(['source']), `a seed section heading (${Object.values(SEED_SECTIONS).join(' | ')}) or kernel-facts.md §N / kernel-notes.md`, spec.source);
  }
  spec.source = normaliseSource(spec.source);

  const allowed = (name: string) => FACT_CATALOGUE.has(name) || (isClaim && name in CLAIM_FACTS);
  const checkCondition = (c: Condition, path: Array<string | number>) => {
    walkLeaves(c, path, (leaf, p) => {
      if (!allowed(leaf.fact)) throw new InputError(at([...p, 'fact']), 'a known fact name (see `kretprobe-triage rules facts`)', leaf.fact);
      const v = leaf.value;
      if (v && typeof v === 'object' && !Array.isArray(v) && !allowed(v.fact)) {
        throw new InputError(at([...p, 'value', 'fact']), 'a known fact name', v.fact);
      }
    });
  };
  const checkTemplate = (template: string, path: Array<string | number>) => {
    for (const m of template.matchAll(/\{([a-z_.]+)\}/g)) {
      if (!allowed(m[1]!)) throw new InputError(at(path), 'placeholders naming known facts', `{${m[1]}}`);
    }
    // `[[ ... ]]` marks a part shown only when its facts are known: the marks pair up, unnested.
    const marks = [...template.matchAll(/\[\[|\]\]/g)].map((m) => m[0]);
    if (marks.some((m, i) => m !== (i % 2 === 0 ? '[[' : ']]')) || marks.length % 2 === 1) throw new InputError(at(path), 'optional parts as [[ ... ]], paired and not nested', shown(template.slice(0, 60)));
  };
  if (isConstraint) {
    const c = spec as ConstraintSpec;
    checkCondition(c.broken_when, ['broken_when']);
    checkTemplate(c.explains, ['explains']);
    checkTemplate(c.next, ['next']);
    return { kind: 'constraint', spec: c, file, yaml };
  }
  if (isClaim) {
    const c = spec as ClaimRuleSpec;
    c.judge.forEach((j, i) => {
      checkCondition(j.when, ['judge', i, 'when']);
      checkTemplate(j.because, ['judge', i, 'because']);
    });
    checkTemplate(c.otherwise.because, ['otherwise', 'because']);
    return { kind: 'claim', spec: c, file, yaml };
  }
  const r = spec as RuleSpec;
  checkCondition(r.when, ['when']);
  (r.requires ?? []).forEach((f, i) => {
    if (!allowed(f)) throw new InputError(at(['requires', i]), 'a known fact name', f);
  });
  checkTemplate(r.explains, ['explains']);
  checkTemplate(r.next, ['next']);
  return { kind: 'rule', spec: r, file, yaml };
}

/** Visit every leaf condition with its YAML path. */
export function walkLeaves(c: Condition, path: Array<string | number>, visit: (leaf: Leaf, path: Array<string | number>) => void): void {
  if ('all' in c) c.all.forEach((x, i) => walkLeaves(x, [...path, 'all', i], visit));
  else if ('any' in c) c.any.forEach((x, i) => walkLeaves(x, [...path, 'any', i], visit));
  else if ('not' in c) walkLeaves(c.not, [...path, 'not'], visit);
  else visit(c, path);
}
