import type { LineProblem } from '../errors.js';
import { numberedLines } from './lines.js';

/** One event `perf probe -a` added or `perf probe -l` lists: `probe:vfs_read__return (on vfs_read%return)`. */
export interface PerfProbeEvent {
  line: number;
  group: string;
  event: string;
  symbol: string;
  offset: number;
  retprobe: boolean;
  module?: string;
}

export interface PerfProbeResult {
  events: PerfProbeEvent[];
  /** `Added new event(s):` was printed: the definition was written to kprobe_events. */
  added: boolean;
  /**
   * Failures: "Failed to find symbol X", "Probe point 'X' not found.", "Error: Failed to add
   * events.", and the kernel's refusal of the definition perf wrote to kprobe_events, "Failed to
   * write event: STRERROR", or of opening that file, "Failed to open kprobe_events: STRERROR"
   * (tools/perf/util/probe-file.c), whose text is `strerror` (with `-v`,
   * "Reason: STRERROR (Code: -N)" after "Failed to add events.").
   */
  errors: Array<{ line: number; message: string; notFound: boolean; strerror?: string }>;
  /**
   * The probe the command line asked for (`perf probe -a 'vfs_read%return'`, `--add=F`, a bare
   * `perf probe F%return`): its function and whether it is a return probe. Only with one probe
   * point: a line adding several names none of them alone. With no command line pasted, what
   * perf says of the point: its -v trace ("symbol:F file:(null) line:0 offset:0 return:1 ...",
   * "Writing event: r:probe/F__return F+0"), or the point it could not find ("Probe point
   * 'F%return' not found.").
   */
  asked?: { line: number; symbol: string; retprobe: boolean };
  problems: LineProblem[];
}

/** Parse `perf probe -a ...` or `perf probe -l` output. perf cannot set maxactive (kernel-facts §9). */
export function parsePerfProbe(text: string): PerfProbeResult {
  const out: PerfProbeResult = { events: [], added: false, errors: [], problems: [] };
  for (const { no, text: raw } of numberedLines(text)) {
    const t = raw.trim();
    if (t === '') continue;
    if (/^Added new events?:$/.test(t)) {
      out.added = true;
      continue;
    }
    const ev = /^([A-Za-z_][A-Za-z0-9_]*):([A-Za-z_][A-Za-z0-9_]*)\s+\(on ([A-Za-z_][A-Za-z0-9_.]*)(?:\+([0-9]+|0x[0-9a-fA-F]+))?(%return)?(?:@\S+)?(?: in ([A-Za-z0-9_-]+))?(?: with .*)?\)$/.exec(t);
    if (ev) {
      const e: PerfProbeEvent = {
        line: no,
        group: ev[1] ?? '',
        event: ev[2] ?? '',
        symbol: ev[3] ?? '',
        offset: ev[4] ? Number(ev[4]) : 0,
        retprobe: ev[5] !== undefined,
      };
      if (ev[6] !== undefined) e.module = ev[6];
      out.events.push(e);
      continue;
    }
    const cmd = /\bperf\s+probe\b(.*)$/.exec(t);
    if (cmd && out.asked === undefined && out.events.length === 0) {
      const asked = askedProbe(cmd[1] ?? '');
      if (asked) out.asked = { line: no, ...asked };
      continue;
    }
    // perf probe -v: the probe point as parsed (util/probe-event.c debug_print_probe_point... "symbol:%s file:%s line:%d offset:%lu return:%d").
    const parsed = /^symbol:([A-Za-z_][\w.]*) file:\S+ line:\d+ offset:\d+ return:([01])\b/.exec(t);
    if (parsed && out.asked === undefined && out.events.length === 0) {
      out.asked = { line: no, symbol: parsed[1]!, retprobe: parsed[2] === '1' };
      continue;
    }
    // -v's "Writing event: r:probe/F__return F+0" (a module's "MOD:F+0"); placed at an offset from
    // _text, it names no function, only the kind.
    const writing = /^Writing event: ([pr])\d*:\S+\s+(?:[\w-]+:)?([A-Za-z_][\w.]*)(\+\d+)?(?:\s|$)/.exec(t);
    if (writing) {
      const symbol = !/^_s?text$/.test(writing[2]!) && (writing[3] === undefined || writing[3] === '+0') ? writing[2]! : undefined;
      if (out.asked === undefined && symbol !== undefined) out.asked = { line: no, symbol, retprobe: writing[1] === 'r' };
      continue;
    }
    const write = /^(?:Error: )?Failed to (?:write event|open kprobe_events): (.+?)\.?$/.exec(t) ?? /^(?:Error: )?Failed to add events\.\s+Reason: (.+?) \(Code: -?\d+\)$/.exec(t);
    if (write) {
      out.errors.push({ line: no, message: t.replace(/^Error: /, ''), notFound: false, strerror: write[1] ?? '' });
      continue;
    }
    const err = /^(?:Error: )?(Failed to find symbol .*|Probe point '.*' not found\.?|Failed to add events\.?|Semantic error :.*)$/.exec(t);
    if (err) {
      out.errors.push({ line: no, message: err[1] ?? t, notFound: /not found|Failed to find symbol/.test(t) });
      // The point perf could not find, as it synthesizes it (with %return for a return probe).
      const point = /^Probe point '([A-Za-z_][\w.]*)(?:@\S+)?(%return)?' not found/.exec(t);
      if (point && out.asked === undefined && out.events.length === 0) out.asked = { line: no, symbol: point[1]!, retprobe: point[2] !== undefined };
    }
  }
  return out;
}

/**
 * The probe point of a `perf probe` command line (tools/perf/Documentation/perf-probe.txt:
 * `[EVENT=]FUNC[@SRC][:RLN|+OFFS|%return|;PTN] [ARG ...]`, added with -a/--add or alone): its
 * function and `%return`. Undefined for a listing or deletion (-l, -d, -L, -V, -F), or when the
 * line adds more than one probe point.
 */
function askedProbe(args: string): { symbol: string; retprobe: boolean } | undefined {
  const words = args.match(/'[^']*'|"[^"]*"|\S+/g)?.map((w) => w.replace(/^(['"])(.*)\1$/, '$2')) ?? [];
  let spec: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^(?:-[ldLVFD]|--(?:list|del|line|vars|funcs|definition))\b/.test(w)) return undefined;
    const eq = /^--add=(.+)$/.exec(w);
    if (w === '-a' || w === '--add' || eq) {
      if (spec !== undefined) return undefined; // a second probe point
      spec = eq ? eq[1] : words[++i];
      continue;
    }
    if (w === '-m' || w === '--module' || w === '-k' || w === '--vmlinux' || w === '-s' || w === '--source' || w === '-x' || w === '--exec' || w === '--target-ns') { i++; continue; }
    if (w.startsWith('-')) continue;
    if (spec !== undefined) break; // the probe point's arguments
    spec = w;
  }
  if (spec === undefined) return undefined;
  // One probe point: the first word (arguments may follow it in the same quotes).
  const point = spec.trim().split(/\s+/)[0] ?? '';
  const m = /^(?:[A-Za-z_][\w:]*=)?([A-Za-z_][A-Za-z0-9_.]*)(?:@[^:+%;\s]+)?(?::\d+|\+(?:\d+|0x[0-9a-fA-F]+)|(%return)|;\S*)?$/.exec(point);
  if (!m) return undefined;
  return { symbol: m[1] ?? '', retprobe: m[2] !== undefined };
}
