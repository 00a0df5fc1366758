import path from 'node:path';
import { Command, Option } from 'commander';
import type { CommandContext } from './context.js';
import { InputError } from '../errors.js';
import { closeSync, fstatSync } from 'node:fs';
import { openInputSync } from '../fsutil.js';
import { caseInputs } from '../ledger/caseInputs.js';
import { caseUpdates, contradictionLine, formatLedgerText, ledgerJson, type LedgerView } from '../ledger/format.js';
import { DEFAULT_OPS_REORDER, DEFAULT_OPS_THREAD_MIN_BYTES, OPS_THREAD_BUSY_MIN_BYTES, OPS_THREAD_SPARE_CORES, readLedger, type LedgerReport, type TraceFormat } from '../ledger/read.js';
import { progressBar } from '../ledger/progress.js';
import { fileChunksSync } from '../ledger/lines.js';
import type { LedgerObserver } from '../ledger/ledger.js';
import { intArg } from './args.js';
import { nsLiteral } from '../ledger/clock.js';

/** ns since boot, exact over the u64 range a kernel stamp has (a bigint past 2^53). */
function nsArg(name: string) {
  return (v: string): number | bigint => {
    const n = nsLiteral(v);
    if (n === undefined) throw new InputError({}, `${name}: an integer of nanoseconds ≥ 0 (at most 2^64 - 1)`, JSON.stringify(v));
    return n;
  };
}
import { snakeKeys } from '../report/json.js';
import { shippedVersions } from '../version.js';

export interface LedgerCommandOptions {
  ops?: string;
  trace: string;
  case?: string;
  entryEvent?: string;
  returnEvent?: string;
  input?: TraceFormat | 'auto';
  entrySemantics?: 'instance' | 'event';
  nmissedDelta?: number;
  maxactive?: number;
  opsReorder?: number;
  opsThread?: boolean;
  opsThreadMinMb?: number;
  captureStartNs?: number | bigint;
  captureStopNs?: number | bigint;
  format: 'text' | 'json' | 'markdown';
  /** Taps for the investigation report's pictures (not a command-line option). */
  observe?: LedgerObserver;
}

/** Open the trace: a regular file (src/fsutil.ts openInputSync, read with readSync), or stdin for `-`. */
function openTrace(ctx: CommandContext, trace: string): { name: string; stream: NodeJS.ReadableStream | Iterable<Buffer>; size: number | undefined; close: () => void } {
  if (trace === '-') return { name: '<stdin>', stream: ctx.io.stdin, size: undefined, close: () => undefined };
  let fd: number;
  try {
    fd = openInputSync(path.resolve(ctx.io.cwd, trace), 'trace file (or - for stdin)');
  } catch (err) {
    // Name the file as the user typed it.
    if (err instanceof InputError) throw new InputError({ file: trace }, err.expected, err.got);
    throw err;
  }
  return { name: trace, stream: fileChunksSync(fd), size: fstatSync(fd).size, close: () => closeSync(fd) };
}

/** Run the ledger for the command and the benchmark alike. */
export async function runLedger(ctx: CommandContext, o: LedgerCommandOptions): Promise<{ view: LedgerView; report: LedgerReport }> {
  // The case loader (zod and the YAML parser: a third of a 1 M-record run's fixed cost) only when a case is given.
  const loaded = o.case === undefined ? undefined : await (await import('../case/load.js')).loadCase(path.resolve(ctx.io.cwd, o.case));
  const fromCase = loaded === undefined ? undefined : caseInputs(loaded.data);
  if (o.ops === '-') throw new InputError({}, '--ops: a file (only --trace may read stdin)', '-');
  if (o.captureStartNs !== undefined && o.captureStopNs !== undefined && o.captureStartNs > o.captureStopNs) {
    throw new InputError({}, `--capture-start-ns at or before --capture-stop-ns (${o.captureStopNs})`, String(o.captureStartNs));
  }
  const t = openTrace(ctx, o.trace);
  const bar = ctx.io.stderrIsTTY ? progressBar(ctx.io.stderr, t.size) : undefined;
  const eff = o.maxactive !== undefined ? { value: o.maxactive, from: '--maxactive' } : fromCase?.effectiveMaxactive;
  let report: LedgerReport;
  try {
    report = await readLedger({
      opsFile: o.ops === undefined ? undefined : path.resolve(ctx.io.cwd, o.ops),
      trace: { name: t.name, stream: t.stream },
      format: o.input ?? 'auto',
      events: { entryEvent: o.entryEvent, returnEvent: o.returnEvent },
      semantics: o.entrySemantics,
      captureStartNs: o.captureStartNs,
      captureStopNs: o.captureStopNs,
      nmissedDelta: o.nmissedDelta ?? fromCase?.nmissedDelta,
      noFiltering: fromCase?.noFiltering,
      observe: o.observe,
      maxactive: eff?.value,
      opsReorder: o.opsReorder,
      opsThread: o.opsThread,
      opsThreadMinBytes: o.opsThreadMinMb === undefined ? undefined : o.opsThreadMinMb * 1048576,
      onProgress: bar?.update,
    });
  } finally {
    bar?.done();
    // A failure before the trace was read (a bad --ops) must still close the trace file.
    t.close();
  }
  // Problems name files as the user typed them, not as resolved.
  if (o.ops !== undefined) {
    const abs = path.resolve(ctx.io.cwd, o.ops);
    for (const p of report.problems.first) if (p.file === abs) p.file = o.ops;
  }
  const view: LedgerView = { report, opsName: o.ops, traceName: t.name, effectiveMaxactive: eff };
  if (fromCase !== undefined && report.result.counters.source === 'none' && o.nmissedDelta === undefined) {
    report.notes.push(`miss counter: ${fromCase.nmissedWhy}`);
  }
  return { view, report };
}

/** How to read the probe records: the options `ledger` and `report` share (everything but --ops, --trace and --case). */
export function withTraceReadingOptions(cmd: Command): Command {
  return cmd
    .option('--entry-event <name>', 'name of the entry event in trace text (e.g. gate_entry)')
    .option('--return-event <name>', 'name of the return event in trace text (e.g. gate)')
    .addOption(new Option('--input <format>', 'probe record format').choices(['auto', 'jsonl', 'trace-text', 'perf-script']).default('auto'))
    .addOption(new Option('--entry-semantics <kind>', 'what an entry record means: instance (an entry handler ran) or event (a separate entry kprobe); default from the format').choices(['instance', 'event']))
    .option('--nmissed-delta <n>', 'the return probe miss-counter delta within one epoch (overrides the case)', intArg('--nmissed-delta', 0))
    .option('--maxactive <n>', 'the effective maxactive to compare the high-water mark with (overrides the case)', intArg('--maxactive', 1))
    .option('--ops-reorder <lines>', `how many lines ops.jsonl may be out of submit_ns order (held in memory, about 140 bytes each with probe.jsonl; default ${DEFAULT_OPS_REORDER})`, intArg('--ops-reorder', 1))
    .option('--ops-thread', `parse ops.jsonl on a second thread, which puts it into submit order while the trace is scanned, whenever ops.jsonl has at least --ops-thread-min-mb and a second CPU exists (by default only when a core is also free, the load average leaving ${OPS_THREAD_SPARE_CORES} cores, or ops.jsonl has ${OPS_THREAD_BUSY_MIN_BYTES / 1048576} MiB or more)`)
    .option('--no-ops-thread', 'parse ops.jsonl on the main thread')
    .option('--ops-thread-min-mb <n>', `smallest ops.jsonl, in MiB, worth a second thread (its start-up costs more than the parse below it; default ${DEFAULT_OPS_THREAD_MIN_BYTES / 1048576})`, intArg('--ops-thread-min-mb', 0))
    .option('--capture-start-ns <ns>', 'when capture started (operations done before it are outside the window)', nsArg('--capture-start-ns'))
    .option('--capture-stop-ns <ns>', 'when capture stopped (default: the last record)', nsArg('--capture-stop-ns'));
}

/** `kretprobe-triage ledger`: the independent operation ledger against the probe's records. */
export function ledgerCommand(ctx: CommandContext): Command {
  return withTraceReadingOptions(new Command('ledger')
    .description('Pair probe records into calls, bind them to the independent operation ledger, classify every operation and report coverage with latency')
    .option('--ops <file>', 'ops.jsonl: the external record of test operations (ledger-format.md)')
    .requiredOption('--trace <file>', 'probe records: trace/trace_pipe text, perf script output, or probe.jsonl; - reads stdin')
    .option('--case <file>', 'read counters and maxactive from this case, and write the ledger, concurrency and latency results into it'))
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .action(async (opts: LedgerCommandOptions) => {
      const { view, report } = await runLedger(ctx, opts);
      if (opts.case !== undefined) await (await import('../case/load.js')).updateCaseFile(path.resolve(ctx.io.cwd, opts.case), caseUpdates(report));
      const data = opts.format === 'text' ? {} : { ...(snakeKeys(ledgerJson(view)) as Record<string, unknown>), ...(await shippedVersions()) };
      if (opts.format === 'json') ctx.io.stdout(`${JSON.stringify(data, null, 2)}\n`);
      else if (opts.format === 'markdown') ctx.io.stdout((await import('../report/markdown.js')).formatJsonMarkdown('kretprobe-triage ledger', data));
      else ctx.io.stdout(formatLedgerText(view));
      if (opts.case !== undefined) ctx.io.stderr(`wrote ledger, concurrency and latency results into ${opts.case}\n`);
      // Impossible figures are flagged, never smoothed: one line, exit 1 (the report and the case say which).
      const contradiction = contradictionLine(report);
      if (contradiction !== undefined) ctx.io.stderr(`${contradiction}\n`);
      ctx.exit(contradiction === undefined ? 0 : 1);
    });
}
