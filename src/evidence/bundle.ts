import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { LineProblem } from '../errors.js';
import { InputError } from '../errors.js';
import { readArtifact, kindOfFile, switchedOffAt, type ArtifactReading, type CitedFact } from './artifacts.js';
import { lostOf, parseBufferStats } from './bufferStats.js';
import { parseBlacklist, blacklistEntryFor } from './blacklist.js';
import { parseErrorLog, type ErrorLogEntry } from './errorLog.js';
import { parseKprobeEventLine, parseKprobeEvents, type KprobeEventDef } from './kprobeEvents.js';
import { parseKprobeProfile, type KprobeProfileRow } from './kprobeProfile.js';
import { isArmed, parseKprobesList, type KprobesListEntry } from './kprobesList.js';
import { addTraceLoss, bareEventName, lostEventsOf, noTraceLoss, parseTraceLine, type TraceLoss, type TraceRecord } from './trace.js';
import { numberedLines } from './lines.js';
import { getPath, setPath } from '../dotted.js';
import { kindOf, readInputFile } from '../fsutil.js';

/** The two snapshots a collector run leaves in a bundle (collector/collect.sh). */
export const PHASES = ['start', 'end'] as const;
export type Phase = (typeof PHASES)[number];

/** Files of one snapshot by bundle-relative name within it (`kprobe_profile`, `events/kfix/gate/enable`). */
export type SnapshotFiles = Record<string, string>;

export interface BundleInput {
  start?: SnapshotFiles;
  end?: SnapshotFiles;
}

export interface BundleOptions {
  /** The return event, `GRP/EVENT`. Default: the manifest's first event that reads back as `r`. */
  event?: string | undefined;
  /** The separate entry event on the same function, `GRP/EVENT`. Default: the manifest's first `p` event on the target. */
  entryEvent?: string | undefined;
  /** The target symbol. Default: the manifest's `symbol`. */
  symbol?: string | undefined;
  /** The definition as the user wrote it (`r:kfix/gate pipe_read`), for `maxactive.requested`. */
  definition?: string | undefined;
  id?: string | undefined;
  title?: string | undefined;
  /** Free-text provenance of the case; default names the bundle. */
  source?: string | undefined;
  /**
   * The `event` was named by a user (`case from-bundle --event`): one that no snapshot knows is a
   * mistyped name, refused. A caller that names the event it set up (the lab) leaves this off:
   * there an absent event is the observation (a refused or module-only registration).
   */
  eventNamedByUser?: boolean;
}

/** A line the bundle reader skipped or a fact it could not settle, located in the bundle. */
export interface BundleProblem extends LineProblem {
  file: string;
}

/** A plain `kretprobe-case/v1` object (validated by src/case/schema.ts before it is written). */
export type CaseObject = Record<string, unknown>;

export interface BundleResult {
  case: CaseObject;
  problems: BundleProblem[];
}

interface Manifest {
  values: Map<string, { value: string; line: number }>;
}

function parseManifest(text: string | undefined): Manifest {
  const values = new Map<string, { value: string; line: number }>();
  if (text === undefined) return { values };
  for (const { no, text: line } of numberedLines(text)) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), { value: line.slice(eq + 1), line: no });
  }
  return { values };
}

/** What one snapshot says about the probe, each fact with the file:line it came from. */
interface SnapshotFacts {
  phase: Phase;
  manifest: Manifest;
  defs?: KprobeEventDef[];
  profile?: KprobeProfileRow[];
  list?: KprobesListEntry[];
  errors?: ErrorLogEntry[];
}

/** Sets a fact and records where it came from, or leaves both absent. */
class CaseBuilder {
  readonly data: CaseObject = {};
  readonly provenance: Record<string, string> = {};

  set(factPath: string, value: unknown, from: string | undefined): void {
    if (value === undefined) return;
    setPath(this.data, factPath, value);
    if (from !== undefined) this.provenance[factPath] = from;
  }
}

/**
 * Build a `kretprobe-case/v1` object from the parsed snapshots of a bundle. Pure: the texts come
 * in, nothing is read. A fact the bundle cannot show stays absent (unknown), never zero or false.
 */
export function caseFromSnapshots(input: BundleInput, opts: BundleOptions = {}): BundleResult {
  const problems = new CappedProblems();
  const report = (file: string, list: LineProblem[]): void => {
    for (const p of list) problems.push({ file, ...p });
  };
  const b = new CaseBuilder();
  const phases = PHASES.filter((p) => input[p] !== undefined);
  const last = phases[phases.length - 1];

  const facts: Partial<Record<Phase, SnapshotFacts>> = {};
  for (const phase of phases) {
    const files = input[phase] as SnapshotFiles;
    const f: SnapshotFacts = { phase, manifest: parseManifest(files.manifest) };
    // Every source the collector could not read is listed with why (collect.sh note_missing).
    if (files.missing !== undefined) {
      for (const { no, text: line } of numberedLines(files.missing)) {
        if (line.trim() === '') continue;
        const [name, where, why] = line.split('\t');
        if (!name || !where || !why?.trim()) problems.push({ file: `${phase}/missing`, line: no, expected: 'a missing entry NAME<TAB>PATH<TAB>why it could not be read', got: JSON.stringify(line.length > 60 ? `${line.slice(0, 59)}…` : line) });
      }
    }
    if (files.kprobe_events !== undefined) {
      const r = parseKprobeEvents(files.kprobe_events);
      report(`${phase}/kprobe_events`, r.problems);
      f.defs = r.events;
    }
    if (files.kprobe_profile !== undefined) {
      const r = parseKprobeProfile(files.kprobe_profile);
      report(`${phase}/kprobe_profile`, r.problems);
      f.profile = r.rows;
    }
    if (files.kprobes_list !== undefined) {
      const r = parseKprobesList(files.kprobes_list);
      report(`${phase}/kprobes_list`, r.problems);
      f.list = r.entries;
    }
    if (files.error_log !== undefined) {
      const r = parseErrorLog(files.error_log);
      report(`${phase}/error_log`, r.problems);
      f.errors = r.entries;
    }
    facts[phase] = f;
  }
  const lastFiles = last === undefined ? undefined : input[last];
  const lastFacts = last === undefined ? undefined : facts[last];

  // Which events and symbol: options first, then the manifest (the collector's arguments).
  const manifestOf = (key: string): { value: string; from: string } | undefined => {
    for (const phase of [...phases].reverse()) {
      const v = facts[phase]?.manifest.values.get(key);
      if (v !== undefined && v.value !== '') return { value: v.value, from: `${phase}/manifest:${v.line}` };
    }
    return undefined;
  };
  const manifestEvents = (manifestOf('events')?.value ?? '').split(/\s+/).filter((e) => e !== '');
  const allDefs = phases.flatMap((p) => facts[p]?.defs ?? []);
  const defFor = (ev: string): KprobeEventDef | undefined => allDefs.find((d) => d.event !== undefined && `${d.group}/${d.event}` === ev);
  const returnEvent = opts.event ?? manifestEvents.find((ev) => defFor(ev)?.kind === 'r') ?? manifestEvents[0];
  const symbolHint = opts.symbol ?? manifestOf('symbol')?.value ?? (returnEvent ? defFor(returnEvent)?.symbol : undefined);
  const entryEvent =
    opts.entryEvent ?? manifestEvents.find((ev) => ev !== returnEvent && defFor(ev)?.kind === 'p' && (symbolHint === undefined || defFor(ev)?.symbol === symbolHint));

  // Kernel identity: from the newest snapshot whose one-line file gives a value, read through the artifact table.
  const readings = new Map<string, ArtifactReading>();
  const reading = (phase: Phase, name: string, extra: { release?: string; target?: string } = {}): ArtifactReading | undefined => {
    const text = (input[phase] as SnapshotFiles)[name];
    const kind = kindOfFile(name);
    if (text === undefined || kind === undefined) return undefined;
    const key = `${phase}/${name}`;
    let r = readings.get(key);
    if (!r) {
      r = readArtifact(kind, text, kind === 'kernel-config' ? { ...extra, collected: true } : extra);
      readings.set(key, r);
      // The snapshot loop above already reported the problems of the files it parsed for their structure.
      if (!STRUCTURED.has(name)) report(key, r.problems);
    }
    return r;
  };
  const cite = (phase: Phase, name: string, f: CitedFact): string => `${phase}/${name}:${f.line}`;
  const fromNewest = (names: string[], fact: string): void => {
    for (const name of names) {
      for (const phase of [...phases].reverse()) {
        const f = reading(phase, name)?.facts.find((x) => x.path === fact);
        if (f) {
          b.set(fact, f.value, cite(phase, name, f));
          return;
        }
      }
    }
  };
  fromNewest(['uname_r', 'proc_version'], 'kernel.release');
  fromNewest(['uname_m'], 'kernel.arch');
  fromNewest(['cpu_possible'], 'kernel.possible_cpus');
  fromNewest(['proc_version'], 'kernel.version');
  // The config says it directly; the version string's preemption token says the same (preemptionOf).
  fromNewest(['config', 'proc_version'], 'kernel.preemption');
  const release = getPath(b.data, 'kernel.release') as string | undefined;

  // The probe: a tracefs event is what the collector reads.
  const where = (phase: Phase, file: string, line: number): string => `${phase}/${file}:${line}`;
  const defAt = (phase: Phase | undefined, ev: string | undefined): KprobeEventDef | undefined =>
    phase === undefined || ev === undefined ? undefined : facts[phase]?.defs?.find((d) => d.event !== undefined && `${d.group}/${d.event}` === ev);
  // The event asked for must be somewhere: a name that no snapshot's definitions, profile or
  // error_log knows is a mistyped --event, not a probe with no counters (one line, exit 2).
  const knows = (ev: string): boolean => phases.some((p) => defAt(p, ev) !== undefined || facts[p]?.profile?.some((r) => r.event === bareEventName(ev)) || findError(facts[p]?.errors ?? [], ev, undefined) !== undefined);
  if (opts.event !== undefined && opts.eventNamedByUser && !knows(opts.event)) {
    const seen = [...new Set(phases.flatMap((p) => [...(facts[p]?.defs ?? []).flatMap((d) => (d.event === undefined ? [] : [`${d.group}/${d.event}`])), ...(facts[p]?.profile ?? []).map((r) => r.event)]))];
    const where = phases.find((p) => facts[p]?.defs !== undefined || facts[p]?.profile !== undefined) ?? last;
    throw new InputError({ file: `${where ?? 'end'}/${facts[where ?? 'end']?.defs !== undefined ? 'kprobe_events' : 'kprobe_profile'}` }, `the --event ${opts.event} in a snapshot's kprobe_events, kprobe_profile or error_log`, seen.length ? `only ${seen.slice(0, 8).join(', ')}` : 'no events at all');
  }
  // Each snapshot that lacks the event says so: its counters, or its arming, stay unknown for a reason.
  for (const phase of phases) {
    if (returnEvent === undefined) break;
    const f = facts[phase]!;
    const def = defAt(phase, returnEvent);
    if (def && f.profile !== undefined && f.profile.length > 0 && !f.profile.some((r) => r.event === bareEventName(returnEvent))) {
      problems.push({ file: `${phase}/kprobe_profile`, line: 0, expected: `a row for ${returnEvent}`, got: `none: counters.${phase} left unknown` });
    }
    if (!def && f.defs !== undefined && findError(f.errors ?? [], returnEvent, symbolHint) === undefined) {
      problems.push({ file: `${phase}/kprobe_events`, line: 0, expected: `the definition of ${returnEvent}`, got: 'absent and no error_log entry for it: the probe was not armed in this snapshot' });
    }
  }

  const lastDef = defAt(last, returnEvent);
  const anyDef = lastDef ?? (returnEvent ? defFor(returnEvent) : undefined);
  const anyDefPhase = lastDef ? last : phases.find((p) => defAt(p, returnEvent) !== undefined);
  const eventsFrom = manifestOf('events')?.from;
  const defFrom = anyDef && anyDefPhase ? where(anyDefPhase, 'kprobe_events', anyDef.line) : undefined;
  if (returnEvent !== undefined) b.set('probe.interface', 'tracefs', defFrom ?? (opts.event !== undefined ? '--event' : eventsFrom));
  // The return event's name, so a reader can check the counters come from its own line.
  if (returnEvent !== undefined) b.set('probe.event', returnEvent, defFrom ?? (opts.event !== undefined ? '--event' : eventsFrom));
  const target = anyDef?.symbol ?? anyDef?.address ?? symbolHint;
  b.set('probe.target', target, defFrom ?? (opts.symbol !== undefined ? '--symbol' : manifestOf('symbol')?.from));
  // The event under investigation is a p: one only when the bundle has no r: event (or --event
  // names it): an entry probe, with no pool and no return (probe.kind; a return probe is the default).
  if (anyDef?.kind === 'p' && defFrom !== undefined) b.set('probe.kind', 'entry', defFrom);

  // Registration: read back in kprobe_events means the write succeeded; otherwise error_log may say why.
  const eventsReadable = lastFacts?.defs !== undefined;
  if (lastDef && last) {
    b.set('probe.registration.result', 'ok', where(last, 'kprobe_events', lastDef.line));
  } else if (eventsReadable && last && returnEvent) {
    const err = findError(lastFacts?.errors ?? [], returnEvent, target);
    const facts = err ? reading(last, 'error_log', release === undefined ? {} : { release })?.facts.filter((f) => f.line === err.line) : undefined;
    const result = facts?.find((f) => f.path === 'probe.registration.result');
    const reason = facts?.find((f) => f.path === 'probe.registration.reason');
    if (err && result) {
      b.set('probe.registration.result', result.value, cite(last, 'error_log', result));
      if (reason) b.set('probe.registration.reason', reason.value, cite(last, 'error_log', reason));
      if (result.value === 'error') problems.push({ file: `${last}/error_log`, line: err.line, expected: 'an error_log reason whose errno this release decides', got: JSON.stringify(err.reason) });
    }
  }

  // Module: MOD:SYM in the definition, or the [mod] column of kallsyms; no module there means vmlinux.
  const kallsyms = (() => {
    for (const phase of [...phases].reverse()) {
      if (target === undefined) return undefined;
      const r = reading(phase, 'kallsyms', { target });
      if (r) return { phase, r };
    }
    return undefined;
  })();
  if (anyDef?.module !== undefined && anyDefPhase) b.set('probe.target_module', anyDef.module, where(anyDefPhase, 'kprobe_events', anyDef.line));
  else {
    const own = kallsyms?.r.facts.find((f) => f.path === 'probe.target_module');
    if (own && kallsyms) b.set('probe.target_module', own.value, cite(kallsyms.phase, 'kallsyms', own));
  }

  // Epochs: one registration unless the definition changed, the event vanished or appeared, a
  // counter went down, or the kernel rebooted between the snapshots.
  const startFacts = facts.start;
  const endFacts = facts.end;
  const profileRow = (f: SnapshotFacts | undefined, ev: string | undefined, file: string): KprobeProfileRow | undefined => {
    if (!f?.profile || ev === undefined) return undefined;
    const name = bareEventName(ev);
    const rows = f.profile.filter((r) => r.event === name);
    if (rows.length > 1) {
      problems.push({ file, line: rows[1]?.line ?? 0, expected: `one kprobe_profile row for ${name} (the file shows no group)`, got: `${rows.length} rows` });
      return undefined;
    }
    return rows[0];
  };
  const newEpoch = (ev: string | undefined): { changed: boolean; why?: string } => {
    if (!startFacts || !endFacts || ev === undefined) return { changed: false };
    const s = defAt('start', ev);
    const e = defAt('end', ev);
    if (startFacts.defs && endFacts.defs && (s === undefined) !== (e === undefined)) return { changed: true, why: s ? 'the event vanished' : 'the event appeared' };
    if (s && e && s.raw !== e.raw) return { changed: true, why: 'the definition changed' };
    const rs = profileRow(startFacts, ev, 'start/kprobe_profile');
    const re = profileRow(endFacts, ev, 'end/kprobe_profile');
    if (rs && re && (re.hits < rs.hits || re.misses < rs.misses)) return { changed: true, why: 'a counter went down' };
    const us = startFacts.manifest.values.get('uptime_s')?.value;
    const ue = endFacts.manifest.values.get('uptime_s')?.value;
    if (us && ue && Number(ue) < Number(us)) return { changed: true, why: 'the machine rebooted' };
    const ks = startFacts.manifest.values.get('release')?.value;
    const ke = endFacts.manifest.values.get('release')?.value;
    if (ks && ke && ks !== ke) return { changed: true, why: 'the kernel changed' };
    return { changed: false };
  };
  const retEpoch = newEpoch(returnEvent);
  const epochOf = (phase: Phase): string => (phase === 'end' && retEpoch.changed ? 'reg-2' : 'reg-1');
  const epochFrom = (phase: Phase): string | undefined => {
    const d = defAt(phase, returnEvent);
    return d ? where(phase, 'kprobe_events', d.line) : eventsFrom;
  };
  if (last && lastDef) b.set('probe.registration.epoch', epochOf(last), epochFrom(last));
  if (retEpoch.changed) problems.push({ file: 'end/kprobe_events', line: defAt('end', returnEvent)?.line ?? 0, expected: 'one registration across both snapshots', got: `${retEpoch.why ?? 'a new registration'}: start and end are different epochs` });

  // Armed: registered (in kprobes/list as r on the target), not [DISABLED]/[GONE], the event
  // enabled, and kprobes globally enabled — in every snapshot that shows it.
  let armed: boolean | undefined;
  let armedFrom: string | undefined;
  for (const phase of phases) {
    const f = facts[phase] as SnapshotFacts;
    const files = input[phase] as SnapshotFiles;
    const a = armedIn(phase, f, files, returnEvent, anyDef, target);
    if (a.value === undefined) continue;
    // A later snapshot that agrees is the better citation; one that shows the probe not armed wins.
    if (armed === undefined || armed === a.value || (armed && !a.value)) {
      armed = a.value;
      armedFrom = a.from;
    }
  }
  b.set('probe.armed', armed, armedFrom);

  // maxactive: what the kernel reads back, and what the user asked for when we know it.
  if (opts.definition !== undefined) {
    const d = parseKprobeEventLine(opts.definition);
    if (typeof d !== 'string' && d.maxactive !== undefined) b.set('probe.maxactive.requested', d.maxactive, '--definition');
  }
  if (lastDef?.kind === 'r' && lastDef.maxactive !== undefined && last) b.set('probe.maxactive.effective', lastDef.maxactive, where(last, 'kprobe_events', lastDef.line));

  // Coverage: blacklist and clones, only when the files were read.
  if (target !== undefined && /^[A-Za-z_]/.test(target)) {
    for (const phase of [...phases].reverse()) {
      const files = input[phase] as SnapshotFiles;
      if (files.kprobes_blacklist === undefined) continue;
      const r = parseBlacklist(files.kprobes_blacklist);
      report(`${phase}/kprobes_blacklist`, r.problems);
      const hit = blacklistEntryFor(r.entries, target);
      const total = facts[phase]?.manifest.values.get('kprobes_blacklist_total');
      if (hit) b.set('coverage.blacklisted', true, where(phase, 'kprobes_blacklist', hit.line));
      // An empty filtered copy says "not listed" only if the whole list was read and had lines.
      else if (total && Number(total.value) > 0) b.set('coverage.blacklisted', false, where(phase, 'manifest', total.line));
      break;
    }
    const clones = kallsyms?.r.facts.find((f) => f.path === 'coverage.clones');
    if (clones && kallsyms) b.set('coverage.clones', clones.value, cite(kallsyms.phase, 'kallsyms', clones));
  }

  // Counters: kprobe_profile's miss column of a return event is kp.nmissed + rp.nmissed.
  const counterSnapshot = (phase: Phase): void => {
    const row = profileRow(facts[phase], returnEvent, `${phase}/kprobe_profile`);
    if (!row) return;
    const at = reading(phase, 'kprobe_profile')?.facts.filter((f) => f.line === row.line) ?? [];
    const from = where(phase, 'kprobe_profile', row.line);
    b.set(`counters.${phase}.epoch`, epochOf(phase), epochFrom(phase));
    b.set(`counters.${phase}.nmissed`, at.find((f) => f.path === 'counters.nmissed')?.value, from);
    b.set(`counters.${phase}.hits`, at.find((f) => f.path === 'counters.hits')?.value, from);
    if (returnEvent !== undefined) b.set('counters.event', returnEvent, from);
  };
  for (const phase of phases) counterSnapshot(phase);
  if (b.data.counters) b.set('counters.source', 'kprobe_profile', last ? `${last}/kprobe_profile` : undefined);

  // Entry events: hits of the separate entry kprobe within one of its registrations.
  // A re-registration resets every event the user re-added, so a new return-event epoch makes the entry delta suspect too.
  if (entryEvent !== undefined && startFacts && endFacts && !retEpoch.changed && !newEpoch(entryEvent).changed) {
    const rs = profileRow(startFacts, entryEvent, 'start/kprobe_profile');
    const re = profileRow(endFacts, entryEvent, 'end/kprobe_profile');
    if (rs && re) b.set('ledger.entry_events', re.hits - rs.hits, `start/kprobe_profile:${rs.line},end/kprobe_profile:${re.line}`);
  }

  // What the ring buffer lost during the test, by its own per-CPU counts (collector buffer_stats):
  // read after the trace, they also count what it lost while the trace was read.
  const stats = last === undefined ? undefined : bufferStatsLoss(input, last, report);
  if (stats?.lost !== undefined) b.set('ledger.lost_events', stats.lost, stats.cite);

  // Trace records in the last snapshot, after the last record the start snapshot already held.
  // Only for a defined event: a failed registration has no records to count, not zero of them.
  if (lastFiles?.trace !== undefined && last && returnEvent !== undefined && lastDef) {
    const names = { returnEvent: bareEventName(returnEvent), entryEvent: entryEvent === undefined ? undefined : bareEventName(entryEvent) };
    const parsed = traceRecords(lastFiles.trace, names);
    report(`${last}/trace`, parsed.problems);
    let cutoff = -1;
    if (last === 'end' && input.start?.trace !== undefined) {
      const start = traceRecords(input.start.trace, names);
      for (const r of start.records) cutoff = Math.max(cutoff, r.record.tsNs);
      // The header's overwritten count runs from the buffer's last clearing: what the test lost is
      // the rise since the start snapshot (a fall means the buffer was cleared between: the end's count).
      const [s0, s1] = [start.loss.overwritten, parsed.loss.overwritten];
      if (s0 !== undefined && s1 !== undefined && s1 >= s0) parsed.loss.overwritten = s1 - s0;
    }
    const isMine = (name: string): boolean => bareEventName(name) === names.returnEvent || bareEventName(name) === names.entryEvent;
    const records = parsed.records.filter((r) => r.record.tsNs > cutoff && isMine(r.record.event));
    const bound = Number(lastFacts?.manifest.values.get('trace_lines')?.value ?? NaN);
    // A raw observation: how many events the buffer lost. Its own counts (above) when the
    // snapshots have them; else what the trace text shows ([LOST N EVENTS] markers, the header's
    // overwritten entries), unknown when a marker gives no count.
    const lost = stats ? stats.lost : lostEventsOf(parsed.loss);
    if (!stats && lost !== undefined) b.set('ledger.lost_events', lost, lost > 0 ? `${last}/trace:${parsed.lostLine}` : `${last}/trace`);
    if (lost === undefined || lost > 0) {
      const why = stats ? ` (${stats.cite})` : lost === undefined ? ' (a [LOST EVENTS] marker gives no count)' : '';
      problems.push({ file: `${last}/trace`, line: parsed.lostLine, expected: 'a trace without lost events', got: `${lost ?? 'some'} events lost${why}: record counts left unknown` });
    } else if (parsed.lines >= bound && !parsed.records.some((r) => r.record.tsNs <= cutoff)) {
      // A tail at the bound may have cut records off; only an overlap with the start snapshot's last record proves it did not.
      problems.push({ file: `${last}/trace`, line: parsed.lines, expected: `a trace shorter than the --trace-lines bound (${bound})`, got: 'a cut tail: record counts left unknown' });
    } else {
      const span = (rs: typeof records): string =>
        rs.length === 0 ? `${last}/trace` : `${last}/trace:${rs[0]?.line ?? 0}-${rs[rs.length - 1]?.line ?? 0}`;
      const entries = records.filter((r) => r.record.kind === 'entry' && bareEventName(r.record.event) === names.entryEvent);
      const returns = records.filter((r) => r.record.kind === 'return' && bareEventName(r.record.event) === names.returnEvent);
      // A separate entry kprobe fires for every call, also those the return probe missed: its
      // records are entry events, not admitted instances (those have no record of their own in
      // tracefs). The profile delta above is preferred; the trace count stands in without it.
      if (entryEvent !== undefined && !retEpoch.changed && !newEpoch(entryEvent).changed && getPath(b.data, 'ledger.entry_events') === undefined) b.set('ledger.entry_events', entries.length, span(entries));
      b.set('ledger.returns', returns.length, span(returns));
    }
  }

  const id = opts.id ?? 'bundle';
  const start = facts.start?.manifest.values.get('time_utc')?.value;
  const end = facts.end?.manifest.values.get('time_utc')?.value;
  const header: CaseObject = {
    format: 'kretprobe-case/v1',
    id,
    title: opts.title ?? `Bundle: ${returnEvent ?? 'unknown event'} on ${target ?? 'unknown target'}`,
    source: opts.source ?? `case from-bundle${start ? `; start ${start}` : ''}${end ? `; end ${end}` : ''}`,
  };
  const out: CaseObject = ordered({ ...header, ...b.data }, CASE_ORDER);
  if (out.probe) out.probe = ordered(out.probe as CaseObject, PROBE_ORDER);
  if (out.counters) out.counters = ordered(out.counters as CaseObject, ['source', 'start', 'end']);
  if (Object.keys(b.provenance).length > 0) out.provenance = b.provenance;
  return { case: out, problems: problems.list() };
}

/** Files the bundle also parses for their structure (definitions, rows, entries: epochs and arming). */
const STRUCTURED = new Set(['kprobe_events', 'kprobe_profile', 'kprobes_list', 'error_log']);

/** Warnings kept per bundle file; the rest are counted in one last line for that file. */
export const MAX_PROBLEMS_PER_FILE = 10;

/** Bundle problems with at most MAX_PROBLEMS_PER_FILE kept per file, the rest only counted (memory stays small). */
class CappedProblems {
  private readonly kept: BundleProblem[] = [];
  private readonly perFile = new Map<string, number>();

  push(p: BundleProblem): void {
    const n = (this.perFile.get(p.file) ?? 0) + 1;
    this.perFile.set(p.file, n);
    if (n <= MAX_PROBLEMS_PER_FILE) this.kept.push(p);
  }

  list(): BundleProblem[] {
    const out = [...this.kept];
    for (const [file, n] of this.perFile) {
      if (n > MAX_PROBLEMS_PER_FILE) out.push({ file, line: 0, expected: `at most ${MAX_PROBLEMS_PER_FILE} warnings shown per file`, got: `${n - MAX_PROBLEMS_PER_FILE} more in this file` });
    }
    return out;
  }
}

/** case-format.md order, so a built case reads like a hand-written one. */
const CASE_ORDER = ['format', 'id', 'title', 'source', 'kernel', 'probe', 'coverage', 'concurrency', 'counters', 'ledger'];
const PROBE_ORDER = ['interface', 'target', 'target_module', 'registration', 'armed', 'maxactive'];

function ordered(obj: CaseObject, order: string[]): CaseObject {
  const out: CaseObject = {};
  for (const k of order) if (k in obj) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out)) out[k] = v;
  return out;
}

/**
 * What the ring buffer lost during the test by its own per-CPU counts (collector `buffer_stats`):
 * the rise of each CPU's overrun + commit overrun + dropped events from the start snapshot to the
 * `last` one, or the last one's counts alone without a start snapshot (since the buffer was last
 * cleared). Undefined without the file; `lost` undefined when a count is missing or fell (the
 * buffer was cleared during the test, and the records with it).
 */
function bufferStatsLoss(input: BundleInput, last: Phase, report: (file: string, list: LineProblem[]) => void): { lost: number | undefined; cite: string } | undefined {
  const endText = input[last]?.buffer_stats;
  if (endText === undefined) return undefined;
  const end = parseBufferStats(endText);
  report(`${last}/buffer_stats`, end.problems);
  const startText = last === 'end' ? input.start?.buffer_stats : undefined;
  const start = startText === undefined ? undefined : parseBufferStats(startText);
  const cite = `${start ? 'start/buffer_stats,' : ''}${last}/buffer_stats`;
  if (end.cpus.length === 0) return { lost: undefined, cite };
  let lost = 0;
  for (const [i, c] of end.cpus.entries()) {
    const now = lostOf(c);
    if (now === undefined) return { lost: undefined, cite };
    if (!start) {
      lost += now;
      continue;
    }
    const before = start.cpus.find((x, k) => (c.cpu !== undefined ? x.cpu === c.cpu : k === i));
    const then = before ? lostOf(before) : undefined;
    if (then === undefined || now < then) {
      report(`${last}/buffer_stats`, [{ line: c.line, expected: 'counts that do not fall from the start snapshot (a buffer never cleared during the test)', got: `${then === undefined ? 'no start count' : `${then} at the start, ${now} at the end`} for CPU ${c.cpu ?? i}: the loss is unknown` }]);
      return { lost: undefined, cite };
    }
    lost += now - then;
  }
  return { lost, cite };
}

/** Trace records with their line numbers (src/evidence/trace.ts parses each line), and what the text shows lost. */
function traceRecords(
  text: string,
  opts: { entryEvent?: string | undefined; returnEvent?: string | undefined },
): { records: Array<{ line: number; record: TraceRecord }>; problems: LineProblem[]; loss: TraceLoss; lostLine: number; lines: number } {
  const out = { records: [] as Array<{ line: number; record: TraceRecord }>, problems: [] as LineProblem[], loss: noTraceLoss(), lostLine: 0, lines: 0 };
  for (const { no, text: line } of numberedLines(text)) {
    out.lines = no;
    const r = parseTraceLine(line, opts);
    if (r === null || r.kind === 'other') continue;
    if (r.kind === 'problem') out.problems.push({ line: no, expected: r.expected, got: r.got });
    else if (r.kind === 'lost' || r.kind === 'header') {
      addTraceLoss(out.loss, r);
      if (out.lostLine === 0 && (r.kind === 'lost' || r.written > r.inBuffer)) out.lostLine = no;
    } else out.records.push({ line: no, record: r });
  }
  return out;
}

function findError(entries: ErrorLogEntry[], event: string, target: string | undefined): ErrorLogEntry | undefined {
  for (const e of [...entries].reverse()) {
    if (e.command === undefined) continue;
    const d = parseKprobeEventLine(e.command);
    if (typeof d !== 'string') {
      if (d.event !== undefined && `${d.group}/${d.event}` === event) return e;
      if (d.eventDefaulted && target !== undefined && d.symbol === target) return e;
    } else if (e.command.includes(event)) return e;
  }
  return undefined;
}

function armedIn(
  phase: Phase,
  f: SnapshotFacts,
  files: SnapshotFiles,
  event: string | undefined,
  def: KprobeEventDef | undefined,
  target: string | undefined,
): { value?: boolean; from?: string } {
  if (event === undefined) return {};
  const own = f.defs?.find((d) => d.event !== undefined && `${d.group}/${d.event}` === event);
  if (f.defs && !own) return { value: false, from: `${phase}/kprobe_events` };
  const enable = files[`events/${event}/enable`];
  const enableOff = enable === undefined ? undefined : switchedOffAt(enable);
  if (enableOff !== undefined) return { value: false, from: `${phase}/events/${event}/enable:${enableOff}` };
  const globally = files.kprobes_enabled;
  const globallyOff = globally === undefined ? undefined : switchedOffAt(globally);
  if (globallyOff !== undefined) return { value: false, from: `${phase}/kprobes_enabled:${globallyOff}` };
  if (!f.list || target === undefined) return {};
  const kind = (own ?? def)?.kind === 'p' ? 'k' : 'r';
  const listed = f.list.filter((e) => e.symbol === target && e.type === kind);
  if (listed.length === 0) return { value: false, from: `${phase}/kprobes_list` };
  const live = listed.find(isArmed);
  if (!live) return { value: false, from: `${phase}/kprobes_list:${listed[0]?.line ?? 1}` };
  if (enable === undefined) return {};
  return { value: true, from: `${phase}/kprobes_list:${live.line}` };
}

/** Files a snapshot may hold (collector/collect.sh), besides `events/GRP/EVENT/enable`. */
const SNAPSHOT_FILES = [
  'manifest',
  'missing',
  'uname_r',
  'uname_m',
  'proc_version',
  'cpu_possible',
  'config',
  'kprobe_events',
  'kprobe_profile',
  'error_log',
  'trace',
  'tracing_on',
  'kprobes_list',
  'kprobes_enabled',
  'kprobes_blacklist',
  'kallsyms',
];

/** Largest snapshot file read: the collector bounds the trace tail far below this. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Read one snapshot directory into its files; absent files stay absent. */
export async function readSnapshot(dir: string): Promise<SnapshotFiles> {
  const files: SnapshotFiles = {};
  for (const name of SNAPSHOT_FILES) {
    const text = await readIfPresent(path.join(dir, name));
    if (text !== undefined) files[name] = text;
  }
  const eventsDir = path.join(dir, 'events');
  let groups: string[] = [];
  try {
    groups = await fs.readdir(eventsDir);
  } catch {
    groups = [];
  }
  for (const group of groups.sort()) {
    let events: string[] = [];
    try {
      events = await fs.readdir(path.join(eventsDir, group));
    } catch {
      continue;
    }
    for (const event of events.sort()) {
      const text = await readIfPresent(path.join(eventsDir, group, event, 'enable'));
      if (text !== undefined) files[`events/${group}/${event}/enable`] = text;
    }
  }
  return files;
}

/** A snapshot file, or undefined when it is absent; anything else in its place (a directory, a FIFO, a link loop) is refused. */
async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readInputFile(file, 'snapshot file', MAX_FILE_BYTES, { lossy: true });
  } catch (err) {
    if (err instanceof InputError && err.got === 'no such file') return undefined;
    throw err;
  }
}

/**
 * Read a bundle directory (`DIR/start`, `DIR/end`, as collector/collect.sh writes it) and build
 * its case. At least one snapshot must be there.
 */
export async function caseFromBundle(dir: string, opts: BundleOptions = {}): Promise<BundleResult> {
  let stat;
  try {
    stat = await fs.stat(dir);
  } catch {
    throw new InputError({ file: dir }, 'a bundle directory (DIR/start, DIR/end from collect.sh)', 'no such directory');
  }
  if (!stat.isDirectory()) throw new InputError({ file: dir }, 'a bundle directory (DIR/start, DIR/end from collect.sh)', 'a file');
  const input: BundleInput = {};
  for (const phase of PHASES) {
    const sub = path.join(dir, phase);
    const s = await fs.stat(sub).catch(() => undefined);
    if (s === undefined) continue;
    if (!s.isDirectory()) throw new InputError({ file: sub }, `a ${phase}/ snapshot directory (or none)`, kindOf(s));
    const files = await readSnapshot(sub);
    // collect.sh writes manifest and missing into a temporary directory and renames it into
    // place only when the snapshot is complete: without them this is not a whole snapshot.
    for (const name of ['manifest', 'missing']) {
      if (files[name] === undefined) throw new InputError({ file: path.join(sub, name) }, `a complete ${phase} snapshot (collect.sh writes ${name} in every snapshot it publishes)`, `no ${name} file`);
    }
    input[phase] = files;
  }
  if (!input.start && !input.end) throw new InputError({ file: dir }, 'a start/ or end/ snapshot directory inside the bundle', 'neither');
  const id = opts.id ?? kebab(path.basename(path.resolve(dir)));
  return caseFromSnapshots(input, { ...opts, id, source: opts.source ?? undefined });
}

function kebab(name: string): string {
  const k = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return k === '' ? 'bundle' : k;
}
