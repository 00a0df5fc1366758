import path from 'node:path';
import { Command, Option } from 'commander';
import type { CommandContext } from './context.js';
import { applyCaseUpdates, loadCase } from '../case/load.js';
import { parseCase, type LoadedCase } from '../case/parse.js';
import { kindOf, type AuditInput } from '../audit/inputs.js';
import { judgeInput } from '../writeup/audit.js';
import { InputError } from '../errors.js';
import { caseFacts } from '../facts/facts.js';
import { requireDirectory, writeFilesAtomic } from '../fsutil.js';
import { escapeControls } from '../safetext.js';
import { evaluateCase, loadRules } from '../index.js';
import { caseUpdates, ledgerJson } from '../ledger/format.js';
import { snakeKeys, toVerdictJson } from '../report/json.js';
import { investigationDocument, type InvestigationInput, type LedgerPart } from '../report/investigation/document.js';
import { formatInvestigationHtml } from '../report/investigation/html.js';
import { formatInvestigationMarkdown } from '../report/investigation/markdown.js';
import { ReportObserver } from '../report/investigation/observe.js';
import { runLedger, withTraceReadingOptions, type LedgerCommandOptions } from './ledger.js';

/** The ledger's trace-reading options, with the trace optional and the output of a report. */
export interface ReportOptions extends Omit<LedgerCommandOptions, 'trace' | 'case' | 'format' | 'observe'> {
  trace?: string;
  output?: string;
  format?: 'html' | 'markdown';
  rules?: string;
}

/** Histogram bins per power of two in the picture (a divisor of the ledger histogram's 64). */
const BINS_PER_OCTAVE = 4;

/**
 * The one place an investigation is loaded from a path: a case file, or a write-up (audit's
 * loader table decides the kind, src/audit/inputs.ts). A write-up's extracted case is carried as
 * YAML text so the ledger's results can be applied to it like to a case file.
 */
export async function loadReportSubject(file: string, shownAs: string, rulesDir?: string): Promise<{ loaded: LoadedCase; writeup?: AuditInput['writeup'] }> {
  if (kindOf(file) !== 'writeup') return { loaded: await loadCase(file) };
  const [{ readWriteup }, { writeupInput }, { stringify }] = await Promise.all([import('../writeup/load.js'), import('../writeup/audit.js'), import('yaml')]);
  const input = await writeupInput(await readWriteup(file), shownAs, rulesDir);
  return { loaded: parseCase(stringify(input.loaded.data, { lineWidth: 0 }), shownAs), writeup: input.writeup };
}

/** Build the report's input: the case (with the ledger's results applied), its verdict and the ledger pass. */
export async function investigationInput(ctx: CommandContext, caseArg: string, o: ReportOptions): Promise<InvestigationInput> {
  const file = path.resolve(ctx.io.cwd, caseArg);
  const subject = await loadReportSubject(file, caseArg, o.rules);
  let loaded = subject.loaded;
  let ledger: LedgerPart | undefined;
  let ledgerFields: string[] | undefined;
  if (o.trace !== undefined) {
    const observe = new ReportObserver();
    const { view, report } = await runLedger(ctx, { ...o, trace: o.trace, case: caseArg, format: 'json', observe });
    // As `ledger --case` would write them, but in memory: the user's case file is not touched.
    const updates = caseUpdates(report);
    ledgerFields = Object.keys(updates);
    loaded = applyCaseUpdates(loaded.text, loaded.file, updates);
    ledger = { view, json: snakeKeys(ledgerJson(view)) as Record<string, unknown>, series: observe.series.data(), bins: observe.histogram.bins(BINS_PER_OCTAVE), epochCounters: observe.epochCounters() };
  } else if (o.ops !== undefined) {
    throw new InputError({}, '--trace with --ops (the probe records to hold the operations against)', 'only --ops');
  }
  const rules = await loadRules(o.rules);
  const verdict = subject.writeup
    ? await judgeInput({ file: caseArg, kind: 'writeup', loaded, waivers: [], writeup: { ...subject.writeup, extraction: { ...subject.writeup.extraction, case: loaded.data } } }, rules, evaluateCase)
    : await evaluateCase(loaded, rules);
  verdict.file = caseArg;
  return { file: caseArg, case: loaded.data, facts: caseFacts(loaded.data), verdict, verdictJson: toVerdictJson(verdict), ledger, ledgerFields };
}

function formatOf(o: ReportOptions): 'html' | 'markdown' {
  if (o.format !== undefined) return o.format;
  return o.output !== undefined && /\.(md|markdown)$/i.test(o.output) ? 'markdown' : 'html';
}

/** `kretprobe-triage report`: one investigation as a self-contained HTML page or Markdown with SVG files. */
export function reportCommand(ctx: CommandContext): Command {
  return withTraceReadingOptions(new Command('report')
    .description('Write the report of one investigation: verdict and reasoning, configuration, concurrency model, counter deltas, handler constraints, correlation method, the accounting identity and latency with its coverage, with pictures')
    .argument('<case>', 'the case file or write-up (.md, .txt, .eml) of the investigation')
    .option('--ops <file>', 'ops.jsonl: the independent record of test operations (with --trace)')
    .option('--trace <file>', 'probe records (trace text, perf script or probe.jsonl) for the in-flight and duration pictures'))
    .option('-o, --output <file>', 'write here, atomically: .html (default) or .md (the pictures are written beside it as .svg files); existing files are refused without --force')
    .option('--force', 'with -o: replace existing files')
    .addOption(new Option('-f, --format <format>', 'html or markdown (default: from the -o extension)').choices(['html', 'markdown']))
    .option('--rules <dir>', 'rules directory (default: the rules shipped with the tool)')
    .action(async (caseArg: string, o: ReportOptions & { force?: boolean }) => {
      const format = formatOf(o);
      const inputs = [caseArg, o.trace, o.ops].filter((f): f is string => f !== undefined && f !== '-').map((f) => path.resolve(ctx.io.cwd, f));
      // Every target is checked before any is written: the report and its pictures are one unit.
      const write = (files: Array<{ file: string; text: string }>) => writeFilesAtomic(files.map((f) => ({ file: f.file, text: escapeControls(f.text, { newlines: true }) })), { force: o.force ?? false, inputs, what: 'report' });
      if (format === 'markdown' && o.output === undefined) throw new InputError({}, '-o report.md for Markdown (its pictures are written beside it)', 'no -o');
      // Before the (possibly long) ledger pass: a bad output path fails at once.
      if (o.output !== undefined) await requireDirectory(path.dirname(path.resolve(ctx.io.cwd, o.output)), 'an existing directory for -o');
      const doc = investigationDocument(await investigationInput(ctx, caseArg, o));
      if (format === 'html') {
        const html = formatInvestigationHtml(doc);
        if (o.output === undefined) ctx.io.stdout(html);
        else await write([{ file: path.resolve(ctx.io.cwd, o.output), text: html }]);
      } else {
        const out = path.resolve(ctx.io.cwd, o.output!);
        const stem = path.basename(out).replace(/\.(md|markdown)$/i, '');
        const md = formatInvestigationMarkdown(doc, stem);
        // Pictures first: the Markdown never points at a file that is not there yet.
        await write([...md.files.map((f) => ({ file: path.join(path.dirname(out), f.name), text: f.svg })), { file: out, text: md.markdown }]);
      }
      if (o.output !== undefined) ctx.io.stderr(`wrote ${o.output}\n`);
      ctx.exit(0);
    });
}
