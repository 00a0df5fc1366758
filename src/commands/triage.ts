import path from 'node:path';
import { Command } from 'commander';
import type { CommandContext } from './context.js';
import { readSmallFile } from '../case/load.js';
import { InputError } from '../errors.js';
import { withFileLock } from '../fsutil.js';
import { loadRules } from '../index.js';
import { parseAnswersFile } from '../triage/answers-file.js';
import { loadQuestions } from '../triage/questions.js';
import { runTriage } from '../triage/session.js';
import { auditExitCode } from './audit.js';

interface TriageOptions {
  answers?: string;
  all?: boolean;
  rules?: string;
  questions?: string;
}

export function triageCommand(ctx: CommandContext): Command {
  return new Command('triage')
    .description('Walk a case to a justified verdict: ask only what can still change it, save each answer at once.')
    .argument('[case]', 'case file to fill in; created (with an id from its name) when missing', 'case.yaml')
    .option('--answers <file>', 'apply answers from a YAML map (fact path: value) as if typed; no terminal needed')
    .option('--all', 'also ask what can only change warnings, not the verdict or a claim')
    .option('--rules <dir>', 'rules directory (default: the rules shipped with the tool)')
    .option('--questions <dir>', 'questions directory (default: rules/questions shipped with the tool)')
    .addHelpText('after', `
Every answer is written to the case file before the next question (atomically; the previous
file is kept once as <case>.bak). Ctrl-C stops; running triage again on the file resumes.
Without a terminal, pass --answers (or use audit). Exit codes as audit: 0, 1, 3 at the end;
2 usage or input error; 130 stopped before the end.`)
    .action(async (file: string, opts: TriageOptions) => {
      const { io } = ctx;
      if (!io.interactive && !opts.answers) {
        throw new InputError({}, 'a terminal to ask questions in (non-interactive: triage CASE --answers answers.yaml, or audit CASE)', 'no terminal on stdin/stdout');
      }
      const rules = await loadRules(opts.rules);
      const questions = await loadQuestions(opts.questions);
      const answersFile = opts.answers ? path.resolve(io.cwd, opts.answers) : undefined;
      const answers = answersFile ? parseAnswersFile(await readSmallFile(answersFile, 'answers file'), opts.answers!, questions) : undefined;
      const shownFile = path.isAbsolute(file) ? file : path.relative(io.cwd, path.resolve(io.cwd, file)) || file;
      // One session per case: a second run would write back answers over the first one's.
      const result = await withFileLock(path.resolve(io.cwd, file), 'case file', () => runTriage({
        file: shownFile,
        rules,
        questions,
        all: opts.all ?? false,
        ...(answers ? { answers } : {}),
        interactive: io.interactive,
        // The prompt draws on the terminal itself, so it knows the terminal's width.
        prompt: { input: io.stdin },
        out: io.stdout,
        color: io.color,
      }), shownFile);
      ctx.exit(result.stopped ? 130 : await auditExitCode([result.verdict]));
    });
}
