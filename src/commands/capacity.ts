import path from 'node:path';
import { Command, Option } from 'commander';
import type { CommandContext } from './context.js';
import { InputError } from '../errors.js';
import { loadCase } from '../case/load.js';
import { parseCpuCount } from '../kernel/cpus.js';
import type { ProbeInterface } from '../kernel/maxactive.js';
import { possibleCpusOf } from '../ledger/caseInputs.js';
import { capacityModel, formatCapacityText, type CallerModel, type CapacityInput } from '../ledger/capacity.js';
import { runLedger } from './ledger.js';
import { intArg } from './args.js';
import { snakeKeys } from '../report/json.js';
import { formatJsonMarkdown } from '../report/markdown.js';
import { shippedVersions } from '../version.js';

interface CapacityOptions {
  workers?: number;
  concurrentFds?: number;
  blockingPoints?: number;
  recursionDepth?: number;
  targetSleeps?: 'yes' | 'no';
  otherCallers?: number;
  possibleCpus?: string;
  requested?: number;
  interface?: ProbeInterface;
  case?: string;
  ops?: string;
  trace?: string;
  entryEvent?: string;
  returnEvent?: string;
  format: 'text' | 'json' | 'markdown';
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** `kretprobe-triage capacity`: size maxactive from the caller model, not from the CPU count. */
export function capacityCommand(ctx: CommandContext): Command {
  return new Command('capacity')
    .description('Estimate the maximum admitted overlap from the caller model, compare it with the effective maxactive and the observed high-water mark, and recommend a value')
    .option('--workers <n>', 'tasks that may call the target at once', intArg('--workers', 0))
    .option('--concurrent-fds <n>', 'file descriptors (or requests) in flight at once', intArg('--concurrent-fds', 0))
    .option('--blocking-points <n>', 'places inside the target where a call can block', intArg('--blocking-points', 0))
    .option('--recursion-depth <n>', 'deepest nesting of the target within one task', intArg('--recursion-depth', 1))
    .addOption(new Option('--target-sleeps <yes|no>', 'whether the target can block').choices(['yes', 'no']))
    .option('--other-callers <n>', 'callers outside the test sharing the pool (capture pipeline, daemons)', intArg('--other-callers', 0))
    .option('--possible-cpus <n|list>', 'possible CPUs: a count or /sys/devices/system/cpu/possible (e.g. 0-3,8-11)')
    .option('--requested <n>', 'requested maxactive (as written; <= 0 means default in the C API)', intArg('--requested', -1_000_000))
    .addOption(new Option('--interface <iface>', 'how the return probe is made').choices(['module', 'tracefs', 'perf-probe', 'bpftrace', 'bpf-link', 'other']))
    .option('--case <file>', 'take the caller model, CPUs, interface and maxactive from this case (options override)')
    .option('--ops <file>', 'ops.jsonl, with --trace: measure the observed high-water mark')
    .option('--trace <file>', 'probe records (trace text, perf script, probe.jsonl; - for stdin): measure the observed high-water mark')
    .option('--entry-event <name>', 'entry event name in trace text')
    .option('--return-event <name>', 'return event name in trace text')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['text', 'json', 'markdown']).default('text'))
    .action(async (o: CapacityOptions) => {
      const c = o.case === undefined ? undefined : (await loadCase(path.resolve(ctx.io.cwd, o.case))).data;
      const cc = c?.concurrency;
      const sleeps = o.targetSleeps !== undefined ? o.targetSleeps === 'yes' : typeof cc?.target_sleeps === 'boolean' ? cc.target_sleeps : undefined;
      const model: CallerModel = {
        workers: o.workers ?? num(cc?.workers),
        concurrentFds: o.concurrentFds ?? num(cc?.concurrent_fds),
        blockingPoints: o.blockingPoints,
        recursionDepth: o.recursionDepth ?? num(cc?.recursion_depth),
        targetSleeps: sleeps,
        otherCallers: o.otherCallers,
      };
      let possibleCpus: number | undefined;
      if (o.possibleCpus !== undefined) {
        const r = parseCpuCount(o.possibleCpus);
        if (!r.ok) throw new InputError({}, `--possible-cpus: ${r.expected}`, r.got);
        possibleCpus = r.count;
      } else possibleCpus = possibleCpusOf(c?.kernel?.possible_cpus);
      const caseIface = c?.probe?.interface;
      const iface: ProbeInterface | undefined = o.interface ?? (typeof caseIface === 'string' && caseIface !== 'unknown' ? caseIface : undefined);
      if (iface === undefined) throw new InputError({}, '--interface (module, tracefs, perf-probe, bpftrace, bpf-link, other) or a case with probe.interface', 'neither');
      const requested = o.requested ?? num(c?.probe?.maxactive?.requested);
      let observed: CapacityInput['observed'];
      if (o.trace !== undefined) {
        const { report } = await runLedger(ctx, { ops: o.ops, trace: o.trace, entryEvent: o.entryEvent, returnEvent: o.returnEvent, format: 'text' });
        const r = report.result;
        // Demand (from a separate entry event) is what the pool must hold; admitted instances are censored by it.
        observed = r.demand !== undefined
          ? { value: r.demand.value, lowerBound: !r.demand.exact, fromEntryEvents: true }
          : { value: r.highWater.value, lowerBound: r.highWater.lowerBound, fromEntryEvents: false };
      } else if (num(cc?.observed_high_water) !== undefined) {
        observed = { value: num(cc?.observed_high_water)!, lowerBound: false, fromEntryEvents: false };
      }
      const result = capacityModel({ model, possibleCpus, iface, requested, observed });
      const data = { ...(snakeKeys({ interface: iface, requested: requested ?? null, possible_cpus: possibleCpus ?? null, model, ...result }) as Record<string, unknown>), ...(await shippedVersions()) };
      if (o.format === 'json') ctx.io.stdout(`${JSON.stringify(data, null, 2)}\n`);
      else if (o.format === 'markdown') ctx.io.stdout(formatJsonMarkdown('kretprobe-triage capacity', data));
      else ctx.io.stdout(formatCapacityText(result, iface, requested));
      ctx.exit(0);
    });
}
