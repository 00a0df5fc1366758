import { isMap, isPair, isScalar } from 'yaml';
import { InputError } from '../errors.js';
import { parseYaml, positionOf, rangeStart } from '../yamlfile.js';
import { checkValue, type AnswerValue } from './answer.js';
import type { Question, QuestionSet } from './questions.js';

/** One answer from `--answers`, checked as if it had been typed. */
export interface GivenAnswer {
  question: Question;
  value: AnswerValue;
}

/**
 * Parse an answers file: a flat YAML map from a question's fact path to its answer, e.g.
 * `probe.registration.result: ok`, `counters.end.nmissed: 1`, `ledger.workload_quiesced: unknown`.
 * Pure; every mistake is an InputError at the key or value that is wrong.
 */
export function parseAnswersFile(text: string, file: string, questions: QuestionSet): GivenAnswer[] {
  const yaml = parseYaml(text, file, 'answers file');
  const root = yaml.doc.contents;
  const at = (offset: number) => ({ file, ...positionOf(yaml.lines, offset) });
  if (root === null || yaml.value === null || yaml.value === undefined) return [];
  if (!isMap(root)) throw new InputError(at(rangeStart(root)), 'a map from fact path to answer (e.g. "probe.registration.result: ok")', 'something else');
  const out: GivenAnswer[] = [];
  for (const pair of root.items) {
    if (!isPair(pair) || !isScalar(pair.key)) continue;
    const fact = String(pair.key.value);
    const q = questions.byFact.get(fact);
    if (!q) throw new InputError(at(rangeStart(pair.key)), 'a fact a triage question sets (e.g. probe.registration.result, counters.end.nmissed)', fact);
    const node = pair.value;
    const value: unknown = node && isScalar(node) ? node.value : node ? (node as { toJSON(): unknown }).toJSON() : null;
    const checked = checkValue(q, value);
    if (!checked.ok) {
      const got = node?.range ? yaml.text.slice(node.range[0], node.range[1]).trim() : 'nothing';
      throw new InputError(at(node ? rangeStart(node) : rangeStart(pair.key)), `${fact}: ${checked.expected}`, got || 'an empty value');
    }
    out.push({ question: q, value: checked.value });
  }
  return out;
}
