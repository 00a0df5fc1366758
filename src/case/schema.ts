import { z } from 'zod';
import { MAX_CPUS, parseCpuList } from '../kernel/cpus.js';

/**
 * The `kretprobe-case/v1` format, defined once: validation (with positions, see parse.ts), the
 * TypeScript types and the published JSON Schema (schema/kretprobe-case-v1.schema.json) all
 * come from here. The contract is ../shared/case-format.md: fields are added, never renamed.
 *
 * Every leaf may be `unknown` or absent (the same thing) or null (also unknown, except
 * `probe.target_module`, where null means "built into vmlinux"). Unknown is never read as no.
 */

/** A leaf that may also be unknown. */
function maybe<T extends z.ZodType>(inner: T, description: string) {
  return z.union([inner, z.literal(UNKNOWN)]).nullish().describe(description);
}

const count = (description: string) => maybe(z.number().int().min(0), description);
const integer = (description: string) => maybe(z.number().int(), description);
const flag = (description: string) => maybe(z.boolean(), description);
const text = (description: string) => maybe(z.string().min(1), description);

import { UNKNOWN, VERDICTS, type VerdictId } from './ids.js';
import { CONTRADICTIONS as LEDGER_CONTRADICTIONS } from '../ledger/contradictions.js';

export { UNKNOWN, VERDICTS, type VerdictId };

export const CLAIM_KINDS = ['function-stuck', 'deadlock', 'no-misses', 'maxactive-fixed-driver', 'latency-representative', 'other'] as const;
export type ClaimKind = (typeof CLAIM_KINDS)[number];
/**
 * Whom a claim is about when it is not the run whose evidence the case holds: `other-run`, another
 * run of the same investigation (the adequate arm of an A/B, "with a larger pool there were no
 * misses"). Absent: the case's own run.
 */
export const CLAIM_SUBJECTS = ['other-run'] as const;
export type ClaimSubject = (typeof CLAIM_SUBJECTS)[number];
export const JUDGEMENTS = ['supported', 'unsupported', 'overreach'] as const;
export type Judgement = (typeof JUDGEMENTS)[number];

export const INTERFACES = ['module', 'tracefs', 'perf-probe', 'bpftrace', 'bpf-link', 'fprobe', 'other'] as const;
/** How a BPF tool puts a program on a function's return (src/kernel/history.ts BpfReturnAttach). */
export const BPF_ATTACH = ['perf-kretprobe', 'kprobe-multi', 'fexit'] as const;
/** Which side of the function the probe under investigation fires on (src/facts/capacity.ts probeKind). */
export const PROBE_KINDS = ['return', 'entry'] as const;
export const IDENTITIES = ['instance-data', 'task-and-depth', 'task-only', 'global-timestamp', 'none'] as const;

const cpuCount = z
  .union([
    z.number().int().min(1).max(MAX_CPUS),
    z.string().superRefine((s, ctx) => {
      const r = parseCpuList(s);
      if (!r.ok) ctx.addIssue({ code: 'custom', message: r.expected });
    }),
  ])
  .describe('possible CPUs: a count, or the sysfs list form "0-3,8-11" (= 8)');

const snapshot = z
  .object({
    epoch: text('registration epoch label this snapshot was read in'),
    nmissed: count("the return probe's miss counter (struct kretprobe nmissed, or kprobe_profile's miss column)"),
    kprobe_nmissed: count("the embedded kprobe's miss counter (struct kprobe nmissed: recursion, other probes active)"),
    hits: count('hits of the return event (kprobe_profile: returns handled, not entries)'),
    recursion_misses: count('BPF program runs skipped because another BPF program was active on the CPU (bpftool prog show recursion_misses): the probe fired, the program did not run'),
  })
  .strict();

export const caseSchema = z
  .object({
    format: z.literal('kretprobe-case/v1').describe('format and version of this file'),
    id: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, { message: 'a kebab-case id' }).describe('unique, kebab-case'),
    title: z.string().optional().describe('one line that names the investigation'),
    source: z.string().optional().describe('provenance, free text: lab run, write-up link, ticket'),

    kernel: z
      .object({
        release: text('uname -r'),
        version: text('the upstream point release the kernel is built from, when uname -r names only a distribution ABI (5.10.0-32-amd64): e.g. 5.10.223 from /proc/version "Debian 5.10.223-1"'),
        arch: text('uname -m'),
        possible_cpus: z.union([cpuCount, z.literal(UNKNOWN)]).nullish().describe('possible CPUs: a count, or the sysfs list form "0-3,8-11" (= 8)'),
        preemption: flag('CONFIG_PREEMPTION is set (PREEMPT, PREEMPT_RT or PREEMPT_DYNAMIC): decides the default pool before 6.2'),
        observed_by: maybe(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'a date, YYYY-MM-DD' }), 'a date (YYYY-MM-DD) the kernel was seen running by (a write-up\'s latest post or mail date): a kernel running then has no change first posted after it'),
      })
      .strict()
      .optional(),

    probe: z
      .object({
        interface: maybe(z.enum(INTERFACES), 'how the return probe was made'),
        kind: maybe(z.enum(PROBE_KINDS), 'which probe the case is about: return (a kretprobe, a tracefs r: or %return event, bpftrace kretprobe:, the probe this format describes; also when not stated) or entry (a kprobe, a tracefs p: event, bpftrace/ply kprobe:, bcc attach_kprobe): an entry probe takes no instance from a pool and no return of it is expected'),
        target: text('symbol or 0x address'),
        event: text('name of the return event (tracefs/perf GROUP/EVENT or EVENT), where the interface names one'),
        target_module: z.union([z.string().min(1), z.literal(UNKNOWN)]).nullish().describe('module owning the symbol; null = vmlinux'),
        registration: z
          .object({
            result: text('ok, or the errno name the registration failed with (EINVAL, ENOENT, E2BIG, ...)'),
            epoch: text('a label; a new registration is a new epoch'),
            reason: text('what the kernel said (error_log reason, dmesg line)'),
          })
          .strict()
          .optional(),
        armed: flag('the probe was enabled and live during the test (not [DISABLED], not [GONE])'),
        maxactive: z
          .object({
            requested: integer('as written; <= 0 means "default" in the C API'),
            effective: count('what the kernel reports or used'),
          })
          .strict()
          .optional(),
        entry_handler: z
          .object({
            present: flag('an entry handler runs for admitted calls'),
            can_filter: flag('it may return nonzero to reject a call'),
          })
          .strict()
          .optional(),
        handler: z
          .object({
            may_sleep: flag('a handler may sleep'),
            blocking_locks: flag('a handler takes a blocking lock or semaphore'),
            does_io: flag('a handler waits for I/O'),
            heavy_printk: flag('a handler prints heavily (printk per call)'),
            bounded_storage: flag('records go to bounded, reviewed storage'),
          })
          .strict()
          .optional(),
        per_instance_data: flag('data_size > 0 binds entry and return of one instance'),
        bpf_attach: maybe(z.enum(BPF_ATTACH), 'how a BPF program is put on the return (bpftool link show): perf-kretprobe (a perf_event kretprobe, the default pool), kprobe-multi (a kprobe_multi link on fprobe: one pool of functions x 2 x possible CPUs, none from 6.14), fexit (a BPF trampoline: no pool)'),
        bpf_functions: count('functions one kprobe_multi link covers (bpftool link show func_cnt): they share its one pool'),
      })
      .strict()
      .optional(),

    coverage: z
      .object({
        blacklisted: flag('the target is on the kprobe blacklist'),
        inlined_call_sites: maybe(z.enum(['none', 'some']), 'inline copies of the target the probe cannot see'),
        clones: z.union([z.array(z.string().min(1)), z.literal(UNKNOWN)]).nullish().describe('compiler clones found in kallsyms (.isra, .constprop, .part, .cold)'),
        unusual_return: flag('noreturn, longjmp-like or other exits that bypass the return'),
        arch_restrictions_checked: flag('the architecture restrictions for return probes were checked'),
        removed_in: text('the kernel release in which the target was removed, as the write-up says ("X was removed in 5.8"): from it on no probe on the target can register'),
        not_called_since: text('the kernel release from which the traced path no longer calls the target ("since 5.10 vfs_write no longer calls __vfs_write"): calls on that path leave no record of the target'),
      })
      .strict()
      .optional(),

    concurrency: z
      .object({
        target_sleeps: flag('the target has a blocking point'),
        workers: count('tasks that may call the target at once'),
        concurrent_fds: count('file descriptors (or requests) in flight at once'),
        recursion_depth: count('deepest nesting of the target within one task'),
        estimated_max_overlap: count('the caller model\'s maximum of admitted calls at once'),
        observed_high_water: count('most accepted instances outstanding at once, measured'),
        observed_high_water_at_ns: count('trace time (ns) of the record that first reached the observed high-water mark'),
        observed_demand_high_water: count('most calls entered at once as seen by a separate entry event (admitted or missed): demand, not accepted instances'),
        observed_demand_high_water_at_ns: count('trace time (ns) of the record that first reached the demand high-water mark'),
        capacity_basis: maybe(z.enum(['caller-model', 'cpu-count', 'default']), 'what maxactive was sized from'),
        loss_follows_overlap: flag('an A/B comparison on the same probe: returns went missing in this run, and none did in a run that differed only in holding fewer calls inside the function at once or in a larger pool (the article\'s constrained and adequate fixture runs): this run\'s demand was above its pool'),
        overlap_run_counter_level: flag('the other run of that A/B read its own miss counter (nmissed) and found it level: its "no misses" is counted, not judged from the output; only a "no misses" claim about that run reads it'),
        loss_until_reregistration: flag('the probe, registered and armed, went silent for good: from some point on no call reaching the target ran even its entry handler, and only a new registration (a module reload) brought it back: its pool had run dry and stayed dry (instances leaked, as by an entry handler that rejects calls before 3.2.6, or held by calls that never return), so each later call was a pool miss'),
      })
      .strict()
      .optional(),

    counters: z
      .object({
        source: maybe(z.enum(['module-field', 'kprobe_profile', 'bpf-link']), 'where the miss counters were read'),
        event: text('the event whose line the counters were read from (kprobe_profile name column, bpftool link id); must be the return event'),
        start: snapshot.optional(),
        end: snapshot.optional(),
      })
      .strict()
      .optional(),

    ledger: z
      .object({
        eligible: count('operations that should have reached the target'),
        identity: maybe(z.enum(IDENTITIES), 'how entry and return of one call are bound'),
        entries: count('entry records of accepted instances'),
        entry_events: count('hits of a separate entry probe (fires also for calls the return probe missed)'),
        returns: count('return records'),
        filtered: count('calls rejected on purpose by the entry handler'),
        in_flight_at_stop: count('accepted calls with no return yet when capture stopped'),
        workload_quiesced: flag('the owned workload was drained before deciding'),
        no_probe_evidence: count('operations in the independent ledger with no probe record at all'),
        completed_without_return: count('operations the independent ledger saw complete inside the capture window whose accepted entry has no return record'),
        foreign_records: count('probe records that match no operation (the observer\'s own pipeline, other callers)'),
        records_only_eligible: flag('the probe writes records of eligible operations only (its program keeps just the workload\'s calls: a predicate on the command the test runs), so no record, received or lost, is another call\'s: each record lost is an eligible call\'s'),
        ambiguous_pairs: count('entry/return pairs that could not be bound unambiguously'),
        returns_without_entry: count('return records with no open entry to pair with (the call began before capture, or its entry record was lost); the high-water and demand marks are then floors, which cannot show the pool was enough'),
        lost_events: count('events the kernel trace buffer overwrote, summed from its [LOST N EVENTS] markers (trace text only)'),
        contradictions: z
          .union([z.array(z.enum(LEDGER_CONTRADICTIONS)), z.literal(UNKNOWN)])
          .nullish()
          .describe('what the ledger found the records contradict (the figures they touch were given as bounds): admitted-above-maxactive, nmissed-exceeds-unreturned, records-out-of-order, duplicate-operation-ids'),
        printk_dropped: count('records the handlers wrote with printk that the kernel log dropped (dmesg "** N printk messages dropped **", a console or log buffer overrun)'),
        buffer_overruns: count("records a tracer's per-CPU buffers overran or lost outside the trace text (per_cpu/cpuN/stats overrun, a BPF ring/perf buffer's lost count, bpftrace \"Lost N events\")"),
      })
      .strict()
      .optional(),

    latency: z
      .object({
        reported: flag('durations were reported'),
        from: maybe(z.enum(['admitted', 'all']), 'which calls the durations come from'),
        coverage_reported: flag('eligible, accepted, misses, filtered and incomplete were reported with them'),
        count: count('admitted pairs the distribution was computed from'),
        p50_ns: count('median duration'),
        p90_ns: count('90th percentile duration'),
        p99_ns: count('99th percentile duration'),
        max_ns: count('longest duration'),
      })
      .strict()
      .optional(),

    fixture: z
      .object({
        synthetic: flag('a disposable test function, not a live driver path'),
        gated: flag('calls are held at an explicit gate inside the function body'),
        overlap_verified: flag('all gated calls were verified to be outstanding at once'),
        gate_holds_shared_resource: flag('the gate holds something the controller or other callers need'),
        live_driver_path: flag('the wait was fabricated on a live driver path'),
      })
      .strict()
      .optional(),

    claims: z
      .array(
        z
          .object({
            kind: z.enum(CLAIM_KINDS).describe('what the write-up concluded'),
            text: z.string().optional().describe('the write-up\'s words'),
            at: z.string().optional().describe('where the claim was found in the write-up: "file:line:col"'),
            subject: z.enum(CLAIM_SUBJECTS).optional().describe('whom the claim is about when not the run this case\'s evidence describes: other-run (another run of the investigation, such as the other arm of an A/B)'),
          })
          .strict(),
      )
      .optional(),

    accepted: z
      .array(
        z
          .object({
            rule: z.string().regex(/^[a-z0-9-]+\/[a-z0-9-]+$/, 'a rule id such as counters/nmissed-rose').describe('the rule id whose finding (or claim judgement) is accepted'),
            reason: z.string().min(1).describe('why it is accepted: shown beside the finding and exported as a SARIF suppression'),
          })
          .strict(),
      )
      .optional()
      .describe('waivers: findings the investigation accepts; still shown, not counted toward the exit code'),

    provenance: z
      .record(z.string(), z.string())
      .optional()
      .describe('where each fact came from: fact path -> "file:line" (written by case from-bundle)'),

    expected: z
      .object({
        verdict: z.enum(VERDICTS).optional(),
        rules: z.array(z.string()).optional(),
        not_rules: z.array(z.string()).optional().describe('rules that must not fire'),
        claims: z.array(z.enum(JUDGEMENTS)).optional(),
      })
      .strict()
      .optional()
      .describe('only in reference cases shipped with the project'),
  })
  .strict();

export type Case = z.infer<typeof caseSchema>;

/**
 * Case fields no rule or derivation reads: kept for the reader and the report, never for a
 * verdict. A meta-test checks that every other field is read somewhere.
 */
export const INFORMATIONAL: Readonly<Record<string, string>> = {
  'kernel.arch': 'quoted by scope/arch-restrictions-unchecked; no verdict depends on it',
  'probe.target_module': 'names the module for the reader',
  'probe.registration.reason': 'quoted when registration failed',
  'coverage.not_called_since': 'a release the write-up states, for the reader; no rule compares it with the case\'s kernel yet',
  'probe.per_instance_data': 'the binding actually used is ledger.identity',
  'concurrency.workers': 'an input of the caller model, summarised by estimated_max_overlap',
  'concurrency.concurrent_fds': 'an input of the caller model, summarised by estimated_max_overlap',
  'concurrency.observed_high_water_at_ns': 'locates the peak in the trace for the reader',
  'concurrency.observed_demand_high_water_at_ns': 'locates the peak in the trace for the reader',
  'ledger.contradictions': 'names what the ledger found impossible in the records, for the contradiction findings (issue 25)',
  'latency.count': 'describes the reported distribution',
  'latency.p50_ns': 'the reported distribution',
  'latency.p90_ns': 'the reported distribution',
  'latency.p99_ns': 'the reported distribution',
  'latency.max_ns': 'the reported distribution',
  'fixture.synthetic': 'fixture.live_driver_path carries the decision',
};

/** The JSON Schema published for editors, derived from the same definition. */
export function caseJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(caseSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://kretprobe-triage.invalid/schema/kretprobe-case-v1.schema.json',
    title: 'kretprobe-triage case file (kretprobe-case/v1)',
  };
}
