import { Command, Option } from 'commander';
import type { CommandContext } from '../cli.js';
import { VERDICTS, type VerdictId } from '../case/schema.js';
import { InputError } from '../errors.js';
import { evaluateCase, loadRules } from '../index.js';
import { formatCaseJson } from '../report/json.js';
import { formatMarkdown } from '../report/markdown.js';
import { formatCaseText, formatSummaryText } from '../report/text.js';
import { VERDICT_RANK, type CaseVerdict } from '../verdict/verdict.js';
import { defaultQuestionsDir, loadQuestions, renderQuestionText, type QuestionSet } from '../triage/questions.js';
import type { LoadedCase } from '../case/parse.js';
import path from 'node:path';
import { auditWriteup, expandAuditPaths, loadAuditInputs, loadLexicon } from '../writeup/audit.js';

/** Where each missing fact of this case can be collected (the triage questions' commands). */
function collectCommands(questions: QuestionSet | undefined, loaded: LoadedCase, missing: string[]): Record<string, string> | undefined {
  if (!questions) return undefined;
  const out: Record<string, string> = {};
  for (const fact of missing) {
    const q = questions.byFact.get(fact);
    if (q) out[fact] = renderQuestionText(q.collect, loaded.data);
  }
  return out;
}

interface AuditOptions {
  format: 'text' | 'json' | 'markdown';
  failOn?: VerdictId;
  rules?: string;
  expect?: boolean;
  warnings: boolean;
}

/** 0 nothing flagged, 1 a claim flagged or a verdict at/above --fail-on, 3 inconclusive only. */
export function auditExitCode(verdicts: CaseVerdict[], failOn?: VerdictId): number {
  const flagged = verdicts.some(
    (v) =>
      v.claims.some((c) => c.judgement !== 'supported') ||
      (failOn !== undefined && VERDICT_RANK.indexOf(v.verdict) <= VERDICT_RANK.indexOf(failOn)),
  );
  if (flagged) return 1;
  return verdicts.some((v) => v.verdict === 'insufficient-evidence') ? 3 : 0;
}

export function auditCommand(ctx: CommandContext): Command {
  return new Command('audit')
    .description('Evaluate case files (or directories of them) and print each verdict with its reasons.')
    .argument('<paths...>', 'case files, write-ups (.md, .txt, .eml) or directories holding them')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .addOption(new Option('--fail-on <verdict>', `exit 1 for a verdict at or above this one in the order: ${VERDICT_RANK.join(' > ')}`).choices([...VERDICTS]))
    .option('--rules <dir>', 'rules directory (default: the rules shipped with the tool)')
    .option('--expect', 'reference mode: exit 0 only if every case with an expected: block gets exactly what it expects')
    .option('--no-warnings', 'text output: leave out warning findings')
    .addHelpText('after', `
Exit codes: 0 nothing flagged; 1 a claim is unsupported or overreaches, or a verdict at/above
--fail-on (with --expect: an expectation not met); 2 usage or input error; 3 inconclusive
(insufficient-evidence somewhere and nothing worse). JSON output is one verdict object per line.`)
    .action(async (paths: string[], opts: AuditOptions) => {
      const { io } = ctx;
      const rules = await loadRules(opts.rules);
      // The questions only lend their collect commands to the text report; a custom rules
      // directory without questions simply prints the missing facts' names.
      const questions = opts.format === 'text'
        ? await loadQuestions(opts.rules ? path.join(opts.rules, 'questions') : defaultQuestionsDir()).catch(() => undefined)
        : undefined;
      const files = await expandAuditPaths(paths);
      const verdicts: CaseVerdict[] = [];
      for await (const input of loadAuditInputs(files, () => loadLexicon(rules.set.dir))) {
        // A write-up is extracted to a case and judged by src/writeup, which renders its extra sections.
        if (input.kind === 'writeup') {
          const w = await auditWriteup(input, rules, opts.format, { color: io.color, warnings: opts.warnings, questions });
          verdicts.push(w.verdict);
          if (w.output) io.stdout(w.output);
          continue;
        }
        const loaded = input.loaded;
        const v = await evaluateCase(loaded, rules);
        verdicts.push(v);
        if (opts.format === 'json') io.stdout(formatCaseJson(v));
        else if (opts.format === 'text') io.stdout(`${formatCaseText(v, { color: io.color, warnings: opts.warnings, collect: collectCommands(questions, loaded, v.missing) })}\n`);
      }
      if (opts.format === 'markdown') io.stdout(formatMarkdown(verdicts));
      if (opts.format === 'text' && verdicts.length > 1) io.stdout(formatSummaryText(verdicts, { color: io.color }));
      if (opts.expect) {
        const without = verdicts.filter((v) => !v.expected);
        if (without.length === verdicts.length) throw new InputError({ file: paths.join(' ') }, 'reference cases with an expected: block (for --expect)', 'none');
        ctx.exit(verdicts.every((v) => !v.expected || v.expected.ok) ? 0 : 1);
        return;
      }
      ctx.exit(auditExitCode(verdicts, opts.failOn));
    });
}
