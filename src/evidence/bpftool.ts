import type { LineProblem } from '../errors.js';
import { shown } from '../errors.js';
import { numberedLines, parseCounter, problem } from './lines.js';

/** A BPF link as `bpftool link show` describes it; kprobe fields only for kprobe perf links. */
export interface BpfLink {
  line: number;
  id: number;
  type: string;
  progId?: number;
  kprobe?: {
    retprobe: boolean;
    func?: string;
    offset: number;
    address?: string;
    /**
     * trace_kprobe_missed(): kp.nmissed + rp.nmissed, the same sum as kprobe_profile. Plain
     * output prints it only when nonzero, so an absent word reads 0 with `missedPrinted` false;
     * JSON from a bpftool or kernel older than 6.7 has no field, and then it stays absent.
     */
    missed?: number;
    missedPrinted: boolean;
  };
  /**
   * A kprobe_multi link (`kretprobe.multi  func_cnt N  missed M`, JSON `retprobe`, `func_cnt`,
   * `missed`, `funcs[].func`): one link, one fprobe, one miss count for every function.
   * `missed` as for `kprobe`: absent before 6.7 (JSON), 0 when plain output leaves it out.
   */
  multi?: { retprobe: boolean; funcCnt?: number; funcs: string[]; missed?: number; missedPrinted: boolean };
  /** A tracing link (fentry/fexit, BPF trampoline): `attach_type trace_fexit`. It has no miss count. */
  tracing?: { attachType?: string };
}

export interface BpftoolResult {
  links: BpfLink[];
  problems: LineProblem[];
}

/** Parse plain `bpftool link show` output. Detail lines of other link types are kept out. */
export function parseBpftoolLinks(text: string): BpftoolResult {
  const links: BpfLink[] = [];
  const problems: LineProblem[] = [];
  let current: BpfLink | undefined;
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const header = /^([0-9]+): (\S+)(?:\s+prog ([0-9]+))?/.exec(line);
    if (header) {
      current = { line: no, id: Number(header[1]), type: header[2] ?? '' };
      if (header[3] !== undefined) current.progId = Number(header[3]);
      links.push(current);
      continue;
    }
    if (current && /^\s/.test(line)) {
      const k = /^\s+(kprobe|kretprobe) (?:([0-9a-fA-F]+) )?([A-Za-z_.$][A-Za-z0-9_.$]*)(?:\+(0x[0-9a-fA-F]+))?((?:\s{2}\S+ \S+)*)\s*$/.exec(line);
      if (k) {
        const kp: NonNullable<BpfLink['kprobe']> = { retprobe: k[1] === 'kretprobe', func: k[3] ?? '', offset: k[4] ? parseInt(k[4], 16) : 0, missed: 0, missedPrinted: false };
        if (k[2] !== undefined) kp.address = k[2].toLowerCase();
        if (!readMissed(k[5] ?? '', kp, () => problems.push(problem(no, 'a decimal count after "missed"', line)))) continue;
        current.kprobe = kp;
        continue;
      }
      const m = /^\s+(kprobe|kretprobe)\.multi\b(.*)$/.exec(line);
      if (m) {
        const multi: NonNullable<BpfLink['multi']> = { retprobe: m[1] === 'kretprobe', funcs: [], missed: 0, missedPrinted: false };
        const cnt = /\sfunc_cnt ([0-9]+)/.exec(m[2] ?? '');
        if (cnt) multi.funcCnt = Number(cnt[1]);
        if (!readMissed(m[2] ?? '', multi, () => problems.push(problem(no, 'a decimal count after "missed"', line)))) continue;
        current.multi = multi;
        continue;
      }
      // The address list of a kprobe_multi link: `ffffffffc037f010 0  krtfix_target [krtfix]` (ADDR [COOKIE] FUNC [MODULE]).
      const fn = /^\s+[0-9a-f]{8,16}(?:\s+[0-9]+)?\s+([A-Za-z_.$][A-Za-z0-9_.$]*)(?:\s+\[\S+\])?\s*$/.exec(line);
      if (fn && current.multi) {
        current.multi.funcs.push(fn[1] ?? '');
        continue;
      }
      const at = /^\s+(?:prog_type \S+\s+)?attach_type (\S+)/.exec(line);
      if (at && current.type === 'tracing') {
        current.tracing = { attachType: at[1] ?? '' };
        continue;
      }
      // Other indented lines (pids, multi-probe address lists, tags) belong to the link; not needed here.
      continue;
    }
    problems.push(problem(no, '"ID: TYPE  prog N" or an indented detail line', line));
  }
  return { links, problems };
}

/**
 * A BPF program on a perf event as `bpftool perf show` (or `perf list`) prints it, one line a
 * program (tools/bpf/bpftool/perf.c print_perf_plain: "pid P  fd F: prog_id N  kretprobe  func SYM
 * offset O", or "... kretprobe  addr A" for a probe made on an address). The perf event is the
 * kretprobe perf_event_open made (the default pool); a kprobe_multi or fexit link is not a perf
 * event and is never listed here.
 */
export interface BpfPerfProbe {
  line: number;
  pid: number;
  progId: number;
  /** kprobe or kretprobe; tracepoints and uprobes are left out. */
  retprobe: boolean;
  func?: string;
  offset?: number;
}

/** Parse plain `bpftool perf show` output: its kprobe and kretprobe lines (the others are another kind of event). */
export function parseBpftoolPerf(text: string): { probes: BpfPerfProbe[]; problems: LineProblem[] } {
  const probes: BpfPerfProbe[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const head = /^\s*pid (\d+)\s+fd \d+: prog_id (\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!head) {
      problems.push(problem(no, '"pid P  fd F: prog_id N  TYPE ..."', line));
      continue;
    }
    const type = head[3]!;
    if (type !== 'kprobe' && type !== 'kretprobe') continue;
    const probe: BpfPerfProbe = { line: no, pid: Number(head[1]), progId: Number(head[2]), retprobe: type === 'kretprobe' };
    const fn = /^func ([A-Za-z_.$][\w.$]*)\s+offset (\d+)\s*$/.exec(head[4] ?? '');
    if (fn) {
      probe.func = fn[1]!;
      probe.offset = Number(fn[2]);
    } else if (!/^addr \d+\s*$/.test(head[4] ?? '')) {
      problems.push(problem(no, `"${type}  func SYM  offset N" or "${type}  addr A"`, line));
      continue;
    }
    probes.push(probe);
  }
  return { probes, problems };
}

/** Parse `bpftool -j link show` (or `-p`): a JSON array of links. */
export function parseBpftoolLinksJson(text: string): BpftoolResult {
  const problems: LineProblem[] = [];
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { links: [], problems: [{ line: 1, expected: 'a JSON array from bpftool -j link show', got: shown(err instanceof Error ? err.message : String(err)) }] };
  }
  if (!Array.isArray(data)) return { links: [], problems: [{ line: 1, expected: 'a JSON array of links', got: shown(typeof data) }] };
  const links: BpfLink[] = [];
  data.forEach((item: unknown, index) => {
    const o = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : undefined;
    if (!o || typeof o.id !== 'number' || typeof o.type !== 'string') {
      problems.push({ line: 1, expected: `link ${index} with a numeric id and a type`, got: shown(item) });
      return;
    }
    const link: BpfLink = { line: 1, id: o.id, type: o.type };
    if (typeof o.prog_id === 'number') link.progId = o.prog_id;
    if (typeof o.func === 'string' && typeof o.retprobe === 'boolean') {
      // JSON always carries "missed" on kernels and bpftools that know it; older ones leave it out.
      // The address is a u64 that JSON.parse cannot hold exactly, so it is not kept.
      const hasMissed = typeof o.missed === 'number' && Number.isSafeInteger(o.missed);
      const kp: NonNullable<BpfLink['kprobe']> = {
        retprobe: o.retprobe,
        func: o.func,
        offset: typeof o.offset === 'number' ? o.offset : 0,
        missedPrinted: hasMissed,
      };
      if (hasMissed) kp.missed = o.missed as number;
      link.kprobe = kp;
    } else if (o.type === 'kprobe_multi' && typeof o.retprobe === 'boolean') {
      const hasMissed = typeof o.missed === 'number' && Number.isSafeInteger(o.missed);
      const funcs = Array.isArray(o.funcs) ? o.funcs.flatMap((f: unknown) => (typeof f === 'object' && f !== null && typeof (f as { func?: unknown }).func === 'string' ? [(f as { func: string }).func] : [])) : [];
      const multi: NonNullable<BpfLink['multi']> = { retprobe: o.retprobe, funcs, missedPrinted: hasMissed };
      if (typeof o.func_cnt === 'number') multi.funcCnt = o.func_cnt;
      if (hasMissed) multi.missed = o.missed as number;
      link.multi = multi;
    } else if (o.type === 'tracing') {
      link.tracing = typeof o.attach_type === 'string' ? { attachType: o.attach_type } : {};
    }
    links.push(link);
  });
  return { links, problems };
}

/** A BPF program as `bpftool prog show` describes it, with the run statistics when enabled. */
export interface BpfProg {
  line: number;
  id: number;
  /** `kprobe`, `tracing` (fentry/fexit), `perf_event`, ... */
  type: string;
  name?: string;
  runCnt?: number;
  /**
   * Runs skipped because another BPF program was already active on the CPU (trace_call_bpf,
   * kernel-facts §9): the probe fired but the program did not run. Not part of the link's
   * `missed`. Printed only when nonzero, so an absent word on a line that shows run_cnt reads 0.
   */
  recursionMisses?: number;
  /** The line that carries the statistics, for provenance. */
  statsLine?: number;
}

export interface BpftoolProgResult {
  progs: BpfProg[];
  problems: LineProblem[];
}

/** Parse plain `bpftool prog show` output. */
export function parseBpftoolProgs(text: string): BpftoolProgResult {
  const progs: BpfProg[] = [];
  const problems: LineProblem[] = [];
  let current: BpfProg | undefined;
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const header = /^([0-9]+): ([a-z_]+)(?:\s+name (\S+))?/.exec(line);
    const stats = (l: string): void => {
      if (!current) return;
      const runs = /\brun_cnt ([0-9]+)\b/.exec(l);
      const rec = /\brecursion_misses ([0-9]+)\b/.exec(l);
      if (runs) current.runCnt = parseCounter(runs[1] ?? '');
      if (rec) current.recursionMisses = parseCounter(rec[1] ?? '');
      else if (runs && current.recursionMisses === undefined) current.recursionMisses = 0;
      if (runs || rec) current.statsLine = no;
    };
    if (header) {
      current = { line: no, id: Number(header[1]), type: header[2] ?? '' };
      if (header[3] !== undefined) current.name = header[3];
      progs.push(current);
      stats(line);
      continue;
    }
    if (current && /^\s/.test(line)) {
      stats(line);
      continue;
    }
    problems.push(problem(no, '"ID: TYPE  name NAME" or an indented detail line', line));
  }
  return { progs, problems };
}

/**
 * The `missed N` of a kprobe or kprobe_multi link line's tail, into `into` (printed: the field is
 * there on this kernel). False, after `bad()`, when the count is not a decimal number.
 */
function readMissed(tail: string, into: { missed?: number; missedPrinted: boolean }, bad: () => void): boolean {
  const missed = /\smissed (\S+)/.exec(tail);
  if (!missed) return true;
  const value = parseCounter(missed[1] ?? '');
  if (value === undefined) {
    bad();
    return false;
  }
  into.missed = value;
  into.missedPrinted = true;
  return true;
}
