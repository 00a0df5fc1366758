import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readSmallFile } from '../case/load.js';
import { InputError } from '../errors.js';
import { INTERFACES, VERDICTS } from '../case/schema.js';
import { FACT_CATALOGUE } from '../facts/facts.js';
import { defaultRulesDir } from '../rules/dir.js';
import { isKnownSource, normaliseSource, SEED_SECTIONS, type SeedFolder } from '../rules/seed.js';
import { nodeAt, parseYaml, positionOf, rangeStart, validateYaml } from '../yamlfile.js';
import { ANSWER_TYPES, indexQuestions, PLACEHOLDER, type AnswerType, type Question, type QuestionSet } from './question-set.js';

export { ANSWER_TYPES, indexQuestions, renderQuestionText, type AnswerType, type Question, type QuestionSet } from './question-set.js';

/**
 * The triage questions, as data: `rules/questions/<seed-section>.yaml`, one file per section of
 * the article, each question naming the case fact its answer sets. Question text lives only
 * there; this module parses and validates it (pure `parseQuestionFile`, thin `loadQuestions`).
 */

const answerSchema = z
  .object({
    type: z.enum(ANSWER_TYPES).describe('how the answer is typed'),
    values: z.array(z.string().min(1)).min(1).optional().describe('the choices (type choice)'),
    other: z.boolean().optional().describe('type choice: also accept a typed value outside the list'),
  })
  .strict();

const questionSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { message: 'a kebab-case id' }).describe('unique among all questions'),
    fact: z.string().min(1).describe('the case field (dotted path) the answer sets'),
    ask: z.string().min(1).describe('the question, one sentence'),
    why: z.string().min(1).describe('why the answer matters'),
    collect: z.string().min(1).describe('the exact command(s) that collect the answer on the target'),
    collect_by: z
      .partialRecord(z.enum(INTERFACES), z.string().min(1))
      .optional()
      .describe('the command(s) for one probe interface, where they differ from collect; "none: <why>" when the interface has no way'),
    answer: answerSchema,
    source: z.string().min(1).optional().describe('overrides the file\'s seed section (a kernel-facts.md / kernel-notes.md reference)'),
    always: z.boolean().optional().describe('asked whenever the case lacks it, even when no rule waits for it'),
    while_possible: z.array(z.enum(VERDICTS)).min(1).optional().describe('verdict ids: asked while the case is undecided and one of them is still possible, for an answer no completion needs (an experiment the case does not report)'),
  })
  .strict();

const fileSchema = z
  .object({
    section: z.string().min(1).describe('the seed section heading this file follows'),
    questions: z.array(questionSchema).min(1),
  })
  .strict();

/** Facts a question may set: a catalogue base fact of one of these types per answer type. */
const TYPE_FOR: Record<AnswerType, string> = {
  boolean: 'boolean',
  count: 'number',
  integer: 'number',
  choice: 'string',
  text: 'string',
  cpulist: 'string',
  list: 'list',
};

/**
 * Parse one question file. Pure: `relPath` (e.g. `scope.yaml`) names the seed section the file
 * follows; `file` is used in error positions.
 */
export function parseQuestionFile(text: string, relPath: string, file = relPath, firstOrder = 0): Question[] {
  const yaml = parseYaml(text, file, 'question file');
  const spec = validateYaml(fileSchema, yaml);
  const at = (p: Array<string | number>) => ({ file, ...positionOf(yaml.lines, rangeStart(nodeAt(yaml.doc, p).node)) });

  const folder = path.basename(relPath).replace(/\.ya?ml$/, '');
  if (!(folder in SEED_SECTIONS)) {
    throw new InputError({ file, line: 1, col: 1 }, `a question file named after a seed section (${Object.keys(SEED_SECTIONS).map((k) => `${k}.yaml`).join(', ')})`, path.basename(relPath));
  }
  const heading = SEED_SECTIONS[folder as SeedFolder];
  if (normaliseSource(spec.section) !== heading) throw new InputError(at(['section']), `section: ${heading} (the heading of ${folder}/)`, spec.section);

  return spec.questions.map((q, i): Question => {
    const where = (key: string) => at(['questions', i, key]);
    const fact = FACT_CATALOGUE.get(q.fact);
    if (!fact || fact.derived) throw new InputError(where('fact'), 'a case field (see `kretprobe-triage rules facts`; derived facts cannot be asked)', q.fact);
    if (fact.type !== TYPE_FOR[q.answer.type]) {
      throw new InputError(at(['questions', i, 'answer', 'type']), `an answer type that fits ${q.fact} (a ${fact.type})`, q.answer.type);
    }
    if (q.answer.type === 'choice') {
      if (!q.answer.values) throw new InputError(at(['questions', i, 'answer']), 'values: [...] for a choice', 'no values');
      if (fact.values) {
        const missing = fact.values.filter((v) => !q.answer.values!.includes(v));
        const extra = q.answer.values.filter((v) => !fact.values!.includes(v));
        if (missing.length || extra.length) {
          throw new InputError(at(['questions', i, 'answer', 'values']), `the values ${q.fact} takes (${fact.values.join(', ')})`, q.answer.values.join(', '));
        }
      }
    } else if (q.answer.values || q.answer.other !== undefined) {
      throw new InputError(at(['questions', i, 'answer']), 'values/other only with type choice', `type ${q.answer.type}`);
    }
    if (q.answer.type === 'cpulist' && q.fact !== 'kernel.possible_cpus') throw new InputError(where('fact'), 'kernel.possible_cpus for a cpulist answer', q.fact);
    for (const key of ['ask', 'why', 'collect'] as const) {
      for (const m of [q[key], ...(key === 'collect' ? Object.values(q.collect_by ?? {}) : [])].flatMap((t) => [...t.matchAll(PLACEHOLDER)])) {
        const named = FACT_CATALOGUE.get(m[1]!);
        if (!named || named.derived) throw new InputError(where(key), 'placeholders naming case fields, e.g. {probe.target}', `{${m[1]}}`);
      }
    }
    let source = heading as string;
    if (q.source !== undefined) {
      if (!isKnownSource(q.source)) throw new InputError(where('source'), 'a seed section heading or kernel-facts.md §N / kernel-notes.md', q.source);
      source = normaliseSource(q.source);
    }
    return {
      id: q.id,
      fact: q.fact,
      ask: oneLine(q.ask),
      why: oneLine(q.why),
      collect: q.collect.trim(),
      collectBy: Object.fromEntries(Object.entries(q.collect_by ?? {}).map(([k, v]) => [k, v.trim()])),
      answer: { type: q.answer.type, ...(q.answer.values ? { values: q.answer.values } : {}), ...(q.answer.other ? { other: true } : {}) },
      source,
      always: q.always ?? false,
      whilePossible: q.while_possible ?? [],
      order: firstOrder + i,
      file,
      line: at(['questions', i]).line,
    };
  });
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The shipped questions: `rules/questions/` next to the rules. */
export function defaultQuestionsDir(): string {
  return path.join(defaultRulesDir(), 'questions');
}

/** Read every `<section>.yaml` under `dir`, in the article's section order. */
export async function loadQuestions(dir: string = defaultQuestionsDir()): Promise<QuestionSet> {
  let names: string[];
  try {
    names = (await fs.readdir(dir)).filter((n) => /\.ya?ml$/.test(n));
  } catch {
    throw new InputError({ file: dir }, 'a questions directory', 'no such directory');
  }
  const rank = (n: string) => {
    const i = Object.keys(SEED_SECTIONS).indexOf(n.replace(/\.ya?ml$/, ''));
    return i < 0 ? Infinity : i;
  };
  names.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
  const list: Question[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    list.push(...parseQuestionFile(await readSmallFile(full, 'question file'), name, full, list.length));
  }
  if (list.length === 0) throw new InputError({ file: dir }, 'question files (<section>.yaml)', 'none');
  return indexQuestions(list);
}

