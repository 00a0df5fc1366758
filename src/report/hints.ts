import type { Case } from '../case/schema.js';
import { collectFor, type QuestionSet } from '../triage/question-set.js';

/** How one missing fact is collected on the target, for the probe's interface. */
export interface Hint {
  fact: string;
  /** Every line of the command(s), whole; a line "none possible: ..." when there is no way. */
  lines: string[];
}

/**
 * The collection hints of a case's missing facts, per interface (collectFor decides which
 * command), for every output format.
 */
export function collectHints(questions: QuestionSet | undefined, c: Case, missing: readonly string[]): Hint[] {
  if (!questions) return [];
  const out: Hint[] = [];
  for (const fact of missing) {
    const q = questions.byFact.get(fact);
    if (!q) continue;
    const text = collectFor(q, c);
    out.push({ fact, lines: text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '') });
  }
  return out;
}
