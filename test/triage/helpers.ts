import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UNKNOWN, type Case } from '../../src/case/schema.js';
import { OTHER } from '../../src/triage/answer.js';
import type { Question, QuestionSet } from '../../src/triage/questions.js';

export const root = path.resolve(import.meta.dirname, '../..');

export function valueAt(data: unknown, fact: string): unknown {
  let cur: unknown = data;
  for (const key of fact.split('.')) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[key] : undefined;
  return cur;
}

/** How a person holding `ref` would answer `q`: the value to pick, then (for "other") what to type. */
export function scriptedAnswer(q: Question, ref: Case): { pick?: string; type?: string } {
  const v = valueAt(ref, q.fact);
  const unknown = v === undefined || v === null || v === UNKNOWN;
  switch (q.answer.type) {
    case 'boolean':
      return { pick: unknown ? UNKNOWN : String(v) };
    case 'choice':
      if (unknown) return { pick: UNKNOWN };
      return q.answer.values?.includes(String(v)) ? { pick: String(v) } : { pick: OTHER, type: String(v) };
    case 'list':
      return { type: unknown ? UNKNOWN : (v as string[]).length ? (v as string[]).join(',') : 'none' };
    default:
      return { type: unknown ? UNKNOWN : String(v) };
  }
}

/** The question a prompt message belongs to (placeholders may be filled in or not yet). */
export function questionOfMessage(message: string, questions: QuestionSet): Question {
  const hits = questions.list.filter((q) => {
    const pattern = q.ask.split(/\{[a-z_.]+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    return new RegExp(`^${pattern}`).test(message);
  });
  if (hits.length !== 1) throw new Error(`message matches ${hits.length} questions: ${message}`);
  return hits[0]!;
}

export async function tempDir(prefix: string): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), `krt-${prefix}-`));
}
