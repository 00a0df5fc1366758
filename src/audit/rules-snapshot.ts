import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
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
const PARSER_FILES = ['../rules/parse.js', '../rules/schema.js', '../rules/seed.js', '../rules/verdicts.js', '../facts/facts.js', '../case/schema.js', '../triage/questions.js', '../triage/question-set.js', '../writeup/lexicon.js'].map((f) => path.resolve(here, f));

interface Snapshot {
  key: string;
  rules: Array<{ kind: 'rule'; spec: unknown; file: string }>;
  claims: Array<{ kind: 'claim'; spec: unknown; file: string }>;
  constraints: Array<{ kind: 'constraint'; spec: unknown; file: string }>;
  verdicts: unknown;
  /** The questions under `<dir>/questions` (for the collection hints), null when they do not load. */
  questions: Question[] | null;
  /** The write-up lexicon under `<dir>/lexicon`, validated (writeup/lexicon.ts LexiconData), null when it does not load. */
  lexicon?: unknown;
}

/** Rules from the snapshot, or parsed again: both carry their questions (RuleSet.questions). */
export type SnapshotRuleSet = RuleSet;

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
  const snap = await applying(dir, snapshotFile, version);
  if (!snap) return loadRules(dir);
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

/** The snapshot (read once while the file is unchanged), when it was made from the rules under `dir`; else undefined. */
async function applying(dir: string, snapshotFile: string, version?: string): Promise<Snapshot | undefined> {
  // Named by its path, size and time of change: a file written again (a test, a rebuild while a
  // long process runs) is read again.
  const st = statSync(snapshotFile, { throwIfNoEntry: false });
  const stamp = st ? `${st.size}:${st.mtimeMs}` : 'none';
  let read = READ.get(snapshotFile);
  if (read?.stamp !== stamp) {
    let snap: Snapshot | undefined;
    try {
      snap = JSON.parse(readFileSync(snapshotFile, 'utf8')) as Snapshot;
    } catch {
      snap = undefined;
    }
    READ.set(snapshotFile, (read = { stamp, snap }));
  }
  const snap = read.snap;
  return snap && snap.key === (await snapshotKey(dir, version)) ? snap : undefined;
}
const READ = new Map<string, { stamp: string; snap: Snapshot | undefined }>();

/**
 * The write-up lexicon's validated data (writeup/lexicon.ts LexiconData) from the snapshot, when
 * it applies to `dir` and the lexicon loaded when it was made; else undefined (parse it).
 */
export async function lexiconSnapshot(dir: string, snapshotFile = SNAPSHOT_FILE): Promise<unknown> {
  return (await applying(dir, snapshotFile))?.lexicon ?? undefined;
}

/** The snapshot text for the rules under `dir` (the build writes it beside dist/src). */
export async function makeSnapshot(dir: string): Promise<string> {
  const set = await loadRules(dir);
  const strip = <T extends { kind: string; spec: unknown; file: string }>(r: T): Pick<T, 'kind' | 'spec' | 'file'> => ({ kind: r.kind, spec: r.spec, file: r.file });
  // What an audit does with questions that do not load: no hints (src/commands/audit.ts).
  const { loadQuestions } = await import('../triage/questions.js');
  const questions = await loadQuestions(path.join(dir, 'questions')).then((q) => q.list, () => null);
  // What a write-up audit does with a lexicon that does not load: parse it, and say what is wrong.
  const lexicon = await import('../writeup/lexicon.js').then((m) => m.readLexiconData(dir)).catch(() => null);
  const snap: Snapshot = { key: await snapshotKey(dir), rules: set.rules.map(strip), claims: set.claims.map(strip), constraints: set.constraints.map(strip), verdicts: set.verdicts, questions, lexicon };
  return `${JSON.stringify(snap)}\n`;
}
