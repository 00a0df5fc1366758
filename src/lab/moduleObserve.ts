import path from 'node:path';
import { ERRNO_NAMES, parseDmesg } from '../evidence/dmesg.js';
import { readText, type LabOp } from './observe.js';

/** The lab module's debugfs `counters` file: `name value` per line (lab/module/krtfix.c). Pure. */
export function parseModuleCounters(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(\S+)\s*$/.exec(line);
    if (m) out.set(m[1] as string, m[2] as string);
  }
  return out;
}

/** A counters file read into numbers where they are numbers. */
export type CounterSnapshot = Record<string, number | string>;

function snapshotOf(text: string | undefined): CounterSnapshot | undefined {
  if (text === undefined) return undefined;
  const out: CounterSnapshot = {};
  for (const [k, v] of parseModuleCounters(text)) out[k] = /^-?\d+$/.test(v) ? Number(v) : v;
  return out;
}

/** What one module scenario's bundle shows: the module's own counters and records. */
export interface ModuleObservation {
  bundle: string;
  dir: string;
  release: string | undefined;
  possibleCpus: string | undefined;
  /** The insmod lines, in order (two for mod-reload). */
  loads: string[];
  registered: boolean;
  /**
   * A refused registration: the errno name register_kretprobe returned, read from the module's
   * kernel log line (`register.dmesg`) with the project's dmesg reader, and what insmod printed.
   */
  refused: { errno: string | undefined; code: number | undefined; insmod: string | undefined; dmesgLine: number | undefined } | undefined;
  /** Counters right after insmod, while every call was held, at start/end snapshot, after the release. */
  counters: { registered?: CounterSnapshot; gated?: CounterSnapshot; start?: CounterSnapshot; end?: CounterSnapshot; released?: CounterSnapshot };
  /** probe.jsonl records by kind (counter records apart). */
  records: { entry: number; return: number; filtered: number; counter: number; other: number };
  gated: { held: number | null; calls: number; all_blocked: boolean } | undefined;
  ops: LabOp[];
  captureStopNs: number | undefined;
  elapsedNs: number | undefined;
  problems: string[];
}

interface ModuleMeta {
  loads?: string[];
  register_rc?: number[];
  gated?: ModuleObservation['gated'];
  elapsed_ns?: number;
  capture_stop_ns?: number | null;
  register_err?: string;
}

/** JSON Lines into objects; a line that is not an object is a problem named by file and line. */
function jsonLines(text: string, name: string, problems: string[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
      else problems.push(`${name}:${i + 1}: not a JSON object`);
    } catch {
      problems.push(`${name}:${i + 1}: not JSON: ${line.slice(0, 60)}`);
    }
  });
  return out;
}

/** Read one unpacked module bundle (`scenario.json`, `ops.jsonl`, `probe.jsonl`, `start/`, `end/`). */
export async function observeModuleBundle(dir: string): Promise<ModuleObservation> {
  const problems: string[] = [];
  const bundle = path.basename(dir);
  let meta: ModuleMeta = {};
  const metaText = await readText(path.join(dir, 'scenario.json'));
  if (metaText === undefined) problems.push('no scenario.json');
  else {
    try {
      meta = JSON.parse(metaText) as ModuleMeta;
    } catch (err) {
      problems.push(`scenario.json: ${(err as Error).message}`);
    }
  }
  const ops = jsonLines((await readText(path.join(dir, 'ops.jsonl'))) ?? '', 'ops.jsonl', problems) as unknown as LabOp[];
  const records = { entry: 0, return: 0, filtered: 0, counter: 0, other: 0 };
  const probeText = await readText(path.join(dir, 'probe.jsonl'));
  if (probeText === undefined) problems.push('no probe.jsonl');
  for (const r of jsonLines(probeText ?? '', 'probe.jsonl', problems)) {
    const ev = r.ev;
    if (ev === 'entry' || ev === 'return' || ev === 'filtered' || ev === 'counter') records[ev]++;
    else records.other++;
  }
  const counters: ModuleObservation['counters'] = {};
  const put = (k: keyof ModuleObservation['counters'], s: CounterSnapshot | undefined): void => {
    if (s) counters[k] = s;
  };
  put('registered', snapshotOf(await readText(path.join(dir, 'registered.counters'))));
  put('gated', snapshotOf(await readText(path.join(dir, 'gated.counters'))));
  put('start', snapshotOf(await readText(path.join(dir, 'start', 'module_counters'))));
  put('end', snapshotOf(await readText(path.join(dir, 'end', 'module_counters'))));
  put('released', snapshotOf(await readText(path.join(dir, 'released.counters'))));
  for (const phase of ['start', 'end']) {
    const rc = (await readText(path.join(dir, `collect-${phase}.rc`)))?.trim();
    if (rc !== '0') problems.push(`collector ${phase} snapshot exited ${rc ?? '(no rc)'} (see collect-${phase}.log)`);
  }
  const snap = async (name: string): Promise<string | undefined> =>
    (await readText(path.join(dir, 'end', name))) ?? (await readText(path.join(dir, 'start', name)));
  const rcs = meta.register_rc ?? [];
  const registered = rcs.length > 0 && rcs.every((rc) => rc === 0);
  let refused: ModuleObservation['refused'];
  if (!registered) {
    const log = parseDmesg((await readText(path.join(dir, 'register.dmesg'))) ?? '');
    const report = log.reports.filter((r) => r.prefix === 'krtfix' && r.registerFailed).at(-1);
    const errno = report?.registerFailed?.errno;
    refused = { errno: errno === undefined ? undefined : (ERRNO_NAMES[errno] ?? `errno ${errno}`), code: errno, insmod: meta.register_err, dmesgLine: report?.line };
  }
  return {
    bundle,
    dir,
    release: (await snap('uname_r'))?.trim(),
    possibleCpus: (await snap('cpu_possible'))?.trim(),
    loads: meta.loads ?? [],
    registered,
    refused,
    counters,
    records,
    gated: meta.gated,
    ops,
    captureStopNs: meta.capture_stop_ns ?? undefined,
    elapsedNs: meta.elapsed_ns,
    problems,
  };
}
