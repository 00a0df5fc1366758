import type { Case } from '../case/schema.js';
import { getPath } from '../dotted.js';
import { renderQuestionText, type QuestionSet } from '../triage/question-set.js';

/** How one missing fact is collected on the target, for the probe's interface. */
export interface Hint {
  fact: string;
  /** Every line of the command(s), whole; a line "none possible: ..." when there is no way. */
  lines: string[];
}

/**
 * The collection hints of a case's missing facts, per interface (a bpftrace probe has no
 * kprobe_profile line and no tracefs event id): the question's `collect_by` entry for the
 * case's interface, else its `collect`. One owner for every output format.
 */
export function collectHints(questions: QuestionSet | undefined, c: Case, missing: readonly string[]): Hint[] {
  if (!questions) return [];
  const iface = getPath(c, 'probe.interface');
  const out: Hint[] = [];
  for (const fact of missing) {
    const q = questions.byFact.get(fact);
    if (!q) continue;
    const template = (typeof iface === 'string' ? q.collectBy[iface as keyof typeof q.collectBy] : undefined) ?? q.collect;
    const text = renderQuestionText(template, c).replace(/^none:\s*/, 'none possible: ');
    out.push({ fact, lines: text.split('\n').map((l) => l.trimEnd()).filter((l) => l.trim() !== '') });
  }
  return out;
}
