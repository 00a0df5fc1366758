import { promises as fs } from 'node:fs';
import path from 'node:path';
import { factOf, readArtifact, type ArtifactReading, type CitedFact } from '../evidence/artifacts.js';
import { parseTraceText } from '../evidence/trace.js';

/** One operation of the lab's ledger (ops.jsonl, /work/shared ledger-format). */
export interface LabOp {
  op: string;
  task: number;
  submit_ns: number;
  done_ns: number | null;
  reaches_target: boolean;
  done_after_stop_ns?: number;
}

/** What one scenario's bundle shows, read with the project's own artifact parsers. */
export interface LabObservation {
  bundle: string;
  dir: string;
  release: string | undefined;
  possibleCpus: string | undefined;
  definition: string | undefined;
  /** The definition as kprobe_events read it back after registration. */
  readback: string | undefined;
  maxactive: number | undefined;
  registered: boolean;
  errorReason: string | undefined;
  /** kprobe_profile at the end snapshot: return event (hits = returns) and entry event. */
  returnHits: number | undefined;
  returnMisses: number | undefined;
  entryHits: number | undefined;
  /** The same while all calls were held at the gate (the controller's reading). */
  gated: { entry_hits: number | null; return_hits: number | null; return_misses: number | null; all_blocked: boolean } | undefined;
  /** Trace records of the ledger's tasks; `foreign` counts records of any other task. */
  entries: number | undefined;
  returns: number | undefined;
  foreign: number | undefined;
  ops: LabOp[];
  /** When the fixture stopped the capture (tracing_on 0), CLOCK_MONOTONIC ns; else undefined. */
  captureStopNs: number | undefined;
  /** Guest time from fresh registration to the end snapshot. */
  elapsedNs: number | undefined;
  /** The facts of each kernel artifact read, as the artifact table gives them (the same for a bundle and a write-up). */
  artifactFacts?: Partial<Record<'uname_r' | 'cpu_possible' | 'kprobe_events' | 'dynamic_events' | 'error_log' | 'kprobe_profile' | 'buffer_stats', CitedFact[]>>;
  problems: string[];
}

/** A file's text, or undefined when it cannot be read (a bundle file the guest did not write). */
export async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

interface ScenarioMeta {
  definition?: string;
  readback?: string;
  register_rc?: number[];
  gated?: LabObservation['gated'];
  elapsed_ns?: number;
  capture_stop_ns?: number | null;
}

/** Read one unpacked bundle directory (`scenario.json`, `ops.jsonl`, `start/`, `end/`, ...). */
export async function observeBundle(dir: string): Promise<LabObservation> {
  const problems: string[] = [];
  const bundle = path.basename(dir);
  const metaText = await readText(path.join(dir, 'scenario.json'));
  let meta: ScenarioMeta = {};
  if (metaText === undefined) problems.push('no scenario.json');
  else {
    try {
      meta = JSON.parse(metaText) as ScenarioMeta;
    } catch (err) {
      problems.push(`scenario.json: ${(err as Error).message}`);
    }
  }
  const ops: LabOp[] = [];
  const opsText = (await readText(path.join(dir, 'ops.jsonl'))) ?? '';
  for (const line of opsText.split('\n')) {
    if (line.trim() === '') continue;
    try {
      ops.push(JSON.parse(line) as LabOp);
    } catch {
      problems.push(`ops.jsonl: not JSON: ${line.slice(0, 60)}`);
    }
  }
  const snap = async (name: string): Promise<string | undefined> =>
    (await readText(path.join(dir, 'end', name))) ?? (await readText(path.join(dir, 'start', name)));

  // Every kernel artifact of the bundle is read through the one artifact table (src/evidence/artifacts.ts).
  const read = async (kind: Parameters<typeof readArtifact>[0], text: Promise<string | undefined>): Promise<ArtifactReading | undefined> => {
    const t = await text;
    return t === undefined ? undefined : readArtifact(kind, t);
  };
  const unameR = await read('uname', snap('uname_r'));
  const release = factOf(unameR, 'kernel.release')?.value as string | undefined;
  const possibleCpus = (await snap('cpu_possible'))?.trim();
  const artifactFacts: LabObservation['artifactFacts'] = {};
  if (unameR) artifactFacts.uname_r = unameR.facts;
  const cpus = await read('cpu_possible', snap('cpu_possible'));
  if (cpus) artifactFacts.cpu_possible = cpus.facts;

  const gate = (s: { event?: string; kind?: string } | undefined) => s?.event === 'kfix/gate' && s.kind === 'return';
  const registeredEvents = await read('kprobe_events', readText(path.join(dir, 'registered.kprobe_events')));
  if (registeredEvents) artifactFacts.kprobe_events = registeredEvents.facts;
  let maxactive = factOf(registeredEvents, 'probe.maxactive.effective', gate)?.value as number | undefined;
  // An fprobe exit event reads back only from dynamic_events, as `fN:kfix/gate pipe_read%return ...`
  // (`f:` with the default pool, or from 6.14 where there is none), read as a write-up reads it.
  const dynamic = await read('dynamic_events', readText(path.join(dir, 'registered.dynamic_events')));
  if (dynamic) artifactFacts.dynamic_events = dynamic.facts;
  maxactive ??= factOf(dynamic, 'probe.maxactive.effective', gate)?.value as number | undefined;
  const registered = (meta.register_rc ?? []).length > 0 && (meta.register_rc ?? []).every((rc) => rc === 0);

  let errorReason: string | undefined;
  const errors = (await read('error_log', readText(path.join(dir, 'error_log')))) ?? (await read('error_log', readText(path.join(dir, 'end', 'error_log'))));
  if (errors) {
    artifactFacts.error_log = errors.facts;
    // The reason as the kernel printed it, without the caret's word the reader appends.
    const last = errors.facts.filter((f) => f.path === 'probe.registration.reason').at(-1)?.value;
    if (typeof last === 'string') errorReason = last.replace(/ \(at "[^"]*"\)$/, '');
  }

  let returnHits: number | undefined;
  let returnMisses: number | undefined;
  let entryHits: number | undefined;
  const profile = await read('kprobe_profile', readText(path.join(dir, 'end', 'kprobe_profile')));
  if (profile) artifactFacts.kprobe_profile = profile.facts;
  const bufferStats = await read('buffer_stats', readText(path.join(dir, 'end', 'buffer_stats')));
  if (bufferStats) artifactFacts.buffer_stats = bufferStats.facts;
  if (profile !== undefined && registered) {
    const of = (event: string, p: string) => factOf(profile, p, (s) => s?.event === event)?.value as number | undefined;
    returnHits = of('gate', 'counters.hits');
    returnMisses = of('gate', 'counters.nmissed');
    entryHits = of('gate_entry', 'counters.hits');
  }

  let entries: number | undefined;
  let returns: number | undefined;
  let foreign: number | undefined;
  const traceText = await readText(path.join(dir, 'end', 'trace'));
  if (traceText !== undefined && registered) {
    const parsed = parseTraceText(traceText, { entryEvent: 'gate_entry', returnEvent: 'gate' });
    const tasks = new Set(ops.map((o) => o.task));
    const mine = parsed.records.filter((r) => tasks.has(r.pid));
    entries = mine.filter((r) => r.kind === 'entry').length;
    returns = mine.filter((r) => r.kind === 'return').length;
    foreign = parsed.records.length - mine.length;
    for (const p of parsed.problems) problems.push(`end/trace:${p.line}: expected ${p.expected}; got ${p.got}`);
  }

  return {
    bundle,
    dir,
    release,
    possibleCpus,
    definition: meta.definition,
    readback: meta.readback,
    maxactive,
    registered,
    errorReason,
    returnHits,
    returnMisses,
    entryHits,
    gated: meta.gated,
    entries,
    returns,
    foreign,
    ops,
    captureStopNs: meta.capture_stop_ns ?? undefined,
    elapsedNs: meta.elapsed_ns,
    artifactFacts,
    problems,
  };
}
