import { parseWaiverComments, type Waiver } from '../case/waivers.js';
import type { LoadedCase } from '../case/parse.js';
import type { Rules } from '../index.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import type { Extraction } from './extract.js';
import type { Sidecar } from './judge.js';
import type { Lexicon } from './lexicon.js';
import path from 'node:path';
import { defaultRulesDir } from '../rules/dir.js';

/**
 * A write-up as `audit` reads it: the shape of src/audit/inputs.ts's AuditInput for a write-up,
 * stated here so this module never imports the dispatcher that imports it.
 */
export interface WriteupAuditInput {
  file: string;
  kind: 'writeup';
  loaded: LoadedCase;
  waivers: Waiver[];
  writeup: { extraction: Extraction; sidecar?: Sidecar };
}

// `audit` imports this module for every run; the write-up machinery behind it (Markdown parser,
// lexicon, zod schemas of the sidecar) is imported only when a write-up is met, so auditing case
// files does not load it.

let cached: { dir: string; lex: Promise<Lexicon> } | undefined;

/**
 * The lexicon of a rules directory (undefined: the shipped one), read once per process. Keyed by
 * the resolved directory: the loader is handed the option as given, the judge the rule set's
 * resolved path, and both name one directory.
 */
export function lexiconOf(dir: string | undefined): Promise<Lexicon> {
  const key = path.resolve(dir ?? defaultRulesDir());
  if (!cached || cached.dir !== key) cached = { dir: key, lex: import('./lexicon.js').then(({ loadLexicon }) => loadLexicon(key)) };
  return cached.lex;
}

/**
 * The write-up loader of `audit` (src/audit/inputs.ts): the case a write-up states, its
 * extraction and sidecar, and the waivers of its `<!-- kretprobe-triage accept RULE: reason -->`
 * comments. The case has no YAML of its own: positions come from the extraction (provenance and
 * `claims[].at`).
 */
export async function writeupInput(text: string, file: string, rulesDir: string | undefined): Promise<WriteupAuditInput> {
  const [lex, { writeupOf }] = await Promise.all([lexiconOf(rulesDir), import('./load.js')]);
  const { extraction, sidecar } = await writeupOf(text, file, lex);
  return { file, kind: 'writeup', loaded: writeupLoaded(file, extraction.case, text), waivers: parseWaiverComments(text, file), writeup: { extraction, ...(sidecar ? { sidecar } : {}) } };
}

/** The case a write-up amounts to, as a loaded case: it has no YAML of its own. */
export function writeupLoaded(file: string, data: LoadedCase['data'], text: string): LoadedCase {
  return {
    file,
    data,
    text,
    get yaml(): never {
      throw new Error(`${file}: a write-up has no case YAML; use the extraction's positions`);
    },
  };
}

/** The verdict of one audit input: a write-up is judged with its disagreements and sidecar, a case by the engine. */
export async function judgeInput(input: { file?: string; kind?: string; loaded: LoadedCase; waivers?: Waiver[]; writeup?: { extraction: Extraction; sidecar?: Sidecar } | undefined }, rules: Rules, evaluate: (c: LoadedCase, r: Rules) => Promise<CaseVerdict>): Promise<CaseVerdict> {
  if (!input.writeup) return evaluate(input.loaded, rules);
  const { judgeWriteup } = await import('./judge.js');
  return judgeWriteup(input.writeup.extraction, rules, await lexiconOf(rules.set.dir), input.writeup.sidecar);
}
