import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RuleSet } from '../rules/load.js';
import type { Question } from '../triage/question-set.js';
import type { YamlFile } from '../yamlfile.js';
import { rulesVersion } from '../version.js';

/**
 * Parsing and validating the shipped rules is most of a one-case audit's start-up. The build
 * writes what loadRules returns for them (`npm run build`: dist/rules.snapshot.json); an audit
 * uses it only when it was made from the same rule files by the same parser code, and otherwise
 * reads the rules as loadRules always does. Editing a rule, or the parser, never meets a stale
 * snapshot: either changes the key. The rule parser (and zod, the YAML library) is loaded only
 * when the snapshot does not apply.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
export const SNAPSHOT_FILE = path.resolve(here, '../../rules.snapshot.json');
// What parseRuleFile's result depends on besides the rule files.
const PARSER_FILES = ['../rules/parse.js', '../rules/schema.js', '../rules/seed.js', '../rules/verdicts.js', '../facts/facts.js', '../case/schema.js', '../triage/questions.js', '../triage/question-set.js'].map((f) => path.resolve(here, f));

interface Snapshot {
  key: string;
  rules: Array<{ kind: 'rule'; spec: unknown; file: string }>;
  claims: Array<{ kind: 'claim'; spec: unknown; file: string }>;
  constraints: Array<{ kind: 'constraint'; spec: unknown; file: string }>;
  verdicts: unknown;
  /** The questions under `<dir>/questions` (for the collection hints), null when they do not load. */
  questions: Question[] | null;
}

/** Rules from the snapshot carry its questions; rules parsed again do not (load them as usual). */
export interface SnapshotRuleSet extends RuleSet {
  questions?: Question[] | null;
}

export async function snapshotKey(rulesDir: string, version?: string): Promise<string> {
  const hash = createHash('sha256').update(version ?? (await rulesVersion(rulesDir)));
  // Read synchronously: a handful of small files at start-up, where a thread-pool round trip
  // per file costs more than the read.
  for (const f of PARSER_FILES) {
    try {
      hash.update(readFileSync(f));
    } catch {
      hash.update(`missing ${f}`);
    }
  }
  return hash.digest('hex');
}

const loadRules = async (dir: string): Promise<RuleSet> => (await import('../rules/load.js')).loadRules(dir);

/** The rules under `dir`, from the snapshot when it matches, else parsed. `version`: rulesVersion(dir), when the caller has it. */
export async function loadRulesSnapshot(dir: string, snapshotFile = SNAPSHOT_FILE, version?: string): Promise<SnapshotRuleSet> {
  let snap: Snapshot | undefined;
  try {
    snap = JSON.parse(readFileSync(snapshotFile, 'utf8')) as Snapshot;
  } catch {
    return loadRules(dir);
  }
  if (snap.key !== (await snapshotKey(dir, version))) return loadRules(dir);
  // Only `rules lint` reads a rule's positioned YAML, and it reads the rule files itself.
  const withYaml = <T extends { file: string }>(r: T) =>
    Object.defineProperty({ ...r }, 'yaml', {
      get: (): YamlFile => {
        throw new Error(`${r.file}: positioned YAML is not kept in the rules snapshot`);
      },
    }) as T & { yaml: YamlFile };
  return {
    dir,
    rules: snap.rules.map(withYaml) as unknown as RuleSet['rules'],
    claims: snap.claims.map(withYaml) as unknown as RuleSet['claims'],
    constraints: (snap.constraints ?? []).map(withYaml) as unknown as RuleSet['constraints'],
    verdicts: snap.verdicts as RuleSet['verdicts'],
    questions: snap.questions,
  };
}

/** The snapshot text for the rules under `dir` (the build writes it beside dist/src). */
export async function makeSnapshot(dir: string): Promise<string> {
  const set = await loadRules(dir);
  const strip = <T extends { kind: string; spec: unknown; file: string }>(r: T): Pick<T, 'kind' | 'spec' | 'file'> => ({ kind: r.kind, spec: r.spec, file: r.file });
  // What an audit does with questions that do not load: no hints (src/commands/audit.ts).
  const { loadQuestions } = await import('../triage/questions.js');
  const questions = await loadQuestions(path.join(dir, 'questions')).then((q) => q.list, () => null);
  const snap: Snapshot = { key: await snapshotKey(dir), rules: set.rules.map(strip), claims: set.claims.map(strip), constraints: set.constraints.map(strip), verdicts: set.verdicts, questions };
  return `${JSON.stringify(snap)}\n`;
}
