import type { AuditInput } from '../audit/inputs.js';
import { parseWaiverComments } from '../case/waivers.js';
import type { LoadedCase } from '../case/parse.js';
import type { Rules } from '../index.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import { judgeWriteup } from './judge.js';
import { loadLexicon, type Lexicon } from './lexicon.js';
import { writeupOf } from './load.js';

let cached: { dir: string | undefined; lex: Promise<Lexicon> } | undefined;

/** The lexicon of a rules directory, read once per process. */
export function lexiconOf(dir: string | undefined): Promise<Lexicon> {
  if (!cached || cached.dir !== dir) cached = { dir, lex: loadLexicon(dir) };
  return cached.lex;
}

/**
 * The write-up loader of `audit` (src/audit/inputs.ts): the case a write-up states, its
 * extraction and sidecar, and the waivers of its `<!-- kretprobe-triage accept RULE: reason -->`
 * comments. The case has no YAML of its own: positions come from the extraction (provenance and
 * `claims[].at`).
 */
export async function writeupInput(text: string, file: string, rulesDir: string | undefined): Promise<AuditInput> {
  const lex = await lexiconOf(rulesDir);
  const { extraction, sidecar } = await writeupOf(text, file, lex);
  const loaded: LoadedCase = {
    file,
    data: extraction.case,
    text,
    get yaml(): never {
      throw new Error(`${file}: a write-up has no case YAML; use the extraction's positions`);
    },
  };
  return { file, kind: 'writeup', loaded, waivers: parseWaiverComments(text, file), writeup: { extraction, ...(sidecar ? { sidecar } : {}) } };
}

/** The verdict of one audit input: a write-up is judged with its disagreements and sidecar, a case by the engine. */
export async function judgeInput(input: AuditInput, rules: Rules, evaluate: (c: LoadedCase, r: Rules) => Promise<CaseVerdict>): Promise<CaseVerdict> {
  if (!input.writeup) return evaluate(input.loaded, rules);
  return judgeWriteup(input.writeup.extraction, rules, await lexiconOf(rules.set.dir), input.writeup.sidecar);
}
