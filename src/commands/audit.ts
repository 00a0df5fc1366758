import path from 'node:path';
import { Command, Option } from 'commander';
import type { CommandContext } from './context.js';
import { VERDICTS, type VerdictId } from '../case/ids.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import { InputError } from '../errors.js';

// Only commander and the verdict ids load with this module; everything an audit needs is
// imported when it runs (see src/commands/index.ts).

type Format = 'text' | 'json' | 'markdown' | 'sarif' | 'junit';

interface AuditOptions {
  format: Format;
  failOn?: VerdictId;
  rules?: string;
  expect?: boolean;
  warnings: boolean;
  exclude: string[];
  softFail?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  helpUriBase?: string;
  sarifPasses?: boolean;
  /** A config file, or false for --no-config. */
  config?: string | false;
  /** Threads judging the batch (undefined: chosen at run time). */
  jobs?: number;
}

/** 0 nothing flagged, 1 a claim flagged or a verdict at/above --fail-on, 3 inconclusive only. */
export async function auditExitCode(verdicts: CaseVerdict[], failOn?: VerdictId): Promise<number> {
  const { AuditSummary } = await import('../audit/summary.js');
  const s = new AuditSummary();
  for (const v of verdicts) s.add(v);
  return s.exitCode({ failOn });
}

export function auditCommand(ctx: CommandContext): Command {
  return new Command('audit')
    .description('Evaluate case files (or directories of them) and print each verdict with its reasons, as soon as it is ready.')
    .argument('<paths...>', "case files, write-ups, directories holding them, or globs ('cases/**/*.yaml', quoted); - reads one case from stdin")
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'markdown', 'sarif', 'junit']).default('text'))
    .addOption(new Option('--fail-on <verdict>', 'exit 1 for a verdict at or above this one, in the order verdicts are chosen (README: Exit codes)').choices([...VERDICTS]))
    .option('--rules <dir>', 'rules directory (default: the rules shipped with the tool)')
    .option('--expect', 'reference mode: exit 0 only if every case with an expected: block gets exactly what it expects (and, with --fail-on, nothing at or above it)')
    .option('--exclude <glob>', 'leave out paths matching this glob (repeatable; braces, classes and ** as picomatch reads them; a glob without / matches any part of a path)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--soft-fail', 'exit 0 whatever is found (bad input still exits 2)')
    .option('--no-warnings', 'text output: leave out warning findings')
    .option('--verbose', 'text output: every case of a batch with its full reasons (default: only the cases that need attention, then the summary), and every missing fact (default: the three that decide most)')
    .option('-q, --quiet', 'text output: the summary alone')
    .option('--help-uri-base <url>', 'sarif: the absolute URL the docs/ links are resolved against (default: package.json homepage or repository, else the package on unpkg)', (v: string) => {
      if (!/^https?:\/\/\S+$/.test(v)) throw new InputError({}, '--help-uri-base: an absolute http(s) URL', JSON.stringify(v));
      return v;
    })
    .option('--sarif-passes', 'sarif: also write passing results (supported claims, fully observed verdicts)')
    .option('-j, --jobs <n>', 'threads that judge a batch, the main one included (default: 1, or for a batch of 200 files or more one per idle core when at least two are idle); the output is the same whatever the number', parseJobs)
    .option('--config <file>', 'read settings from this file (default: the nearest .kretprobe-triage.yaml at or above the working directory)')
    .option('--no-config', 'read no configuration file')
    .addHelpText('after', `
Exit codes: 0 nothing flagged; 1 a claim is unsupported or overreaches, or a verdict at/above
--fail-on (with --expect: an expectation not met); 2 usage or input error, or a file that could
not be audited (each named on stderr; the others are still audited); 3 inconclusive
(insufficient-evidence somewhere and nothing worse). Accepted findings (a case's accepted:
list, a write-up's <!-- kretprobe-triage accept RULE: reason --> comment) are shown but not
counted. JSON output is one verdict object per line. A directory walk skips node_modules,
dot-directories and files that are neither cases (*.yaml) nor write-ups.`)
    .action(async (paths: string[], opts: AuditOptions, command: Command) => {
      if (opts.verbose && opts.quiet) throw new (await import('../errors.js')).InputError({}, 'at most one of --verbose and --quiet', 'both');
      const config = await readConfig(opts, ctx.io.cwd);
      return runAudit(ctx, paths, withConfig(opts, config, (key) => command.getOptionValueSource(key) === 'cli'), config?.waivers ?? []);
    });
}

function parseJobs(v: string): number {
  if (!/^[1-9][0-9]{0,2}$/.test(v) || Number(v) > 256) throw new InputError({}, '--jobs: a whole number of threads from 1 to 256', JSON.stringify(v));
  return Number(v);
}

async function readConfig(opts: AuditOptions, cwd: string): Promise<import('../audit/config.js').AuditConfig | undefined> {
  if (opts.config === false) return undefined;
  const file = opts.config !== undefined ? path.resolve(cwd, opts.config) : await (await import('../audit/config-find.js')).findConfig(cwd);
  return file === undefined ? undefined : (await import('../audit/config.js')).loadConfig(file);
}

/** The options the run uses: each one the command line gave, else the config file's, else the default. */
function withConfig(opts: AuditOptions, config: import('../audit/config.js').AuditConfig | undefined, fromCli: (key: string) => boolean): AuditOptions {
  if (!config) return opts;
  const out = { ...opts };
  if (!fromCli('rules') && config.rules !== undefined) out.rules = config.rules;
  if (!fromCli('exclude') && config.exclude !== undefined) out.exclude = config.exclude;
  if (!fromCli('failOn') && config.failOn !== undefined) out.failOn = config.failOn;
  if (!fromCli('format') && config.format !== undefined) out.format = config.format;
  return out;
}

async function runAudit(ctx: CommandContext, paths: string[], opts: AuditOptions, configWaivers: import('../case/waivers.js').Waiver[] = []): Promise<void> {
  const { io } = ctx;
  // Idle CPU is measured from here to the first files found: whether a worker thread would pay.
  const { IdleCores, judgeAll } = await import('../audit/pool.js');
  const idle = new IdleCores();
  const [{ loadAuditRules }, { expandInputs }, { checkWaivers }, { AuditSummary }, { InputError }] = await Promise.all([
    import('../audit/judge.js'),
    import('../audit/inputs.js'),
    import('../case/waivers.js'),
    import('../audit/summary.js'),
    import('../errors.js'),
  ]);
  // Hashed before it is loaded: a --rules that is not a directory is one error line here.
  if (opts.rules !== undefined) await (await import('../fsutil.js')).requireDirectory(opts.rules, 'a rules directory');
  const rules = await loadAuditRules(opts.rules);
  const { set, versions, rulesDir } = rules;
  const sink = await makeSink(opts, ctx, set, versions, rulesDir, await isBatch(paths, io.cwd));
  const summary = new AuditSummary();
  const skipped: string[] = [];
  // A config file's waiver naming no known rule is bad input at its line, before any case.
  const badConfigWaiver = checkWaivers(configWaivers, rules.known, '', () => undefined);
  if (badConfigWaiver) throw badConfigWaiver;

  const readStdin = async () => {
    const chunks: Buffer[] = [];
    for await (const c of io.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
    return Buffer.concat(chunks).toString('utf8');
  };
  // One line per bad file, as it is met; the batch goes on and exits 2 at the end.
  const skip = (err: InstanceType<typeof InputError>, file: string) => {
    io.stderr(`kretprobe-triage: ${err.message}\n`);
    summary.skip();
    skipped.push(err.message);
    sink.skipped(file, err.message);
  };
  sink.begin();
  const refs = expandInputs(paths, { exclude: opts.exclude, cwd: io.cwd });
  for await (const j of judgeAll(refs, { rules, rulesOption: opts.rules, configWaivers, readStdin, jobs: opts.jobs, idle })) {
    if ('skipped' in j) {
      skip(j.skipped, j.file);
      continue;
    }
    summary.add(j.v);
    await sink.verdict(j.v, j.input, j.time);
    // Printed as each case is judged, and written as well before the next: a slow reader of a
    // pipe holds the batch back instead of the batch's output piling up in memory.
    await io.drained?.();
  }
  if (summary.cases === 0 && summary.skipped === 0) throw new InputError({ file: paths.join(' ') }, 'case files to audit', 'none (all excluded)');
  if (opts.expect && summary.withExpected === 0 && summary.skipped === 0) throw new InputError({ file: paths.join(' ') }, 'reference cases with an expected: block (for --expect)', 'none');
  const code = summary.exitCode({ failOn: opts.failOn, expect: opts.expect, softFail: opts.softFail });
  sink.end(summary, code, skipped);
  ctx.exit(code);
}

/** More than one input, a directory or a glob: a batch, printed like ESLint prints (problems, then the summary). */
async function isBatch(paths: string[], cwd: string): Promise<boolean> {
  if (paths.length !== 1) return true;
  const only = paths[0]!;
  if (only === '-') return false;
  // The glob library loads only when the path has a character a pattern needs (as in src/audit/inputs.ts).
  if (/[*?[\]{}()!]/.test(only) && (await import('../audit/glob.js')).isGlob(only)) return true;
  const { stat } = await import('node:fs/promises');
  return stat(path.resolve(cwd, only)).then((st) => st.isDirectory(), () => false);
}

interface Sink {
  begin(): void;
  /** `time`: seconds the case took to judge. */
  verdict(v: CaseVerdict, input: import('../audit/inputs.js').AuditInput, time: number): void | Promise<void>;
  skipped(file: string, message: string): void;
  end(summary: import('../audit/summary.js').AuditSummary, code: number, skipped: string[]): void;
}

/** How each format streams: what is printed per case, and what little is kept for the end. */
async function makeSink(opts: AuditOptions, ctx: CommandContext, rules: import('../audit/rules-snapshot.js').SnapshotRuleSet, versions: import('../version.js').Versions, rulesDir: string, batch: boolean): Promise<Sink> {
  const { io } = ctx;
  const out = (s: string) => io.stdout(s);
  const rel = (file: string) => (file === '<stdin>' ? undefined : path.relative(io.cwd, path.resolve(io.cwd, file)).split(path.sep).join('/'));
  // The questions lend their per-interface collect commands to every format (report/hints.ts);
  // they come with the rules (RuleSet.questions). A custom rules directory without questions
  // simply prints the missing facts' names.
  let questions: Promise<{ collectHints: typeof import('../report/hints.js').collectHints; set: import('../triage/questions.js').QuestionSet | undefined }> | undefined;
  const hintsFor = async (v: CaseVerdict, data: import('../case/schema.js').Case): Promise<import('../report/hints.js').Hint[]> => {
    if (!v.missing.length) return [];
    const list = rules.questions;
    questions ??= Promise.all([import('../triage/question-set.js'), import('../report/hints.js')]).then(([{ indexQuestions }, { collectHints }]) => ({
      collectHints,
      set: list ? indexQuestions(list) : undefined,
    }));
    const { collectHints, set } = await questions;
    return collectHints(set, data, v.missing);
  };
  switch (opts.format) {
    case 'json': {
      // The write-up formatter loads with the first write-up.
      const { formatCaseJson, toVerdictJson } = await import('../report/json.js');
      let writeupFormat: Promise<typeof import('../writeup/format.js')> | undefined;
      return {
        begin() {},
        async verdict(v, input) {
          const extra = { hints: await hintsFor(v, input.loaded.data), versions };
          out(input.writeup ? (await (writeupFormat ??= import('../writeup/format.js'))).formatWriteupJson(input.writeup.extraction, v, toVerdictJson(v, extra)) : formatCaseJson(v, extra));
        },
        skipped() {},
        end() {},
      };
    }
    case 'markdown': {
      // The summary table comes first, so the rendered rows and sections wait for the end.
      const { markdownDocument, markdownRow, markdownSection } = await import('../report/markdown.js');
      const rows: string[] = [];
      const sections: string[] = [];
      return {
        begin() {},
        async verdict(v, input) {
          rows.push(markdownRow(v));
          sections.push(markdownSection(v, await hintsFor(v, input.loaded.data)));
        },
        skipped() {},
        end(s) {
          const footer = `\n_kretprobe-triage ${versions.tool_version}, rules ${versions.rules_version}${s.skipped ? `; ${s.skipped} file(s) skipped (could not be audited)` : ''}_\n`;
          out(markdownDocument(rows, sections, footer));
        },
      };
    }
    case 'sarif': {
      const [{ sarifHead, sarifResults, sarifTail, defaultHelpBase }, { locator }, { readFile }, { packageRoot }] = await Promise.all([import('../report/sarif.js'), import('../audit/locate.js'), import('node:fs/promises'), import('../version.js')]);
      const pkg = JSON.parse(await readFile(path.join(packageRoot(), 'package.json'), 'utf8')) as Parameters<typeof defaultHelpBase>[0];
      const helpBase = opts.helpUriBase !== undefined ? (opts.helpUriBase.endsWith('/') ? opts.helpUriBase : `${opts.helpUriBase}/`) : defaultHelpBase(pkg);
      // The write-up lexicon declares one finding of its own (stated values that disagree).
      const lexicon = await import('../writeup/lexicon.js').then((m) => m.loadLexicon(rulesDir)).catch(() => undefined);
      const extraRules = lexicon ? [lexicon.disagreement] : [];
      let first = true;
      return {
        begin: () => out(sarifHead(rules, versions, VERDICTS, { helpBase, extraRules })),
        verdict(v, input) {
          for (const r of sarifResults(v, rules, locator(input, rel(input.file)), VERDICTS, { passes: opts.sarifPasses, extraRules })) {
            out(`${first ? '' : ',\n'}${JSON.stringify(r)}`);
            first = false;
          }
        },
        skipped() {},
        end: (_s, code, skipped) => out(sarifTail(code, skipped)),
      };
    }
    case 'junit': {
      // The root carries the totals, so the suites wait for the end (like the Markdown summary).
      const { junitHead, junitSuite, junitTail, junitErrorSuite, emptyTotals } = await import('../report/junit.js');
      const totals = emptyTotals();
      const suites: string[] = [];
      return {
        begin() {},
        verdict: (v, input, time) => { suites.push(junitSuite(v, versions, { failOn: opts.failOn, file: rel(input.file) ?? '<stdin>', time }, totals)); },
        skipped: (file, message) => { suites.push(junitErrorSuite(file, message, totals)); },
        end: () => out(`${junitHead(totals)}${suites.join('')}${junitTail()}`),
      };
    }
    default: {
      const [{ formatCaseText, formatSummaryText }, { needsAttention }, { loadColour }] = await Promise.all([import('../report/text.js'), import('../audit/summary.js'), import('../report/colour.js')]);
      if (io.color) await loadColour();
      let writeupFormat: Promise<typeof import('../writeup/format.js')> | undefined;
      const collect = async (v: CaseVerdict, data: import('../case/schema.js').Case) => {
        const hints = await hintsFor(v, data);
        return hints.length ? Object.fromEntries(hints.map((h) => [h.fact, h.lines.join('\n')])) : undefined;
      };
      // What a case prints: everything (one case, or --verbose), only when it needs attention (a
      // batch), or nothing (--quiet).
      const shown = opts.quiet ? 'none' : opts.verbose || !batch ? 'all' : 'attention';
      let attention = 0;
      return {
        begin() {},
        async verdict(v, input) {
          const flagged = needsAttention(v, { failOn: opts.failOn, expect: opts.expect });
          if (flagged) attention++;
          if (shown === 'none' || (shown === 'attention' && !flagged)) return;
          if (!input.writeup) {
            out(`${formatCaseText(v, { color: io.color, warnings: opts.warnings, collect: await collect(v, input.loaded.data), full: opts.verbose === true })}\n`);
            return;
          }
          // A write-up: the case report, then what was found in it and what it never establishes (with the commands).
          const base = formatCaseText(v, { color: io.color, warnings: opts.warnings, missing: false });
          const { formatWriteupText } = await (writeupFormat ??= import('../writeup/format.js'));
          out(`${base}${formatWriteupText(input.writeup.extraction, v, await hintsFor(v, input.loaded.data), { color: io.color, full: opts.verbose === true })}\n`);
        },
        skipped() {},
        end(s) {
          if (s.cases + s.skipped > 1 || shown !== 'all') out(formatSummaryText(s, { color: io.color }, { attention, shown: shown === 'all' ? 'all' : shown === 'attention' ? 'attention' : 'none' }));
        },
      };
    }
  }
}
