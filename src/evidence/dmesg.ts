import type { LineProblem } from '../errors.js';
import { numberedLines, parseCounter } from './lines.js';

/** One kernel log line as `dmesg` or `journalctl -k` prints it, split into its parts. */
export interface DmesgLine {
  line: number;
  /** `[  245.123456]` seconds since boot, when printed. */
  timestamp?: string;
  /** The `pr_fmt` prefix (`kretprobe_example`, `mydrv_probe`) when the message has one. */
  prefix?: string;
  message: string;
}

/** What a probe module said about its return probe in the kernel log. */
export interface DmesgProbeReport {
  line: number;
  prefix?: string;
  /** samples/kprobes/kretprobe_example.c: "Planted return probe at %s: %p". */
  planted?: { symbol: string };
  /** "register_kretprobe failed, returned %d" (and the same for register_kprobe); `entry` for register_kprobe. */
  registerFailed?: { errno: number; entry?: boolean };
  /** The release an oops header names ("CPU: 0 PID: 1 Comm: x Tainted: G OE 5.14.0-503.el9.x86_64 #1"). */
  release?: string;
  /** "Missed probing %d instances of %s", or a `nmissed=N` / `rp.nmissed N` field. */
  nmissed?: number;
  /**
   * The count is the sample's exit message ("Missed probing %d instances of %s"), printed after
   * unregister_kretprobe(): the total of one registration, which register_kretprobe() started at 0.
   */
  atUnregister?: true;
  /** `kp.nmissed=N` / `rp.kp.nmissed N`: the embedded kprobe's counter. */
  kprobeNmissed?: number;
  /**
   * `maxactive=N` / `rp.maxactive N` printed beside a counter: read from a registered kretprobe, so
   * the pool it got (register_kretprobe writes the default back into a nonpositive maxactive).
   */
  maxactive?: number;
  symbol?: string;
}

export interface DmesgResult {
  lines: DmesgLine[];
  reports: DmesgProbeReport[];
  problems: LineProblem[];
}

// `dmesg -T` prints a wall-clock time in the brackets ("[Tue Apr  6 17:18:51 2021]") instead of seconds.
const HEAD = /^(?:[A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} \S+ kernel: )?(?:<[0-9]>)?(?:\[\s*([0-9]+\.[0-9]+|[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4})\]\s*)?(.*)$/;

/** Parse kernel log text; lines that are not log lines are skipped silently (a paste mixes prompts in). */
export function parseDmesg(text: string): DmesgResult {
  const out: DmesgResult = { lines: [], reports: [], problems: [] };
  for (const { no, text: raw } of numberedLines(text)) {
    const m = HEAD.exec(raw.trim());
    if (!m || m[1] === undefined && !/ kernel: /.test(raw)) continue;
    const body = (m[2] ?? '').trim();
    const pm = /^([A-Za-z0-9_.-]+): (.*)$/.exec(body);
    const entry: DmesgLine = { line: no, message: pm ? (pm[2] ?? '') : body };
    if (m[1] !== undefined) entry.timestamp = m[1];
    if (pm) entry.prefix = pm[1] ?? '';
    out.lines.push(entry);
    const report = probeReport(entry);
    if (report) out.reports.push(report);
  }
  return out;
}

function probeReport(l: DmesgLine): DmesgProbeReport | undefined {
  const r: DmesgProbeReport = { line: l.line };
  if (l.prefix !== undefined) r.prefix = l.prefix;
  const msg = l.message;
  let any = false;
  // The sample's wording, and a module's own for the same event: register_kretprobe() returned 0
  // ("registered kretprobe on nfsd_dispatch", "kretprobe registered for <f>").
  const planted = /^Planted return probe at ([A-Za-z_][A-Za-z0-9_.]*)/.exec(msg) ?? /(?<![\w-])(?:registered (?:a |the )?kretprobe|kretprobe (?:was )?registered) (?:on|at|for) <?([A-Za-z_][A-Za-z0-9_.]*)>?/i.exec(msg);
  if (planted) {
    r.planted = { symbol: planted[1] ?? '' };
    r.symbol = planted[1] ?? '';
    any = true;
  }
  // The kernel's sample wording, and LKRG's: "[kretprobe] register_kretprobe() for <do_execveat_common> failed! [err=-22]".
  const failed = /\bregister_k(ret)?probes? failed,? returned (-?[0-9]+)/.exec(msg) ?? /\bregister_k(ret)?probes?\(\) for <?([A-Za-z_][A-Za-z0-9_.]*)>? failed!? \[err=(-?[0-9]+)\]/.exec(msg);
  if (failed) {
    const errno = failed[3] ?? failed[2];
    r.registerFailed = { errno: Math.abs(Number(errno)), ...(failed[1] === undefined ? { entry: true } : {}) };
    if (failed[3] !== undefined) r.symbol = failed[2] ?? '';
    any = true;
  }
  const oops = /\bTainted: [A-Z ]*?(?:\s+-+)*\s+([0-9]+\.[0-9]+\.[0-9]+[-+][A-Za-z0-9._+~-]*[A-Za-z0-9]) #/.exec(msg) ?? /^CPU: [0-9]+ PID: [0-9]+ Comm: \S+(?: Not tainted)? ([0-9]+\.[0-9]+\.[0-9]+[-+][A-Za-z0-9._+~-]*[A-Za-z0-9]) #/.exec(msg);
  if (oops) {
    r.release = oops[1] ?? '';
    any = true;
  }
  const missedProbing = /^Missed probing ([0-9]+) instances? of ([A-Za-z_][A-Za-z0-9_.]*)/.exec(msg);
  if (missedProbing) {
    r.nmissed = parseCounter(missedProbing[1] ?? '');
    r.symbol = missedProbing[2] ?? '';
    r.atUnregister = true;
    any = true;
  }
  const kp = /\b(?:rp\.)?kp\.nmissed[=: ]\s*([0-9]+)\b/.exec(msg);
  if (kp) {
    r.kprobeNmissed = parseCounter(kp[1] ?? '');
    any = true;
  }
  const rp = /(?<![.\w])(?:rp\.)?nmissed[=: ]\s*([0-9]+)\b/.exec(msg.replace(/\b(?:rp\.)?kp\.nmissed[=: ]\s*[0-9]+/g, ''));
  if (rp && r.nmissed === undefined) {
    r.nmissed = parseCounter(rp[1] ?? '');
    any = true;
  }
  // The pool, only beside a counter of the same line (a module printing its struct).
  const pool = r.nmissed !== undefined || r.kprobeNmissed !== undefined ? /(?<![.\w])(?:rp\.)?maxactive[=: ]\s*([0-9]+)\b/.exec(msg) : null;
  if (pool) r.maxactive = parseCounter(pool[1] ?? '');
  return any ? r : undefined;
}

/** Linux errno numbers a probe registration returns (include/uapi/asm-generic/errno-base.h, errno.h). */
export const ERRNO_NAMES: Record<number, string> = {
  1: 'EPERM', 2: 'ENOENT', 7: 'E2BIG', 12: 'ENOMEM', 13: 'EACCES', 14: 'EFAULT', 16: 'EBUSY', 17: 'EEXIST', 19: 'ENODEV',
  22: 'EINVAL', 84: 'EILSEQ', 95: 'EOPNOTSUPP', 99: 'EADDRNOTAVAIL',
};
