import type { LineProblem } from '../errors.js';
import { numberedLines, parseCounter } from './lines.js';

/** A `@map` or `@map[key]` line bpftrace prints when it exits: `@returns[nfsd]: 91`. */
export interface BpftraceMapValue {
  line: number;
  /** The map name without `@`; empty for the anonymous map `@`. */
  name: string;
  key?: string;
  value: number;
}

/** What one run of bpftrace printed. bpftrace itself reports no kretprobe miss count (kernel-facts §9). */
export interface BpftraceResult {
  /** `Attaching N probes...`: every probe of the script was attached. */
  attached?: { line: number; probes: number };
  /** `ERROR: ...` and `FATAL: ...` lines (a missing symbol, an attach failure, an unknown probe type). */
  errors: Array<{ line: number; message: string }>;
  /** Scalar map values; histogram buckets are left out. */
  maps: BpftraceMapValue[];
  /** `Lost N events`: perf ring-buffer losses of printf/output events. */
  lost: Array<{ line: number; count: number }>;
  problems: LineProblem[];
}

/**
 * Parse bpftrace's standard output and error. Lines bpftrace does not print itself (the
 * script's own printf output, histograms) are accepted and ignored: they are the user's text.
 */
export function parseBpftraceOutput(text: string): BpftraceResult {
  const out: BpftraceResult = { errors: [], maps: [], lost: [], problems: [] };
  for (const { no, text: line } of numberedLines(text)) {
    const t = line.trim();
    if (t === '') continue;
    const attach = /^Attaching ([0-9]+) probes?\.\.\.$/.exec(t);
    if (attach) {
      out.attached = { line: no, probes: Number(attach[1]) };
      continue;
    }
    // `FATAL: ...`: bpftrace gave up before attaching (0.17 on a probe type it does not know).
    const err = /^(?:\S+:[0-9]+:[0-9-]+: )?(?:ERROR|FATAL): (.*)$/.exec(t);
    if (err) {
      out.errors.push({ line: no, message: (err[1] ?? '').trim() });
      continue;
    }
    const lost = /^Lost ([0-9]+) events$/.exec(t);
    if (lost) {
      out.lost.push({ line: no, count: Number(lost[1]) });
      continue;
    }
    const map = /^@([A-Za-z0-9_]*)(?:\[(.*)\])?: (\S+)$/.exec(t);
    if (map) {
      const value = parseCounter(map[3] ?? '');
      if (value !== undefined) {
        const v: BpftraceMapValue = { line: no, name: map[1] ?? '', value };
        if (map[2] !== undefined) v.key = map[2];
        out.maps.push(v);
      }
    }
  }
  return out;
}

/** The probes a bpftrace program names: `kretprobe:vfs_read`, `fexit:nfsd:nfsd_dispatch`, `kr:f`. */
export function bpftraceProbes(script: string): Array<{ kind: 'kretprobe' | 'kprobe' | 'fexit' | 'fentry'; module?: string; symbol: string; index: number }> {
  const out: Array<{ kind: 'kretprobe' | 'kprobe' | 'fexit' | 'fentry'; module?: string; symbol: string; index: number }> = [];
  const kinds: Record<string, 'kretprobe' | 'kprobe' | 'fexit' | 'fentry'> = {
    kretprobe: 'kretprobe', kr: 'kretprobe', kprobe: 'kprobe', k: 'kprobe',
    fexit: 'fexit', kretfunc: 'fexit', fr: 'fexit', fentry: 'fentry', kfunc: 'fentry', f: 'fentry',
  };
  const re = /(?<![A-Za-z0-9_])(kretprobe|kprobe|kretfunc|kfunc|fexit|fentry|kr|k|fr|f):(?:([A-Za-z0-9_-]+):)?([A-Za-z_][A-Za-z0-9_.]*)/g;
  for (const m of script.matchAll(re)) {
    const kind = kinds[m[1] ?? ''];
    if (!kind) continue;
    const p: { kind: typeof kind; module?: string; symbol: string; index: number } = { kind, symbol: m[3] ?? '', index: m.index ?? 0 };
    if (m[2] !== undefined) p.module = m[2];
    out.push(p);
  }
  return out;
}

/**
 * Which probe counts into each keyed map entry of a script (`kprobe:f { @n[0] = count(); }
 * kretprobe:f { @n[1] = count(); }`): `@n[0]` → the entry probe, `@n[1]` → the return probe.
 */
export function countMapKinds(script: string): Map<string, 'entry' | 'return'> {
  const out = new Map<string, 'entry' | 'return'>();
  const probes = bpftraceProbes(script);
  probes.forEach((p, i) => {
    const body = script.slice(p.index, probes[i + 1]?.index ?? script.length);
    const kind = p.kind === 'kretprobe' || p.kind === 'fexit' ? 'return' : 'entry';
    for (const m of body.matchAll(/@([A-Za-z0-9_]*)\[([^\]]+)\]\s*=\s*count\(\)/g)) out.set(`${m[1]}[${(m[2] ?? '').trim()}]`, kind);
  });
  return out;
}

/** A clause's header without its predicate (`kretprobe:a, kretprobe:b /pid == 1/`), split into attach points. */
const headerPoints = (header: string): string[] =>
  header
    .replace(/\s\/.*$/s, '')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

/**
 * The attach points of the clause whose header holds the probe at `index` (`kr:a,kr:b {` gives
 * both): from the end of the previous clause, or the quote that opens the script, to its `{`.
 * Undefined when the line does not show the clause's `{`.
 */
export function bpftraceClausePoints(script: string, index: number): string[] | undefined {
  const start = Math.max(script.lastIndexOf('}', index), script.lastIndexOf("'", index), script.lastIndexOf('"', index)) + 1;
  const brace = script.indexOf('{', index);
  if (brace < 0) return undefined;
  return headerPoints(script.slice(start, brace));
}

/**
 * How many attach points a one-line `bpftrace -e '…'` script names in all of its clause headers
 * (BEGIN and END count: bpftrace's "Attaching N probes" counts them), when a wildcard names one of
 * them only; undefined when the script is not whole on the line, its braces do not balance, or more
 * than one point is a wildcard (then N cannot say which of them was expanded).
 */
export function bpftraceScriptPoints(line: string): number | undefined {
  const open = line.indexOf("'");
  const close = line.lastIndexOf("'");
  if (open < 0 || close <= open) return undefined;
  const body = line.slice(open + 1, close);
  const points: string[] = [];
  let depth = 0;
  let header = '';
  for (const ch of body) {
    if (ch === '{') {
      if (depth === 0) points.push(...headerPoints(header));
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) header = '';
    } else if (depth === 0) header += ch;
  }
  if (depth !== 0 || header.trim() !== '') return undefined;
  return points.filter((p) => /[*?]/.test(p)).length === 1 ? points.length : undefined;
}
