import { UNKNOWN } from '../case/schema.js';
import { parseCpuCount } from '../kernel/cpus.js';
import type { Question } from './questions.js';

/**
 * Answers, typed or read from an answers file, turned into case values. Pure. Every question
 * accepts `unknown`, which is stored as the explicit `unknown` so it is never asked again.
 */

export type AnswerValue = boolean | number | string | string[];

export type Checked = { ok: true; value: AnswerValue } | { ok: false; expected: string };

/** The value a select prompt returns for "type another value". */
export const OTHER = '\u0000other';

export interface Choice {
  name: string;
  value: string;
}

/** What a question offers when it is a list to pick from; undefined when it is typed. */
export function choicesFor(q: Question): Choice[] | undefined {
  if (q.answer.type === 'boolean') return [{ name: 'yes', value: 'true' }, { name: 'no', value: 'false' }, { name: UNKNOWN, value: UNKNOWN }];
  if (q.answer.type !== 'choice') return undefined;
  const list = (q.answer.values ?? []).map((v) => ({ name: v, value: v }));
  if (q.answer.other) list.push({ name: 'other (type it)', value: OTHER });
  list.push({ name: UNKNOWN, value: UNKNOWN });
  return list;
}

/** A picked choice as a case value. */
export function fromChoice(q: Question, picked: string): AnswerValue {
  if (q.answer.type === 'boolean' && picked !== UNKNOWN) return picked === 'true';
  return picked;
}

/** What a typed answer to `q` must look like, in words (for prompts and error messages). */
export function expectedFor(q: Question): string {
  switch (q.answer.type) {
    case 'boolean':
      return 'true, false or unknown';
    case 'count':
      return 'a whole number >= 0, or unknown';
    case 'integer':
      return 'a whole number, or unknown';
    case 'choice':
      return `one of ${(q.answer.values ?? []).join(' | ')}${q.answer.other ? ' (or another value)' : ''}, or unknown`;
    case 'text':
      return 'a non-empty text, or unknown';
    case 'cpulist':
      return 'a CPU count or a cpulist such as 0-3,8-11, or unknown';
    case 'list':
      return 'comma-separated names, none, or unknown';
  }
}

const isUnknown = (s: string) => /^(unknown|\?)$/i.test(s.trim());

/** A line typed at a prompt, as a case value. */
export function parseTyped(q: Question, raw: string): Checked {
  const text = raw.trim();
  const bad: Checked = { ok: false, expected: expectedFor(q) };
  if (isUnknown(text)) return { ok: true, value: UNKNOWN };
  switch (q.answer.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return { ok: true, value: true };
      if (/^(n|no|false)$/i.test(text)) return { ok: true, value: false };
      return bad;
    case 'count':
      return /^\d{1,15}$/.test(text) ? { ok: true, value: Number(text) } : bad;
    case 'integer':
      return /^-?\d{1,15}$/.test(text) ? { ok: true, value: Number(text) } : bad;
    case 'choice':
      if ((q.answer.values ?? []).includes(text)) return { ok: true, value: text };
      return q.answer.other && /^\S+$/.test(text) ? { ok: true, value: text } : bad;
    case 'text':
      return text ? { ok: true, value: text } : bad;
    case 'cpulist':
      {
        const r = parseCpuCount(text);
        if (!r.ok) return { ok: false, expected: r.expected };
        return { ok: true, value: /^\d+$/.test(text) ? r.count : text };
      }
    case 'list':
      if (/^(none|-|\[\])$/i.test(text)) return { ok: true, value: [] };
      {
        const names = text.split(',').map((s) => s.trim()).filter(Boolean);
        return names.length && names.every((n) => /^\S+$/.test(n)) ? { ok: true, value: names } : bad;
      }
  }
}

/** A value given in an answers file (already YAML-typed), checked as if it had been typed. */
export function checkValue(q: Question, value: unknown): Checked {
  if (value === UNKNOWN || value === null) return { ok: true, value: UNKNOWN };
  switch (q.answer.type) {
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : { ok: false, expected: expectedFor(q) };
    case 'list':
      if (Array.isArray(value) && value.every((v) => typeof v === 'string' && /^\S+$/.test(v))) return { ok: true, value: value as string[] };
      return typeof value === 'string' ? parseTyped(q, value) : { ok: false, expected: expectedFor(q) };
    default:
      if (typeof value === 'number' || typeof value === 'string') return parseTyped(q, String(value));
      return { ok: false, expected: expectedFor(q) };
  }
}
