import type { Rules } from '../index.js';
import { formatCaseText } from '../report/text.js';
import { renderQuestionText, type QuestionSet } from '../triage/questions.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import { formatWriteupJson, formatWriteupText } from './format.js';
import { collectFor, judgeWriteup } from './judge.js';
import { loadLexicon, type Lexicon } from './lexicon.js';
import type { AuditInput } from './load.js';

export { expandAuditPaths, loadAuditInputs } from './load.js';

let cached: { dir: string | undefined; lex: Promise<Lexicon> } | undefined;

/** The lexicon of a rules directory, read once per process. */
function lexiconOf(dir: string | undefined): Promise<Lexicon> {
  if (!cached || cached.dir !== dir) cached = { dir, lex: loadLexicon(dir) };
  return cached.lex;
}
export { lexiconOf as loadLexicon };

/** `audit` for one write-up: its verdict, and what to print for it in the chosen format. */
export async function auditWriteup(
  input: Extract<AuditInput, { kind: 'writeup' }>,
  rules: Rules,
  format: 'text' | 'json' | 'markdown',
  opts: { color: boolean; warnings: boolean; questions?: QuestionSet | undefined },
): Promise<{ verdict: CaseVerdict; output?: string }> {
  const lex = await lexiconOf(rules.set.dir);
  const x = input.extraction;
  const v = await judgeWriteup(x, rules, lex, input.sidecar);
  const iface = typeof x.case.probe?.interface === 'string' && x.case.probe.interface !== 'unknown' ? x.case.probe.interface : undefined;
  const fallback = (fact: string) => {
    const q = opts.questions?.byFact.get(fact);
    return q ? renderQuestionText(q.collect, x.case) : undefined;
  };
  const never = collectFor(v.missing, iface, lex, fallback);
  if (format === 'json') return { verdict: v, output: formatWriteupJson(x, v, never) };
  if (format === 'text') return { verdict: v, output: `${formatCaseText(v, { color: opts.color, warnings: opts.warnings })}${formatWriteupText(x, v, never, { color: opts.color })}\n` };
  return { verdict: v };
}
