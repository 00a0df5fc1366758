import type { Case } from '../../case/schema.js';
import type { Facts } from '../../facts/facts.js';
import { caseInputs } from '../../ledger/caseInputs.js';
import type { LedgerView } from '../../ledger/format.js';
import { OBSERVER_ORDER, type CaseVerdict } from '../../verdict/verdict.js';
import type { EpochCounter, InFlightSeriesData } from './observe.js';
import { histogramSvg, identityBarSvg, inFlightSvg, type IdentityTerm } from './svg.js';
import type { Ref, Unit } from './values.js';

/**
 * The investigation report as a small document (sections of paragraphs, tables and figures),
 * built once and rendered by the HTML and the Markdown formatter alike, so both carry the same
 * content. Sections follow the seed's deliverables ("Report coverage alongside latency": the
 * concurrency model, configuration, actual counter deltas, handler constraints and correlation
 * method; which calls were observed and why others were absent).
 */

export type Inline = string | Ref | { strong: Inline[] } | { code: string };
export type Block =
  | { t: 'p'; c: Inline[] }
  | { t: 'table'; head: string[]; rows: Inline[][][] }
  | { t: 'list'; items: Inline[][] }
  | { t: 'figure'; name: string; svg: string; caption: string };

export interface Section {
  id: string;
  title: string;
  /** The seed section (or kernel fact) the section answers to. */
  cites: string;
  blocks: Block[];
}

export interface InvestigationDocument {
  title: Inline[];
  sub: Inline[];
  sections: Section[];
}

/** What the ledger pass adds when the report is given --ops/--trace. */
export interface LedgerPart {
  view: LedgerView;
  /** ledgerJson(view): the numbers the report shows are read from here. */
  json: Record<string, unknown>;
  series: InFlightSeriesData;
  bins: Array<{ loNs: number; hiNs: number; count: number }>;
  epochCounters: EpochCounter[];
}

export interface InvestigationInput {
  /** The case file as the user named it. */
  file: string;
  /** The case as evaluated (with the ledger's results applied, when there is a ledger). */
  case: Case;
  facts: Facts;
  verdict: CaseVerdict;
  /** toVerdictJson(verdict). */
  verdictJson: Record<string, unknown>;
  ledger?: LedgerPart | undefined;
  /** Case fields (dotted) the ledger pass filled in before evaluation. */
  ledgerFields?: string[] | undefined;
}

/** The sections every report has, in order (ids are the HTML anchors; tests check them). */
export const SECTION_IDS = ['verdict', 'configuration', 'concurrency', 'counters', 'handlers', 'correlation', 'observed', 'latency', 'inputs'] as const;

/** JSON Pointer (RFC 6901) read: `/a/b~1c/0`. */
export function pointer(obj: unknown, ptr: string): unknown {
  if (ptr === '') return obj;
  let cur = obj;
  for (const raw of ptr.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

const seg = (k: string | number): string => String(k).replace(/~/g, '~0').replace(/\//g, '~1');
/** A JSON Pointer from its parts. */
export const ptr = (...parts: Array<string | number>): string => parts.map((p) => `/${seg(p)}`).join('');

/** Sources of values, each read through one function so that every shown value has a key. */
class Refs {
  constructor(private readonly input: InvestigationInput) {}
  verdict(p: string, unit?: Unit): Ref {
    return { k: `verdict:${p}`, v: pointer(this.input.verdictJson, p), unit };
  }
  /** A case field by its dotted path. */
  case(dotted: string, unit?: Unit): Ref {
    const p = ptr(...dotted.split('.'));
    // case-format.md: a null target_module means the symbol is built into vmlinux.
    return { k: `case:${p}`, v: pointer(this.input.case, p), unit, ...(dotted === 'probe.target_module' ? { nullAs: 'vmlinux' } : {}) };
  }
  fact(name: string, unit?: Unit): Ref {
    return { k: `fact:${name}`, v: this.input.facts.values.get(name), unit };
  }
  ledger(p: string, unit?: Unit): Ref {
    return { k: `ledger:${p}`, v: pointer(this.input.ledger?.json, p), unit };
  }
  observed(p: string, v: unknown, unit?: Unit): Ref {
    return { k: `observed:${p}`, v, unit };
  }
}

const row = (...cells: Array<Inline | Inline[]>): Inline[][] => cells.map((c) => (Array.isArray(c) ? c : [c]));

/** Where a case field came from: this report's ledger pass, the case's provenance, or the case file. */
function fromOf(input: InvestigationInput, dotted: string): Inline {
  if (input.ledgerFields?.includes(dotted)) return 'this ledger pass';
  const p = input.case.provenance?.[dotted];
  return p === undefined ? 'case file' : { k: `case:${ptr('provenance', dotted)}`, v: p };
}

export function investigationDocument(input: InvestigationInput): InvestigationDocument {
  const R = new Refs(input);
  const c = input.case;
  const v = input.verdict;
  const L = input.ledger;
  const sections: Section[] = [];
  // The one miss figure: the accounting identity's (the engine's, from the case). The identity
  // bar and the histogram's coverage line both draw this Ref, so the pictures cannot disagree on
  // how many calls were missed.
  const missed = R.verdict(ptr('accounting', 'capacity_missed'));

  // 1. Verdict and the reasoning chain.
  {
    const blocks: Block[] = [];
    blocks.push({ t: 'p', c: ['Verdict: ', { strong: [R.verdict('/verdict')] }, '. Next: ', R.verdict('/next')] });
    const chain: Inline[][][] = [];
    const steps = [...OBSERVER_ORDER, 'evidence-of-stall', 'fully-observed'] as const;
    steps.forEach((step) => {
      const fired = v.findings.map((f, i) => ({ f, i })).filter((x) => x.f.verdict === step);
      const open = v.undecided.filter((u) => u.verdict === step);
      const status = fired.length ? (step === v.verdict ? 'established: the verdict' : 'established') : open.length ? 'open (unknown facts)' : 'excluded (no rule fired)';
      const because: Inline[] = fired.length
        ? fired.flatMap((x, j) => [...(j ? ['; '] : []), R.verdict(ptr('findings', x.i, 'rule'))])
        : open.length ? ['needs ', [...new Set(open.flatMap((u) => u.needs))].join(', ')] : ['—'];
      chain.push(row({ code: step }, status, because));
    });
    // The verdict branch adds these to the verdict JSON; shown once they are there.
    if (Array.isArray(input.verdictJson.possible)) blocks.push({ t: 'p', c: ['Verdicts still possible, most severe first: ', R.verdict('/possible'), '.'] });
    if (Array.isArray(input.verdictJson.decides) && (input.verdictJson.decides as unknown[]).length) blocks.push({ t: 'p', c: ['Facts that decide between them: ', R.verdict('/decides'), '.'] });
    blocks.push({ t: 'p', c: ['The observer explanations are tried in order; only when every one is excluded can a missing return say something about the function (seed: "Interpret the missing-return evidence").'] });
    blocks.push({ t: 'table', head: ['explanation', 'status', 'because'], rows: chain });
    if (v.findings.length) {
      blocks.push({
        t: 'table',
        head: ['finding (impact)', 'explanation', 'facts that fired it (source)'],
        rows: v.findings.map((f, i) =>
          row(
            [R.verdict(ptr('findings', i, 'rule')), ' (', { ...R.verdict(ptr('findings', i, 'verdict')), nullAs: 'warning' }, ')'],
            R.verdict(ptr('findings', i, 'explanation')),
            [...Object.keys(f.facts).flatMap((k, j) => [...(j ? ['; '] : []), `${k} = `, R.verdict(ptr('findings', i, 'facts', k))]), ' (', R.verdict(ptr('findings', i, 'source')), ')'],
          ),
        ),
      });
    }
    if (v.missing.length) blocks.push({ t: 'p', c: ['Unknown facts that would change the verdict, most decisive first: ', R.verdict('/missing')] });
    if (v.claims.length) {
      blocks.push({
        t: 'table',
        head: ['claim', 'judgement', 'because'],
        rows: v.claims.map((_, i) => row(R.verdict(ptr('claims', i, 'kind')), { strong: [R.verdict(ptr('claims', i, 'judgement'))] }, R.verdict(ptr('claims', i, 'because')))),
      });
    }
    sections.push({ id: 'verdict', title: 'Verdict and reasoning', cites: 'Interpret the missing-return evidence', blocks });
  }

  // 2. Configuration.
  {
    const fields: Array<[string, string]> = [
      ['kernel.release', 'kernel release'],
      ['kernel.arch', 'architecture'],
      ['kernel.possible_cpus', 'possible CPUs'],
      ['probe.interface', 'interface'],
      ['probe.target', 'target'],
      ['probe.target_module', 'target module'],
      ['probe.registration.result', 'registration result'],
      ['probe.registration.epoch', 'registration epoch'],
      ['probe.registration.reason', 'what the kernel said'],
      ['probe.armed', 'armed during the test'],
      ['probe.maxactive.requested', 'maxactive requested'],
      ['probe.maxactive.effective', 'maxactive read back'],
    ];
    const rows = fields.map(([k, label]) => row(label, R.case(k), fromOf(input, k)));
    const eff = caseInputs(c).effectiveMaxactive;
    rows.push(row({ strong: ['maxactive in force'] }, { strong: [R.fact('capacity.effective_maxactive')] }, eff ? eff.from : 'unknown: read the effective value back'));
    rows.push(row('kernel default for this machine', R.fact('capacity.default_maxactive'), 'the larger of ten and twice the possible CPUs (kernel-facts.md)'));
    rows.push(row('pool sized from the default', R.fact('capacity.uses_default'), 'concurrency.capacity_basis'));
    rows.push(row('request refused by the interface', R.fact('capacity.request_rejected'), 'kernel-facts.md (tracefs limits)'));
    const scope: Array<[string, string]> = [
      ['coverage.blacklisted', 'on the kprobe blacklist'],
      ['coverage.inlined_call_sites', 'inlined call sites'],
      ['coverage.clones', 'compiler clones'],
      ['coverage.unusual_return', 'unusual return paths'],
      ['coverage.arch_restrictions_checked', 'architecture restrictions checked'],
    ];
    for (const [k, label] of scope) rows.push(row(label, R.case(k), fromOf(input, k)));
    sections.push({ id: 'configuration', title: 'Configuration', cites: 'Establish the probe’s actual scope', blocks: [{ t: 'table', head: ['setting', 'value', 'from'], rows }] });
  }

  // 3. Concurrency model.
  {
    const blocks: Block[] = [];
    const model: Array<[string, string]> = [
      ['concurrency.target_sleeps', 'the target can sleep'],
      ['concurrency.workers', 'workers calling it'],
      ['concurrency.concurrent_fds', 'concurrent descriptors / requests'],
      ['concurrency.recursion_depth', 'recursion depth'],
      ['concurrency.estimated_max_overlap', 'estimated maximum overlap (caller model)'],
      ['concurrency.capacity_basis', 'maxactive sized from'],
      ['concurrency.observed_high_water', 'observed high-water: accepted instances outstanding'],
      ['concurrency.observed_high_water_at_ns', 'reached at trace time (ns)'],
      ['concurrency.observed_demand_high_water', 'observed demand: calls entered at once (entry events, admitted or missed)'],
      ['concurrency.observed_demand_high_water_at_ns', 'demand reached at trace time (ns)'],
    ];
    const rows = model.map(([k, label]) => row(label, R.case(k), fromOf(input, k)));
    rows.push(row({ strong: ['effective maxactive'] }, { strong: [R.fact('capacity.effective_maxactive')] }, 'Configuration'));
    if (L) {
      rows.push(row('ledger high-water: accepted instances outstanding', R.ledger('/high_water/value'), 'this ledger pass'));
      rows.push(row('ledger high-water is exact (otherwise a floor, its ceiling below)', R.ledger('/high_water/exact'), 'this ledger pass'));
      rows.push(row('ledger high-water ceiling', R.ledger('/high_water/upper'), 'this ledger pass'));
      if (L.view.report.result.demand !== undefined) {
        rows.push(row('ledger demand: entry events outstanding at once (admitted or missed)', R.ledger('/demand/value'), 'this ledger pass'));
        rows.push(row('ledger demand is exact (otherwise a floor, its ceiling below)', R.ledger('/demand/exact'), 'this ledger pass'));
        rows.push(row('ledger demand ceiling', R.ledger('/demand/upper'), 'this ledger pass'));
      }
    }
    blocks.push({ t: 'table', head: ['caller model', 'value', 'from'], rows });
    // A series without a bucket has nothing to draw: no picture, the sentence below says so.
    if (L && L.series.buckets.length) {
      const r = L.view.report.result;
      // The series counts open entry records: accepted instances, or with a separate entry event
      // the entry events without a return yet. Those include missed calls, whose entry never gets
      // a return, so that count is the ledger's demand ceiling, not accepted instances: trace
      // text without instance ids cannot show accepted instances over time.
      const counted = r.semantics === 'instance' ? 'accepted instances outstanding' : 'entry events without a return yet (a ceiling on demand, not accepted instances)';
      const mark = r.semantics === 'instance' || r.demand === undefined ? '/high_water/value' : '/demand/upper';
      const eff = L.view.effectiveMaxactive;
      const miss = L.epochCounters.find((e) => e.name === 'nmissed');
      blocks.push({
        t: 'figure',
        name: 'inflight',
        caption: `In flight over time (${counted}), each bucket drawn from its minimum to its maximum so the peak survives downsampling; the dashed line is the effective maxactive, shaded stretches had the pool full.`,
        svg: inFlightSvg({
          series: L.series,
          counted,
          peak: R.ledger(mark),
          maxactive: eff ? R.ledger('/effective_maxactive/value') : undefined,
          stopNs: r.window.stopNs,
          misses: miss?.rises ?? [],
          missDelta: R.ledger('/counters/nmissed_delta'),
          bucket: R.observed('/series/widthNs', L.series.widthNs, 'ns'),
        }),
      });
      blocks.push({ t: 'p', c: ['Series: ', R.observed('/series/samples', L.series.samples), ' records in ', R.observed('/series/buckets', L.series.buckets.length), ' buckets of ', R.observed('/series/widthNs', L.series.widthNs, 'ns'), '; series peak ', R.observed('/series/peak', L.series.peak), mark === '/demand/upper' ? ' (the ledger demand ceiling: ' : ' (the ledger high-water mark: ', R.ledger(mark), ').'] });
    } else if (L) {
      blocks.push({ t: 'p', c: ['The probe records hold no entry or return: no in-flight picture.'] });
    } else {
      blocks.push({ t: 'p', c: ['No trace was given (--ops/--trace): the in-flight picture needs the probe records.'] });
    }
    sections.push({ id: 'concurrency', title: 'Concurrency model', cites: 'Separate in-flight calls from CPUs', blocks });
  }

  // 4. Counter deltas per epoch.
  {
    const blocks: Block[] = [];
    blocks.push({ t: 'p', c: ['Snapshots from ', R.case('counters.source'), ': start in epoch ', R.case('counters.start.epoch'), ', end in epoch ', R.case('counters.end.epoch'), '; one epoch: ', R.fact('counters.same_epoch'), '; a real delta: ', R.fact('counters.delta_valid'), '.'] });
    const rows = (['nmissed', 'kprobe_nmissed', 'hits'] as const).map((k) => row({ code: k }, R.case(`counters.start.${k}`), R.case(`counters.end.${k}`), R.fact(`counters.delta.${k}`)));
    blocks.push({ t: 'table', head: ['counter', 'start', 'end', 'delta within the epoch'], rows });
    if (L) {
      blocks.push({ t: 'p', c: ['Miss-counter delta the ledger used: ', R.ledger('/counters/nmissed_delta'), ' (', R.ledger('/counters/source'), ').'] });
      if (L.epochCounters.length) {
        blocks.push({
          t: 'table',
          head: ['epoch (probe records)', 'counter', 'first', 'last', 'snapshots', 'delta'],
          rows: L.epochCounters.map((e, i) =>
            row(R.observed(ptr('counters', i, 'epoch'), e.epoch), { code: e.name }, R.observed(ptr('counters', i, 'first'), e.first.value), R.observed(ptr('counters', i, 'last'), e.last.value), R.observed(ptr('counters', i, 'snapshots'), e.snapshots), e.delta === null ? 'reset inside the epoch: no delta' : R.observed(ptr('counters', i, 'delta'), e.delta)),
          ),
        });
      } else blocks.push({ t: 'p', c: ['The probe records carry no counter snapshots.'] });
    }
    sections.push({ id: 'counters', title: 'Counter deltas per epoch', cites: 'Read missed and filtered cases separately', blocks });
  }

  // 5. Handler constraints.
  {
    const fields: Array<[string, string]> = [
      ['probe.entry_handler.present', 'an entry handler runs'],
      ['probe.entry_handler.can_filter', 'it can reject calls (return nonzero)'],
      ['probe.handler.may_sleep', 'a handler may sleep'],
      ['probe.handler.blocking_locks', 'a handler takes a blocking lock'],
      ['probe.handler.does_io', 'a handler waits for I/O'],
      ['probe.handler.heavy_printk', 'a handler prints heavily'],
      ['probe.handler.bounded_storage', 'records go to bounded, reviewed storage'],
    ];
    const blocks: Block[] = [{ t: 'table', head: ['constraint', 'value', 'from'], rows: fields.map(([k, label]) => row(label, R.case(k), fromOf(input, k))) }];
    const about = v.findings.map((f, i) => ({ f, i })).filter((x) => Object.keys(x.f.facts).some((k) => k.startsWith('probe.handler.') || k.startsWith('probe.entry_handler.')));
    blocks.push(about.length
      ? { t: 'list', items: about.map((x) => [R.verdict(ptr('findings', x.i, 'rule')), ': ', R.verdict(ptr('findings', x.i, 'explanation'))]) }
      : { t: 'p', c: ['No finding concerns the handlers.'] });
    sections.push({ id: 'handlers', title: 'Handler constraints', cites: 'Establish the probe’s actual scope', blocks });
  }

  // 6. Correlation method.
  {
    const rows: Inline[][][] = [
      row('how entry and return are bound', R.case('ledger.identity'), fromOf(input, 'ledger.identity')),
      row('per-instance data (a nonzero data_size)', R.case('probe.per_instance_data'), fromOf(input, 'probe.per_instance_data')),
      row('pairs that could not be bound unambiguously', R.case('ledger.ambiguous_pairs'), fromOf(input, 'ledger.ambiguous_pairs')),
      row('probe records matching no operation', R.case('ledger.foreign_records'), fromOf(input, 'ledger.foreign_records')),
      row('owned workload drained before deciding', R.case('ledger.workload_quiesced'), fromOf(input, 'ledger.workload_quiesced')),
    ];
    if (L) {
      const pairing: Array<[string, string]> = [
        ['/semantics', 'an entry record means (instance: an entry handler ran; event: a separate entry kprobe)'],
        ['/pairing/identity', 'pairing identity used'],
        ['/pairing/byInstance', 'pairs by instance id'],
        ['/pairing/byTask', 'pairs by task stack'],
        ['/pairing/ambiguous', 'task-stack pairs with nesting (LIFO assumed)'],
        ['/pairing/returnsWithoutEntry', 'returns without an entry'],
        ['/pairing/entriesWithoutReturn', 'entries without a return'],
        ['/pairing/closedByCompletion', 'of those, closed when their operation completed'],
        ['/pairing/duplicateInstances', 'instance ids reused while open'],
        ['/pairing/foreign', 'foreign records'],
        ['/pairing/ambiguousOpMatches', 'ambiguous operation matches'],
      ];
      for (const [p, label] of pairing) rows.push(row(label, R.ledger(p), 'this ledger pass'));
    }
    sections.push({ id: 'correlation', title: 'Correlation method', cites: 'Build an independent operation ledger', blocks: [{ t: 'table', head: ['correlation', 'value', 'from'], rows }] });
  }

  // 7. Which calls were observed and why the others were absent.
  {
    const blocks: Block[] = [];
    const meaning: Record<string, string> = {
      returned: 'observed: entry and return recorded',
      filtered: 'absent by design: the entry handler rejected the call, so no return is expected',
      in_flight_at_stop: 'absent from the window: accepted, still running when capture stopped',
      capacity_missed: 'absent because the pool was empty: the miss counter rose, no entry and no return',
      not_covered: 'absent from the probe altogether: inlined call sites, other symbols, registration',
      unexplained: 'accepted, the workload drained, still no return: only this can speak about the function',
    };
    const terms = Object.keys(meaning);
    blocks.push({ t: 'p', c: ['eligible ', R.verdict('/accounting/eligible'), ' = ', ...terms.flatMap((t, i) => [...(i ? [' + '] : []), `${t.replace(/_/g, ' ')} `, R.verdict(ptr('accounting', t))]), '; balanced: ', R.verdict('/accounting/balanced'), '.'] });
    const bar: IdentityTerm[] = terms.map((t) => ({ name: t, ref: t === 'capacity_missed' ? missed : R.verdict(ptr('accounting', t)) }));
    // A bar with no width to draw (every part unknown or 0, no eligible count) is left out: the
    // sentence above says it all.
    const a = input.verdict.accounting as unknown as Record<string, number | null>;
    if ((a.eligible !== null && a.eligible !== undefined) || terms.some((t) => typeof a[t] === 'number' && a[t]! > 0)) {
      blocks.push({ t: 'figure', name: 'identity', caption: 'The accounting identity as one bar: every eligible operation in exactly one term (hatched: terms still unknown).', svg: identityBarSvg(R.verdict('/accounting/eligible'), bar, R.verdict('/accounting/balanced')) });
    }
    blocks.push({ t: 'table', head: ['term', 'operations', 'why'], rows: terms.map((t) => row({ code: t }, R.verdict(ptr('accounting', t)), meaning[t]!)) });
    blocks.push({
      t: 'table',
      head: ['cross-check', 'value'],
      rows: [
        row('entry records of accepted instances', R.case('ledger.entries')),
        row('entry events (a separate entry probe: also fires for missed calls)', R.case('ledger.entry_events')),
        row('accepted calls (derived)', R.fact('accounting.accepted')),
        row('entry-probe hits beyond accepted and filtered calls', R.fact('accounting.entry_probe_excess')),
        row('miss-counter rise beyond the operations the ledger lost', R.fact('accounting.misses_exceed_ledger')),
        row('returns counted by the profile outside the captured records', R.fact('accounting.returns_outside_capture')),
      ],
    });
    if (L?.view.report.result.ops) {
      const cls: Array<[string, string]> = [
        ['returned', 'returned'],
        ['in_flight_at_stop', 'entry without return, operation still running at stop'],
        ['completed_without_return', 'entry without return, operation completed in the window'],
        ['filtered', 'filtered'],
        ['no_probe_evidence', 'no probe record at all'],
      ];
      blocks.push({ t: 'table', head: ['ledger classification of eligible operations', 'operations'], rows: [row('eligible', R.ledger('/ops/eligible')), ...cls.map(([k, label]) => row(label, R.ledger(ptr('ops', 'classification', k))))] });
    }
    sections.push({ id: 'observed', title: 'Which calls were observed, and why the others were absent', cites: 'Interpret the missing-return evidence', blocks });
  }

  // 8. Latency, with its coverage beside every figure.
  {
    const blocks: Block[] = [];
    const cov: Array<{ label: string; ref: Ref }> = L?.view.report.result.ops
      ? [
          { label: 'eligible', ref: R.ledger('/coverage/eligible') },
          { label: 'accepted', ref: R.ledger('/coverage/accepted') },
          { label: 'missed', ref: missed },
          { label: 'filtered', ref: R.ledger('/coverage/filtered') },
          { label: 'incomplete', ref: R.ledger('/coverage/incomplete') },
        ]
      : [
          { label: 'eligible', ref: R.verdict('/accounting/eligible') },
          { label: 'accepted', ref: R.fact('accounting.accepted') },
          { label: 'missed', ref: missed },
          { label: 'filtered', ref: R.verdict('/accounting/filtered') },
          { label: 'in flight', ref: R.verdict('/accounting/in_flight_at_stop') },
          { label: 'unexplained', ref: R.verdict('/accounting/unexplained') },
        ];
    const covCell: Inline[] = cov.flatMap((x, i) => [...(i ? [' · '] : []), `${x.label} `, x.ref]);
    const useLedger = L !== undefined && L.view.report.result.durations !== undefined;
    const figures: Array<[string, Ref]> = useLedger
      ? [
          ['pairs', R.ledger('/durations/count')],
          ['min', R.ledger('/durations/min_ns', 'ns')],
          ['p50', R.ledger('/durations/p50_ns', 'ns')],
          ['p90', R.ledger('/durations/p90_ns', 'ns')],
          ['p99', R.ledger('/durations/p99_ns', 'ns')],
          ['max', R.ledger('/durations/max_ns', 'ns')],
        ]
      : [
          ['pairs', R.case('latency.count')],
          ['p50', R.case('latency.p50_ns', 'ns')],
          ['p90', R.case('latency.p90_ns', 'ns')],
          ['p99', R.case('latency.p99_ns', 'ns')],
          ['max', R.case('latency.max_ns', 'ns')],
        ];
    const from = useLedger ? (L!.view.report.result.durationsFrom === 'eligible-operations' ? 'admitted pairs of eligible operations' : 'all admitted pairs') : 'the case (latency.from)';
    blocks.push({ t: 'p', c: useLedger ? ['Durations of ', from, ' (percentiles within ±', R.ledger('/durations/relative_error', 'ratio'), ' relative).'] : ['Durations as the case reports them, from ', R.case('latency.from'), ' calls; coverage reported with them: ', R.case('latency.coverage_reported'), '.'] });
    blocks.push({ t: 'table', head: ['figure', 'value', 'coverage (what it is computed over)'], rows: figures.map(([label, ref]) => row(label, ref, covCell)) });
    if (L) {
      const w = L.view.report.result.ops ? (L.json.coverage_warnings as string[]) : [];
      if (w.length) blocks.push({ t: 'list', items: w.map((_, i) => [R.ledger(ptr('coverage_warnings', i))]) });
    }
    const marks = figures.filter(([l]) => l !== 'pairs' && l !== 'min').map(([label, ref]) => ({ label, ref }));
    // No bins and no known percentile: nothing to draw, so no picture.
    const drawable = useLedger ? L!.bins.length > 0 : marks.some((m) => m.ref.v !== undefined && m.ref.v !== null && m.ref.v !== 'unknown');
    if (drawable) blocks.push({
      t: 'figure',
      name: 'durations',
      caption: 'Duration distribution (log axis) with the coverage it was computed over printed on it: a percentile of admitted calls is not representative of missed, filtered or unfinished ones.',
      svg: histogramSvg({ bins: useLedger ? L!.bins : [], marks, coverage: cov, from }),
    });
    sections.push({ id: 'latency', title: 'Latency with its coverage', cites: 'Report coverage alongside latency', blocks });
  }

  // 9. Inputs.
  {
    const rows: Inline[][][] = [row('case file', R.verdict('/file')), row('case id', R.verdict('/id'))];
    if (L) {
      // The operations' figures one per row (the ledger's /ops object, not a dump of it).
      rows.push(row('operations in the ledger', R.ledger('/ops/total')), row('eligible operations', R.ledger('/ops/eligible')), row('operations outside the capture window', R.ledger('/ops/outside_window')), row('duplicate operation ids', R.ledger('/ops/duplicate_ids')));
      rows.push(row('probe records', R.ledger('/trace')), row('record format', R.ledger('/format')));
      rows.push(row('trace lines', R.ledger('/lines/trace')), row('ops lines', R.ledger('/lines/ops')), row('events lost by the ring buffer', R.ledger('/lost/events')), row('input warnings', R.ledger('/problems/count')));
      rows.push(row('capture window: first record (ns)', R.ledger('/window/first_ns')), row('last record (ns)', R.ledger('/window/last_ns')), row('capture stop (ns)', R.ledger('/window/stop_ns')));
    } else rows.push(row('probe records', 'none given (the case alone)'));
    const blocks: Block[] = [{ t: 'table', head: ['input', 'value'], rows }];
    if (L && (L.json.notes as string[]).length) blocks.push({ t: 'list', items: (L.json.notes as string[]).map((_, i) => [R.ledger(ptr('notes', i))]) });
    if (L) blocks.push({ t: 'p', c: ['The ledger results were applied to the case before it was evaluated, as ', { code: 'ledger --case' }, ' would write them.'] });
    sections.push({ id: 'inputs', title: 'Inputs', cites: 'Build an independent operation ledger', blocks });
  }

  return {
    title: ['Investigation report: ', R.verdict('/id')],
    sub: [...(c.title ? [R.case('title')] : []), ...(c.source ? [' — ', R.case('source')] : [])],
    sections,
  };
}
