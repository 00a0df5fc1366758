import type { INTERFACES } from '../case/schema.js';
import { getPath } from '../dotted.js';
import { InputError } from '../errors.js';

// The question set as the rest of the tool uses it, apart from the question file parser
// (questions.ts, with zod): an audit takes the shipped questions from the build's rules
// snapshot and renders their commands without loading the parser.

export const ANSWER_TYPES = ['boolean', 'count', 'integer', 'choice', 'text', 'cpulist', 'list'] as const;
export type AnswerType = (typeof ANSWER_TYPES)[number];

/** One question, validated, with where it was declared. */
export interface Question {
  id: string;
  fact: string;
  ask: string;
  why: string;
  collect: string;
  /** Per interface, where the commands differ (see collectFor). */
  collectBy: Partial<Record<(typeof INTERFACES)[number], string>>;
  answer: { type: AnswerType; values?: string[]; other?: boolean };
  /** Seed section heading (or kernel fact) the question rests on. */
  source: string;
  always: boolean;
  /**
   * Verdicts while any of which is still possible (and the case undecided) the question is asked,
   * though no completion needs its answer: an experiment the case does not report bounds nothing,
   * so the search never asks for it, yet running it can decide.
   */
  whilePossible: string[];
  /** Position in the whole question list: files in the article's order, then file order. */
  order: number;
  file: string;
  line: number;
}

/** `{fact.path}` placeholders in question text and commands. */
export const PLACEHOLDER = /\{([a-z_]+(?:\.[a-z_]+)+)\}/g;

/** The question set, indexed by id and by fact. */
export interface QuestionSet {
  list: Question[];
  byId: Map<string, Question>;
  byFact: Map<string, Question>;
}

/** Index a question list, refusing duplicate ids or two questions for one fact. */
export function indexQuestions(list: Question[]): QuestionSet {
  const byId = new Map<string, Question>();
  const byFact = new Map<string, Question>();
  for (const q of list) {
    const same = byId.get(q.id);
    if (same) throw new InputError({ file: q.file, line: q.line, col: 1 }, `a unique question id (also ${same.file}:${same.line})`, q.id);
    const twin = byFact.get(q.fact);
    if (twin) throw new InputError({ file: q.file, line: q.line, col: 1 }, `one question per fact (${q.fact} is also asked by ${twin.id})`, q.id);
    byId.set(q.id, q);
    byFact.set(q.fact, q);
  }
  return { list, byId, byFact };
}

/**
 * The command(s) that collect `q`'s answer for the probe interface the case states (a bpftrace
 * probe has no kprobe_profile line and no tracefs event id): its `collect_by` entry for that
 * interface, else `collect`, placeholders filled. "none: why" reads "none possible: why". The one
 * owner of that choice: triage's prompts and end report and every audit format read it.
 */
export function collectFor(q: Question, data: unknown): string {
  const iface = getPath(data, 'probe.interface');
  // collectableOn reads the same choice.
  const template = (typeof iface === 'string' ? q.collectBy[iface as keyof Question['collectBy']] : undefined) ?? q.collect;
  return renderQuestionText(template, data).replace(/^none:\s*/, 'none possible: ');
}

/**
 * Whether the case's probe interface has a way to give `q`'s answer: its command for that
 * interface (collectFor's choice) is not "none: why". The one owner of that reading.
 */
export function collectableOn(q: Question, data: unknown): boolean {
  const iface = getPath(data, 'probe.interface');
  const template = (typeof iface === 'string' ? q.collectBy[iface as keyof Question['collectBy']] : undefined) ?? q.collect;
  return !/^none:/.test(template);
}

/**
 * `facts` (most decisive first) split into those the case's interface can give and those it
 * cannot, each part in its order: `next` names only the first. A fact without a question, or
 * without questions at all, counts as one it can give.
 */
export function byCollectable(facts: readonly string[], set: QuestionSet | undefined, data: unknown): { can: string[]; cannot: string[] } {
  if (!set) return { can: [...facts], cannot: [] };
  const can: string[] = [];
  const cannot: string[] = [];
  for (const f of facts) {
    const q = set.byFact.get(f);
    (q === undefined || collectableOn(q, data) ? can : cannot).push(f);
  }
  return { can, cannot };
}

/** Fill `{fact.path}` placeholders from the case; an unknown one stays visible as `<fact.path>`. */
export function renderQuestionText(template: string, data: unknown): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const cur = getPath(data, name);
    if (cur === undefined || cur === null || cur === 'unknown') return `<${name}>`;
    return Array.isArray(cur) ? cur.join(',') : String(cur);
  });
}
