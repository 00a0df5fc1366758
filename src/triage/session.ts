import path from 'node:path';
import { Chalk, type ChalkInstance } from 'chalk';
import { loadCase, updateCaseFile } from '../case/load.js';
import { CASE_FORMAT, type LoadedCase } from '../case/parse.js';
import { InputError } from '../errors.js';
import { evaluateCase, type Rules } from '../index.js';
import { formatCaseText, formatValue, wrap } from '../report/text.js';
import { loadColour } from '../report/colour.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import { choicesFor, expectedFor, fromChoice, OTHER, parseTyped, type AnswerValue } from './answer.js';
import type { GivenAnswer } from './answers-file.js';
import { diffVerdicts, formatChanges, type Change } from './changes.js';
import { askInput, askSelect, PromptClosed, type PromptIo } from './prompt.js';
import { renderQuestionText, type Question, type QuestionSet } from './questions.js';
import { collectFor } from './question-set.js';
import { planQuestions, remainingUnknowns, type Plan } from './select.js';

/**
 * The triage loop: evaluate, pick the question that can still change the verdict, ask it, save
 * the answer at once (atomically), re-evaluate, say what changed, repeat. Every answer is on disk
 * before the next question is shown, so an interrupted session loses nothing and a rerun resumes.
 */

export interface TriageOptions {
  file: string;
  rules: Rules;
  questions: QuestionSet;
  /** Also ask what can only change warnings. */
  all?: boolean;
  /** Answers applied first, in order, as if typed. */
  answers?: GivenAnswer[];
  /** Ask the remaining questions through the prompt module. */
  interactive: boolean;
  prompt: PromptIo;
  out: (text: string) => void;
  color: boolean;
}

export interface TriageResult {
  verdict: CaseVerdict;
  /** The person stopped answering before the end. */
  stopped: boolean;
  /** Answers saved in this session (typed or from --answers). */
  saved: number;
  changes: Change[][];
}

/** A kebab-case case id from a file name: `My Case_2.yaml` -> `my-case-2`. */
export function caseIdFromFile(file: string): string {
  const base = path.basename(file).replace(/\.ya?ml$/i, '');
  const id = base.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return id || 'case';
}

/** The text a new case file starts from. */
export function newCaseText(file: string): string {
  return `# Written by kretprobe-triage triage: each answer is saved as soon as it is given.\nformat: ${CASE_FORMAT}\nid: ${caseIdFromFile(file)}\n`;
}

async function openCase(file: string): Promise<{ loaded: LoadedCase; created: boolean }> {
  try {
    return { loaded: await loadCase(file), created: false };
  } catch (err) {
    if (!(err instanceof InputError) || err.got !== 'no such file') throw err;
  }
  return { loaded: await updateCaseFile(file, {}, { initial: newCaseText(file), backup: false }), created: true };
}

/** Ask one question through the prompt module; resolves to the value to store. */
export async function askQuestion(q: Question, data: unknown, io: PromptIo): Promise<AnswerValue> {
  const message = renderQuestionText(q.ask, data);
  const choices = choicesFor(q);
  const typed = async (msg: string) => {
    const text = await askInput(msg, (t) => {
      const r = parseTyped(q, t);
      return r.ok ? true : `expected ${r.expected}`;
    }, io);
    const r = parseTyped(q, text);
    if (!r.ok) throw new Error(`prompt accepted an invalid answer for ${q.id}`);
    return r.value;
  };
  if (!choices) return typed(`${message} (${expectedFor(q)})`);
  const picked = await askSelect(message, choices, io);
  if (picked === OTHER) return typed(`${q.fact} (${expectedFor(q)})`);
  return fromChoice(q, picked);
}

function questionHeader(q: Question, data: unknown, left: number, k: ChalkInstance): string {
  const lines = [
    '',
    `${k.bold(`[${q.id}]`)} ${k.dim(`sets ${q.fact}`)}${k.dim(`  (${left} question${left === 1 ? '' : 's'} may follow)`)}`,
    wrap(`why: ${renderQuestionText(q.why, data)} [${q.source}]`, 100, '  '),
    `  ${k.dim('collect on the target:')}`,
    ...collectFor(q, data).split('\n').map((l) => `    ${l}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The closing report: the justified verdict, then each unknown that matters with its command. */
export function formatTriageEnd(verdict: CaseVerdict, plan: Plan, opts: { color: boolean; file: string; data?: unknown }): string {
  const k = new Chalk({ level: opts.color ? 1 : 0 });
  // The unknowns are listed below with their questions and commands, not a second time in the case text.
  let text = `\n${formatCaseText(verdict, { color: opts.color, missing: false })}`;
  const open = remainingUnknowns(plan);
  if (open.length) {
    text += `  still unknown ${k.dim('(answer these, then run triage again, to sharpen the verdict)')}\n`;
    for (const p of open) {
      text += `    ${k.bold(p.fact)}${p.question ? k.dim(`  [${p.question.id}]`) : ''}  ${k.dim(`matters for ${p.reason === 'verdict' ? 'the verdict' : p.reason === 'claim' ? 'a claim' : 'a warning'}`)}\n`;
      if (p.question) for (const l of collectFor(p.question, opts.data).split('\n')) text += `      $ ${l}\n`;
    }
  } else {
    text += `  still unknown  nothing that could change the verdict\n`;
  }
  text += `  saved in ${opts.file}\n`;
  return text;
}

/** Run one triage session over a case file (created when missing). */
export async function runTriage(o: TriageOptions): Promise<TriageResult> {
  // The case report inside (formatCaseText) colours through report/colour.ts.
  if (o.color) await loadColour();
  const k = new Chalk({ level: o.color ? 1 : 0 });
  const { loaded: first, created } = await openCase(o.file);
  let loaded = first;
  let verdict = await evaluateCase(loaded, o.rules);
  let saved = 0;
  const changes: Change[][] = [];
  o.out(`${created ? 'created' : 'resuming'} ${o.file} (case ${loaded.data.id}): verdict so far ${k.bold(verdict.verdict)}\n`);

  const save = async (q: Question, value: AnswerValue) => {
    loaded = await updateCaseFile(o.file, { [q.fact]: value }, { backup: !created });
    saved++;
    const after = await evaluateCase(loaded, o.rules);
    const diff = diffVerdicts(verdict, after);
    changes.push(diff);
    verdict = after;
    o.out(`  saved ${q.fact} = ${formatValue(value)}\n${formatChanges(diff, { color: o.color, all: o.all })}`);
  };

  for (const given of o.answers ?? []) await save(given.question, given.value);

  let plan = await planQuestions(loaded.data, verdict, o.rules, o.questions, { all: o.all });
  let stopped = false;
  if (o.interactive) {
    while (plan.next) {
      const q = plan.next;
      const left = plan.facts.filter((p) => !p.held && p.question).length - 1;
      o.out(questionHeader(q, loaded.data, left, k));
      let value: AnswerValue;
      try {
        value = await askQuestion(q, loaded.data, o.prompt);
      } catch (err) {
        if (!(err instanceof PromptClosed)) throw err;
        stopped = true;
        break;
      }
      await save(q, value);
      plan = await planQuestions(loaded.data, verdict, o.rules, o.questions, { all: o.all });
    }
  }
  if (stopped) {
    o.out(`\nstopped: ${saved} answer(s) saved in ${o.file}; run \`kretprobe-triage triage ${o.file}\` again to resume.\n`);
  } else {
    o.out(formatTriageEnd(verdict, plan, { color: o.color, file: o.file, data: loaded.data }));
  }
  return { verdict, stopped, saved, changes };
}
