import type { LineProblem } from '../errors.js';
import { parseBpftoolLinks, parseBpftoolLinksJson, parseBpftoolPerf, parseBpftoolProgs } from './bpftool.js';
import { lostOf, parseBufferStats } from './bufferStats.js';
import { bpftraceClausePoints, bpftraceProbes, bpftraceScriptPoints, parseBpftraceOutput } from './bpftrace.js';
import { parseCpuPossible } from './cpus.js';
import { ERRNO_NAMES, parseDmesg } from './dmesg.js';
import { errnoForReason, parseErrorLog } from './errorLog.js';
import { parseKallsyms } from './kallsyms.js';
import { parseProcVersion, parseUnameMachine, parseUnameRelease, preemptionOf, preemptTokenOf } from './kernelVersion.js';
import { DEFAULT_FPROBE_GROUP, DEFAULT_KPROBE_GROUP, parseDynamicEvents, parseKprobeEventLine, parseKprobeEvents, type FprobeEventDef, type KprobeEventDef } from './kprobeEvents.js';
import { parseKprobeProfile } from './kprobeProfile.js';
import { isArmed, parseKprobesList } from './kprobesList.js';
import { parsePerfProbe } from './perfProbe.js';
import { parsePerfStat } from './perfStat.js';
import { addTraceLoss, lostEventsOf, noTraceLoss, parseTraceLine } from './trace.js';

/**
 * The one table of kernel-artifact readers. Each entry names an artifact (a spec, in
 * insights-core's words), says how to recognise it (the collector's file name, the command that
 * printed it, or its content) and reads it with the artifact's one pure parser into cited facts of
 * one shape. Every context reads through this table: `case from-bundle` (a collector snapshot),
 * a write-up's pasted block, the lab's bundles from the guest console. A fix to a reader, or a new
 * one, reaches all three.
 */

export type ArtifactKind =
  | 'kprobe_profile' | 'kprobe_events' | 'dynamic_events' | 'kprobe_events-write' | 'error_log' | 'kprobes_list' | 'uname' | 'uname_m' | 'proc_version' | 'cpu_possible'
  | 'kallsyms' | 'bpftool-link' | 'bpftool-link-json' | 'bpftool-perf' | 'bpftool-prog' | 'bpftrace' | 'bpftrace-script' | 'dmesg' | 'perf-probe' | 'module-source' | 'bcc' | 'bcc-program' | 'libbpf-program' | 'lost-events' | 'buffer_stats' | 'perf-stat' | 'ply' | 'strace' | 'kernel-config' | 'systemtap' | 'attach-failure' | 'event-enable' | 'kprobes_enabled';

export type CitedValue = string | number | boolean | string[] | null;

/** Which probe a fact is about: a fact about another probe never becomes the return probe's. */
export interface Subject {
  /** `GRP/EVENT` (tracefs), `GRP:EVENT` (perf), the bare event name (kprobe_profile shows no group). */
  event?: string;
  kind?: 'return' | 'entry';
  symbol?: string;
}

/** One fact an artifact states, at a line of the artifact (1-based) and a column in it (0-based). */
export interface CitedFact {
  /** A case field (dotted), or one of the snapshot counters `counters.hits` / `counters.nmissed` that a context places at start or end. */
  path: string;
  value: CitedValue;
  line: number;
  col: number;
  subject?: Subject;
}

export interface ArtifactReading {
  kind: ArtifactKind;
  facts: CitedFact[];
  problems: LineProblem[];
}

/** What a context knows besides the text: the command that printed it, the fenced block's info string. */
export interface ReadContext {
  command?: string;
  info?: string;
  /** The release this artifact was taken on, when the context knows it (the errno of some error_log reasons depends on it). */
  release?: string;
  /** The symbol kallsyms is searched for. */
  target?: string;
  /** The listing may be cut short (`| head`): a symbol missing from it is not shown absent. */
  partial?: boolean;
  /** Which probe counts into each keyed map entry (`@n[1]` → return), from the script that printed the output (countMapKinds). */
  countMaps?: ReadonlyMap<string, 'entry' | 'return'>;
  /** The collector's own `config` file: its grep (collector/collect.sh CONFIG_RE) keeps every preemption line the kernel has, so a line it lacks is a symbol not set. */
  collected?: boolean;
  /** bpftrace map names whose printed value is a count (rules/lexicon/facts.yaml bpftrace_maps). */
  bpftraceMaps?: ReadonlyArray<{ re: RegExp; fact: string }>;
}

export interface ArtifactReader {
  kind: ArtifactKind;
  /** Collector snapshot file names (collector/collect.sh) that hold this artifact. */
  files?: readonly string[];
  /** The command (without `sudo`) that prints it. */
  command?: RegExp;
  /** Recognise the artifact from its text alone (non-blank lines given too). */
  sniff?: (text: string, nonblank: string[], ctx: ReadContext) => boolean;
  read: (text: string, ctx: ReadContext) => ArtifactReading;
  /**
   * The facts this artifact is where one reads them: when a tool reports that its file could not
   * be read ("cat: .../kprobe_profile: Permission denied"), they are unknown with that reason, not
   * merely absent (unreadableOf).
   */
  unread?: readonly string[];
}

const linesOf = (text: string): string[] => {
  const parts = text.split('\n');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.map((t) => (t.endsWith('\r') ? t.slice(0, -1) : t));
};

/** Column (0-based) of `needle` in a line, else of its first non-blank character. */
export function colOf(line: string, needle?: string | number): number {
  if (needle !== undefined) {
    const i = line.indexOf(String(needle));
    if (i >= 0) return i;
  }
  return line.length - line.trimStart().length;
}

/** Collects facts for one reading, each cited at a line of the artifact. */
class Facts {
  readonly facts: CitedFact[] = [];
  constructor(private readonly lines: string[]) {}
  add(path: string, value: CitedValue, line: number, needle?: string | number, subject?: Subject): void {
    if (line < 1) return;
    const f: CitedFact = { path, value, line, col: colOf(this.lines[line - 1] ?? '', needle) };
    if (subject) f.subject = subject;
    this.facts.push(f);
  }
  /**
   * The probe's kind where the artifact defines an entry probe (`p:`, `kprobe:`, attach_kprobe, a
   * perf probe without %return, `k` in kprobes/list): `probe.kind: entry`, bound to that probe like
   * its other facts. A return probe is what the format describes unless told, so its kind is not written.
   */
  kindOf(subject: Subject, line: number, needle?: string | number): void {
    if (subject.kind === 'entry') this.add('probe.kind', 'entry', line, needle, subject);
  }
}

const defSubject = (d: KprobeEventDef): Subject => {
  const s: Subject = { kind: d.kind === 'r' ? 'return' : 'entry' };
  if (d.event !== undefined) s.event = `${d.group}/${d.event}`;
  const sym = d.symbol ?? d.address;
  if (sym !== undefined) s.symbol = sym;
  return s;
};

/** Facts of one probe definition, as read back (`readBack`) or as written. */
function definitionFacts(f: Facts, d: KprobeEventDef, line: number, readBack: boolean): void {
  const subject = defSubject(d);
  const lead = d.raw.split(/\s/)[0];
  const sym = d.symbol ?? d.address;
  f.add('probe.interface', 'tracefs', line, lead, subject);
  f.kindOf(subject, line, lead);
  if (sym) f.add('probe.target', sym, line, sym, subject);
  if (d.module) f.add('probe.target_module', d.module, line, `${d.module}:`, subject);
  if (d.kind === 'r' && d.maxactive !== undefined) f.add(readBack ? 'probe.maxactive.effective' : 'probe.maxactive.requested', d.maxactive, line, d.raw.split(/[\s:]/)[0], subject);
  if (readBack) f.add('probe.registration.result', 'ok', line, lead, subject);
}

/** Facts of one fprobe event read back from dynamic_events: registered, with the pool its exit was given (fN:). */
function fprobeFacts(f: Facts, d: FprobeEventDef): void {
  const subject: Subject = { kind: d.exit ? 'return' : 'entry', event: `${d.group}/${d.event}`, symbol: d.symbol };
  const lead = d.raw.split(/\s/)[0];
  f.add('probe.interface', 'fprobe', d.line, lead, subject);
  f.kindOf(subject, d.line, lead);
  f.add('probe.target', d.symbol, d.line, d.symbol, subject);
  if (d.exit && d.maxactive !== undefined) f.add('probe.maxactive.effective', d.maxactive, d.line, d.raw.split(':')[0], subject);
  f.add('probe.registration.result', 'ok', d.line, lead, subject);
}

/**
 * The probe a tracefs command defines: its kind from the definition itself (`p:`/`r:`/`%return`),
 * never assumed. A command error_log quotes is one the kernel refused, often for its syntax
 * (`p5:` gives a maxactive to an entry probe), so what it names is read without the full
 * grammar: the letter, the `GROUP/EVENT` name and the symbol, each where it can be told.
 */
function commandSubject(command: string | undefined): Subject | undefined {
  if (command === undefined) return undefined;
  const d = parseKprobeEventLine(command);
  if (typeof d !== 'string') return defSubject(d);
  const m = /^\s*([prf])[^:\s]*(?::(\S*))?(?:\s+(\S+))?/.exec(command);
  if (!m) return undefined;
  const target = m[3];
  const ret = m[1] === 'r' || target?.endsWith('%return') === true;
  const s: Subject = { kind: ret ? 'return' : 'entry' };
  const name = m[2];
  if (name) s.event = name.includes('/') ? name : `${m[1] === 'f' ? DEFAULT_FPROBE_GROUP : DEFAULT_KPROBE_GROUP}/${name}`;
  const sym = target?.replace(/%return$/, '').replace(/\+.*$/, '');
  if (sym && /^[A-Za-z_][\w.]*$/.test(sym)) s.symbol = sym;
  return s;
}

const oneLine = <T extends { line?: number; problems: LineProblem[] }>(kind: ArtifactKind, parse: (t: string) => T, facts: (r: T, f: Facts) => void) => (text: string): ArtifactReading => {
  const f = new Facts(linesOf(text));
  const r = parse(text);
  facts(r, f);
  return { kind, facts: f.facts, problems: r.problems };
};

/** Every `needs` line parser reads every line, or the block is not its artifact. */
const readsAll = <T extends { problems: unknown[] }>(parse: (t: string) => T, n: (r: T) => number) => (text: string, nonblank: string[]): boolean => {
  // The first line is tried alone before the whole block (most blocks are none of these, and fail on their first line).
  if (parse(nonblank[0] ?? '').problems.length > 0) return false;
  const r = parse(text);
  return r.problems.length === 0 && n(r) > 0;
};

/** `uname -a`: "Linux NODE RELEASE #VERSION ...", the node name sometimes left out. */
/**
 * A tool's report of a refused write to kprobe_events, the definition quoted, then the error:
 * gobpf's `cannot write "r:x x" to kprobe_events: write .../kprobe_events: no such file or
 * directory`, cilium/ebpf's `writing 'r:x x' to kprobe_events: ...`, tracee's `failed to add kprobe
 * 'p:kprobes/x x': -17`. The errno is the strerror text or the negative number at the end.
 */
const TOOL_WRITE = /\b(?:cannot write|writing|failed to add k(?:ret)?probe)\s+(["'])([pr]\d*:.+?)\1(?:\s+to\s+\S*kprobe_events)?:\s*(?:.*:\s*)?(.+?)\s*$/im;

/** `CONFIG_X=value` or `# CONFIG_X is not set` (value n). */
const CONFIG_LINE = /^\s*(?:CONFIG_([A-Z0-9_]+)=(\S*)|# CONFIG_([A-Z0-9_]+) is not set)\s*$/;

/**
 * CONFIG_PREEMPTION from config lines (it has no prompt, so a config never says it is not set):
 * set when a symbol that selects it is (PREEMPT, PREEMPT_RT, PREEMPT_DYNAMIC through
 * PREEMPT_BUILD, PREEMPT_LAZY). Not set when the preemption choice is NONE or VOLUNTARY (which
 * rules out PREEMPT, PREEMPT_RT and PREEMPT_LAZY, members of the same choice) and
 * PREEMPT_DYNAMIC is not set: said so, or absent from the collector's own grep, which keeps it
 * where the kernel has it. Debian 6.1 is VOLUNTARY with PREEMPT_DYNAMIC (so set); 5.10 is
 * VOLUNTARY and has no PREEMPT_DYNAMIC (not set).
 */
function configPreemption(set: ReadonlyMap<string, { value: string; line: number }>, collected: boolean): { value: boolean; line: number; symbol: string } | undefined {
  for (const sym of ['PREEMPTION', 'PREEMPT_BUILD', 'PREEMPT', 'PREEMPT_RT', 'PREEMPT_DYNAMIC', 'PREEMPT_LAZY']) {
    const v = set.get(sym);
    if (v?.value === 'y') return { value: true, line: v.line, symbol: `CONFIG_${sym}` };
  }
  const choice = ['PREEMPT_NONE', 'PREEMPT_VOLUNTARY'].map((sym) => ({ sym, v: set.get(sym) })).find((c) => c.v?.value === 'y');
  if (!choice) return undefined;
  const dynamic = set.get('PREEMPT_DYNAMIC');
  if (dynamic === undefined ? !collected : dynamic.value !== 'n') return undefined;
  return { value: false, line: choice.v!.line, symbol: `CONFIG_${choice.sym}` };
}

/**
 * A grep of a kernel config that would have printed CONFIG_PREEMPT_DYNAMIC=y had the kernel set
 * it (`grep PREEMPT /boot/config-$(uname -r)`, `zcat /proc/config.gz | grep -i preempt`): its
 * output lacking that line says it is not set, as the collector's own grep does. A pattern that
 * does not match the whole name, a flag other than -i/-n/-h/-s/-a/-H/-r (-v, -w, -x and -E among
 * them), or a filter after it that may cut lines (head, tail, sed, awk, cut) leave it unknown.
 */
function grepKeepsDynamic(command: string | undefined): boolean {
  if (!command || /\b(?:head|tail|sed|awk|cut)\b/.test(command)) return false;
  const m = /\b[ez]?grep((?:\s+-[A-Za-z]+)*)\s+(['"]?)([A-Za-z_]+)\2(?=\s|$)/.exec(command);
  if (!m) return false;
  const flags = (m[1] ?? '').replace(/[\s-]/g, '');
  if (/[^inhsaHr]/.test(flags)) return false;
  const name = 'CONFIG_PREEMPT_DYNAMIC';
  return flags.includes('i') ? name.toLowerCase().includes(m[3]!.toLowerCase()) : name.includes(m[3]!);
}

/** The machine name in `uname -a` output, after the release. */
const UNAME_ARCH = /\s(x86_64|aarch64|arm64|armv[5-8]\w*|i[3-6]86|ppc64le|ppc64|s390x|riscv64|mips64\w*|loongarch64)(?:\s|$)/;

const UNAME_A = /^\s*Linux\s+(?:\S+\s+)?(\d+\.\d+\S*)\s+#/;

/**
 * The same output inside a line of text (a sentence, inline code): KERNEL-NAME [NODENAME] RELEASE
 * #VERSION, with the version's SMP, PREEMPT or build date after it (not an issue number after a
 * series, "Linux 6.1 #1234").
 */
const UNAME_INSIDE = /\bLinux\s+(?:[A-Za-z0-9][\w.-]*\s+)?[2-9]\.\d+\S*\s+#\d+\S*\s+(?:SMP|PREEMPT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s)/;

/** Where `uname -a` output starts inside a line of text, or undefined: the uname reader reads it from there. */
export function unameStart(line: string): number | undefined {
  // Cheap test first: most lines of prose have no "#" at all.
  if (!line.includes('#') || !line.includes('Linux')) return undefined;
  return UNAME_INSIDE.exec(line)?.index;
}

/** strace's line for a refused write of a probe definition: write(5, "p:kprobes/x sym", 35) = -1 EINVAL (Invalid argument). */
const STRACE_WRITE = /^\s*`?write\(\d+, "([pr]\d*:[^"]*)", \d+\) = -1 (E[A-Z0-9]+) /m;

/**
 * A tracer's lost-record line: ply's "error: lost 52 events", bpftrace's "Lost N events", perf
 * trace's "LOST N events!" (tools/perf/builtin-trace.c, PERF_RECORD_LOST), tetragon's "Ring buffer:
 * received=N, lost=N", bcc's "Possibly lost N samples", babeltrace's report of what an LTTng
 * session's buffers discarded ("[warning] Tracer discarded N events at end of stream between [",
 * babeltrace 2's "WARNING: Tracer discarded N events between [": LTTng's --function events are
 * kretprobes). ftrace's own markers and header: parseTraceLine.
 */
const LOST_LINE = /^\s*(?:error: )?lost (\d+) events|\bRing buffer:\s+received=\d+, lost=(\d+)\b|^\s*Possibly lost (\d+) samples\b|\bTracer discarded (\d+) events?\b/im;
/** babeltrace's count of discarded LTTng packets: records were lost, how many is not said. */
const DISCARDED_PACKETS = /\bTracer discarded \d+ packets?\b/i;
/** ftrace's marker of lost records (`CPU:N [LOST M EVENTS]`, `CPU:N [LOST EVENTS]`; trace-cmd report's `CPU:N [M EVENTS DROPPED]`) and the `trace` file's header. */
const FTRACE_LOSS = /\[LOST (?:\d+ )?EVENTS\]|^\s*CPU:\d+ \[(?:\d+ )?EVENTS DROPPED\]|^\s*#\s*entries-in-buffer\/entries-written:/m;

/** bpftrace's attach refusals: "Error attaching probe: 'kretprobe:SYM'", "[Ww]arning: could not attach probe kretprobe:SYM, skipping.", "ERROR: Unable to attach probe: kretprobe:SYM." */
const BPFTRACE_ATTACH = /\bError attaching probe: '?([^'\s]+)'?|\bcould not attach probe (\S+), skipping\.|\bUnable to attach probe: (\S+?)\.?(?:\s|$)/i;
/** libbpf (bpf_program__attach_kprobe_opts): "libbpf: prog 'P': failed to create kretprobe 'SYM+0x0' perf event: <reason>". */
const LIBBPF_CREATE = /\bprog '[^']*': failed to create (kretprobe|kprobe) '([A-Za-z_][\w.]*)(?:\+0x[0-9a-fA-F]+)?' perf event: (.+)$/;
const ATTACH_FAILURE = new RegExp([BPFTRACE_ATTACH.source, LIBBPF_CREATE.source].join('|'), 'im');

/** perf's report of its own lost records: "Processed N events and lost M chunks!", "# Total Lost Samples: N". */
const PERF_LOST = /\bProcessed \d+ events and lost (\d+) chunks!|^#\s*Total Lost Samples:\s*(\d+)\b/i;

const GO_SYMBOL = /^\s*symbol '([A-Za-z_][\w.]*)' not found: (.+)$/m;

/** SystemTap's per-probe miss report at exit (runtime/linux/kprobes.c): part 1 rp->nmissed, part 2 kp.nmissed. */
const STAP_MISSED = /^\s*(?:WARNING: )?Skipped due to missed kretprobe\/([12]) on '([^']+)': (\d+)\s*$/m;

/** ply's session lines (src/ply/ply.c main): "ply: active" once ply_load() attached every probe and ply_start() enabled them, "ply: deactivating" as it stops them. */
// Its stderr line may follow its own "lost N events" unbroken (ply#16: "error: lost 52 eventsply: deactivating").
const PLY_SESSION = /(?:^|[^\w-]|events)ply: (?:active|deactivating)\s*$/m;

/**
 * ply prints either line only past ply_load(), which attaches every probe of the script (a failed
 * attach jumps to its error exit, printing neither), and past ply_start(), which enables them: the
 * script's probes were registered and armed for the session (as bpftrace's "Attaching N probes").
 */
function plySession(lines: string[], f: Facts): void {
  const at = lines.findIndex((l) => PLY_SESSION.test(l));
  if (at < 0) return;
  const needle = /ply: \w+/.exec(lines[at]!)![0];
  // ply is a tool of its own (BPF programs read through its own perf buffers): `other`.
  f.add('probe.interface', 'other', at + 1, needle);
  f.add('probe.registration.result', 'ok', at + 1, needle);
  f.add('probe.armed', true, at + 1, needle);
}

/** A bcc program's probe: attach_k(ret)probe(event="SYM") or a function named k(ret)probe__SYM (bcc attaches it by name). */
const BCC_PROBES = /\battach_k(ret)?probe\(\s*event\s*=\s*b?["']([A-Za-z_][\w.]*)["']|(?<![\w])k(ret)?probe__([A-Za-z_]\w*)/g;
const BCC_PROBE = new RegExp(BCC_PROBES.source);
/** libbpf's section names for kernel function probes: SEC("kretprobe/vfs_read"), SEC("fexit/nvme_complete_rq"). */
const LIBBPF_SECTIONS = /\bSEC\(\s*"(kretprobe\.multi|kretprobe|fexit|kprobe\.multi|kprobe|fentry)(?:\/([A-Za-z_*?][\w.*?]*))?"\s*\)/g;
const LIBBPF_SECTION = new RegExp(LIBBPF_SECTIONS.source);
/** bcc's Python traceback or its attach errors on stderr (src/cc/libbpf.c, src/python/bcc/__init__.py). */
const BCC_ATTACH = /(?:^|\b)(?:Exception: )?Failed to attach BPF (?:program \S+ )?to (kretprobe|kprobe)(?: group)?(?:\s+(\S+))?|cannot attach (kretprobe|kprobe), (.+)$|^(?:Exception|OSError|ValueError): (.*)$/;

export const ARTIFACT_READERS: readonly ArtifactReader[] = [
  {
    kind: 'module-source',
    // C source, or a patch to a C file (```diff, a +++ b/….c line), that defines a kretprobe or its handlers.
    sniff: (text, _n, ctx) => (/^(?:c|h)$/i.test(ctx.info ?? '') || ((/^(?:diff|patch)$/i.test(ctx.info ?? '') || /^\+\+\+ \S+\.[ch]\s*$/m.test(text)) && text.includes('kretprobe'))) && /\bstruct kretprobe(?:_instance)?\b/.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      // A handler's signature (int h(struct kretprobe_instance *ri, struct pt_regs *regs)): the C
      // API's kretprobe, registered by a kernel module.
      const handlerAt = lines.findIndex((l) => /\b\w+\s*\(\s*struct kretprobe_instance\s*\*\s*\w+\s*,\s*struct pt_regs\s*\*/.test(l));
      if (handlerAt >= 0 && !lines.some((l) => /\.kp\.symbol_name\s*=/.test(l))) f.add('probe.interface', 'module', handlerAt + 1, 'struct kretprobe_instance');
      lines.forEach((l, i) => {
        const no = i + 1;
        const sym = /\.kp\.symbol_name\s*=\s*"([^"]+)"/.exec(l);
        if (sym) {
          f.add('probe.interface', 'module', no, '.kp.symbol_name');
          f.add('probe.target', sym[1] ?? '', no, sym[1]);
        }
        const max = /\.maxactive\s*=\s*(\d+)/.exec(l);
        if (max) f.add('probe.maxactive.requested', Number(max[1]), no, `= ${max[1]}`);
        if (/\.data_size\s*=\s*sizeof/.test(l)) f.add('probe.per_instance_data', true, no, '.data_size');
        if (/\.entry_handler\s*=\s*\w/.test(l)) f.add('probe.entry_handler.present', true, no, '.entry_handler');
      });
      return { kind: 'module-source', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'bpftrace',
    command: /^bpftrace\b/,
    // Its output: "Attaching N probes...", or (pasted alone) nothing but printed map values.
    sniff: (text, nonblank, ctx) => ((/^(?:bpftrace|bt)$/i.test(ctx.info ?? '') || /^Attaching \d+ probes?\.\.\./m.test(text)) && /^Attaching \d+ probes?/m.test(text)) || nonblank.every((l) => /^@[A-Za-z0-9_]*(?:\[[^\]]*\])?: \d+$/.test(l.trim())),
    read: (text, ctx) => readBpftrace(text, ctx, 'bpftrace'),
  },
  {
    kind: 'bpftrace-script',
    // A script fenced as bpftrace, or one whose lines open probes (`kretprobe:nfsd_dispatch {`).
    sniff: (text, _n, ctx) => /^(?:bpftrace|bt)$/i.test(ctx.info ?? '') || ((text.includes('probe:') || text.includes('k:') || text.includes('kr:')) && /^\s*(?:kretprobe|kprobe|kr|k):[A-Za-z_]\w*\s*(?:\/[^/\n]*\/\s*)?\{?\s*$/m.test(text)),
    read: (text, ctx) => readBpftrace(text, ctx, 'bpftrace-script'),
  },
  {
    // A BPF tracer's own report that it could not attach a probe, other than bcc's (below) and perf
    // probe's (perf-probe): bpftrace's "Error attaching probe: 'kretprobe:SYM'" and its "could not
    // attach probe kretprobe:SYM, skipping.", libbpf's "prog 'P': failed to create kretprobe
    // 'SYM+0x0' perf event: <strerror or -EXXX>". Each names the probe kind, so a failure of an
    // entry probe is bound to it, never to the return probe.
    kind: 'attach-failure',
    sniff: (text) => ATTACH_FAILURE.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const x = attachFailureOf(lines);
      if (x) addAttachFailure(f, x);
      return { kind: 'attach-failure', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'bcc',
    command: /^(?:python3?\s+)?(?:\S*\/)?(?:funclatency|funccount|trace|argdist|stackcount)(?:-bpfcc|\.py)?(?:\s|$)/,
    sniff: (text) => (text.includes("symbol '") && GO_SYMBOL.test(text)) || /^Traceback \(most recent call last\):/m.test(text) && /\bbcc\b|attach_k(?:ret)?probe|Failed to attach BPF/.test(text) || /^\s*cannot attach k(?:ret)?probe, /m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      // The most specific line wins: "cannot attach kretprobe, <strerror>" (libbpf.c) names the errno, the Python exception only the probe.
      let kind: string | undefined;
      let reason: { line: number; text: string } | undefined;
      let probeLine: number | undefined;
      let symbol: string | undefined;
      lines.forEach((l, i) => {
        const m = BCC_ATTACH.exec(l.trim());
        if (!m) return;
        if (m[1] !== undefined) {
          // Python's exception names the probe kind; libbpf's own line says "kprobe" for both (bcc#1921).
          kind ??= m[1];
          const name = m[2]?.replace(/^b?'|'?,?$/g, '');
          if (name !== undefined && /^[A-Za-z_][\w.]*$/.test(name)) symbol ??= name;
          probeLine ??= i + 1;
        } else if (m[3] !== undefined) {
          reason = { line: i + 1, text: (m[4] ?? '').trim() };
        } else if (m[5] !== undefined && reason === undefined && /attach/i.test(m[5])) reason = { line: i + 1, text: m[5].trim() };
      });
      // cilium/ebpf and ebpf-manager (Go): "symbol 'attach_recursive_mnt' not found: invalid argument".
      if (probeLine === undefined && reason === undefined) {
        const i = lines.findIndex((l) => GO_SYMBOL.test(l));
        if (i < 0) return { kind: 'bcc', facts: [], problems: [] };
        const g = GO_SYMBOL.exec(lines[i]!)!;
        f.add('probe.target', g[1] ?? '', i + 1, g[1]);
        f.add('probe.registration.result', errnoForStrerror(g[2] ?? '') ?? 'error', i + 1, g[2]);
        return { kind: 'bcc', facts: f.facts, problems: [] };
      }
      // The traceback's own call names the event when the exception does not: b.attach_kprobe(event="do_sys_open", ...).
      if (symbol === undefined) {
        const call = lines.map((l) => /\battach_k(ret)?probe\(event="([A-Za-z_][\w.]*)"/.exec(l)).find((x) => x !== null);
        if (call) {
          symbol = call[2];
          kind ??= call[1] ? 'kretprobe' : 'kprobe';
        }
      }
      // A failure to attach the entry kprobe says nothing of a return probe's registration; without the exception the kind is unknown.
      const subject: Subject = { ...(kind ? { kind: kind === 'kprobe' ? 'entry' as const : 'return' as const } : {}), ...(symbol ? { symbol } : {}) };
      const at = reason?.line ?? probeLine!;
      f.add('probe.interface', 'bpf-link', probeLine ?? at, 'attach', subject);
      f.kindOf(subject, probeLine ?? at, 'attach');
      if (symbol) f.add('probe.target', symbol, probeLine ?? at, symbol, subject);
      const errno = reason ? errnoForStrerror(reason.text) : undefined;
      f.add('probe.registration.result', errno ?? 'error', at, reason?.text, subject);
      if (reason) f.add('probe.registration.reason', reason.text, reason.line, reason.text, subject);
      return { kind: 'bcc', facts: f.facts, problems: [] };
    },
  },
  {
    // A bcc program's probes (issue 21): `b.attach_kprobe(event="SYM", ...)` /
    // `attach_kretprobe`, and the functions bcc attaches by their name alone, `kprobe__SYM` (an
    // entry kprobe on SYM) and `kretprobe__SYM` (a return probe). Only a program with no return
    // probe says something of its own: it is about its entry probes, which take no instance.
    kind: 'bcc-program',
    sniff: (text) => BCC_PROBE.test(text) && !/^Traceback \(most recent call last\):/m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const probes: Array<{ kind: 'entry' | 'return'; symbol: string; line: number; needle: string }> = [];
      lines.forEach((l, i) => {
        for (const m of l.matchAll(BCC_PROBES)) {
          const ret = (m[1] ?? m[3]) !== undefined;
          probes.push({ kind: ret ? 'return' : 'entry', symbol: (m[2] ?? m[4])!, line: i + 1, needle: m[0] });
        }
      });
      if (probes.length === 0) return { kind: 'bcc-program', facts: [], problems: [] };
      const returns = probes.filter((p) => p.kind === 'return');
      if (returns.length) {
        // bcc's attach_kretprobe call (Python) is always a kernel kretprobe, never a trampoline:
        // made through perf_event_open with the default pool, or, given a maxactive, a tracefs
        // r<N>: event with that pool (bcc PR #2224; kernel-history.md §2). A `kretprobe__SYM` name
        // alone is no such call (gobpf's ELF programs and trace output use it too).
        const calls = returns.filter((p) => p.needle.startsWith('attach_'));
        const symbols = [...new Set(calls.map((p) => p.symbol))];
        const first = calls[0];
        if (!first) return { kind: 'bcc-program', facts: [], problems: [] };
        const subject: Subject = { kind: 'return', ...(symbols.length === 1 ? { symbol: first.symbol } : {}) };
        const withPool = calls.every((c) => /\bmaxactive\s*=/.test(lines[c.line - 1] ?? ''));
        const withoutPool = calls.every((c) => !/\bmaxactive\s*=/.test(lines[c.line - 1] ?? ''));
        if (withPool) f.add('probe.interface', 'tracefs', first.line, 'maxactive', subject);
        else if (withoutPool) {
          f.add('probe.interface', 'bpf-link', first.line, first.needle, subject);
          f.add('probe.bpf_attach', 'perf-kretprobe', first.line, first.needle, subject);
        }
        if (symbols.length === 1) f.add('probe.target', first.symbol, first.line, first.symbol, subject);
        return { kind: 'bcc-program', facts: f.facts, problems: [] };
      }
      // Several entry probes share the kind, not a target: the target is named only when there is one.
      const symbols = [...new Set(probes.map((p) => p.symbol))];
      const first = probes[0]!;
      const subject: Subject = { kind: 'entry', ...(symbols.length === 1 ? { symbol: first.symbol } : {}) };
      f.kindOf(subject, first.line, first.needle);
      if (symbols.length === 1) f.add('probe.target', first.symbol, first.line, first.symbol, subject);
      return { kind: 'bcc-program', facts: f.facts, problems: [] };
    },
  },
  {
    // A libbpf program's sections (SEC("kretprobe/SYM"), SEC("kretprobe.multi/PATTERN"),
    // SEC("fexit/SYM")): the section names how libbpf attaches the program. kretprobe is a perf
    // kretprobe (the kernel default pool), kretprobe.multi a kprobe_multi link (one fprobe pool for
    // its functions, none from 6.14), fexit a BPF trampoline (no pool): kernel-history.md §3, §4.
    kind: 'libbpf-program',
    sniff: (text) => LIBBPF_SECTION.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const progs: Array<{ how: 'perf-kretprobe' | 'kprobe-multi' | 'fexit' | 'entry'; symbol?: string; line: number; needle: string }> = [];
      lines.forEach((l, i) => {
        for (const m of l.matchAll(LIBBPF_SECTIONS)) {
          const how = m[1] === 'kretprobe' ? 'perf-kretprobe' : m[1] === 'kretprobe.multi' ? 'kprobe-multi' : m[1] === 'fexit' ? 'fexit' : 'entry';
          progs.push({ how, ...(m[2] && !/[*?]/.test(m[2]) ? { symbol: m[2] } : {}), line: i + 1, needle: m[0] });
        }
      });
      const returns = progs.filter((p) => p.how !== 'entry');
      const hows = [...new Set(returns.map((p) => p.how))];
      // Return programs attached more than one way say nothing of one probe's pool.
      if (hows.length !== 1) return { kind: 'libbpf-program', facts: [], problems: [] };
      const symbols = [...new Set(returns.map((p) => p.symbol))];
      const first = returns[0]!;
      const subject: Subject = { kind: 'return', ...(symbols.length === 1 && first.symbol ? { symbol: first.symbol } : {}) };
      f.add('probe.interface', 'bpf-link', first.line, first.needle, subject);
      f.add('probe.bpf_attach', hows[0]!, first.line, first.needle, subject);
      if (symbols.length === 1 && first.symbol) f.add('probe.target', first.symbol, first.line, first.symbol, subject);
      return { kind: 'libbpf-program', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'error_log',
    files: ['error_log'],
    command: /error_log/,
    sniff: (text) => /^\[\s*\d+\.\d+\]\s+\S.*: error: /m.test(text) && /^\s+Command: /m.test(text),
    read: (text, ctx) => {
      const f = new Facts(linesOf(text));
      const r = parseErrorLog(text);
      for (const e of r.entries) {
        const subject = commandSubject(e.command) ?? {};
        const errno = errnoForReason(e.reason, { release: ctx.release, word: e.word });
        // error_log holds only refused writes: the registration failed, with this errno when the reason and release decide it.
        f.add('probe.registration.result', errno ?? 'error', e.line, e.reason, subject);
        f.add('probe.registration.reason', e.word ? `${e.reason} (at "${e.word}")` : e.reason, e.line, e.reason, subject);
        f.add('probe.interface', 'tracefs', e.line, e.subsystem, subject);
      }
      return { kind: 'error_log', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'perf-probe',
    command: /^perf probe\b/,
    // Its refusal pasted alone ("Error: Failed to add events. Reason: ... (Code: -N)", "Probe point
    // 'SYM%return' not found.") is perf probe's too.
    sniff: (text) => /^Added new events?:$/m.test(text) || (text.includes('(on ') && /^\s*\w+:\w+\s+\(on \S+\)$/m.test(text)) || /^\s*(?:Error: )?Failed to add events\./m.test(text) || /^\s*Probe point '[^']+' not found\./m.test(text),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parsePerfProbe(text);
      for (const ev of r.events) {
        const subject: Subject = { event: `${ev.group}:${ev.event}`, kind: ev.retprobe ? 'return' : 'entry', symbol: ev.symbol };
        f.add('probe.interface', 'perf-probe', ev.line, `${ev.group}:${ev.event}`, subject);
        f.kindOf(subject, ev.line, `${ev.group}:${ev.event}`);
        f.add('probe.target', ev.symbol, ev.line, `on ${ev.symbol}`, subject);
        if (ev.module) f.add('probe.target_module', ev.module, ev.line, `in ${ev.module}`, subject);
        if (r.added) f.add('probe.registration.result', 'ok', ev.line, `${ev.group}:${ev.event}`, subject);
      }
      // A failure is the probe the command line asked for (an entry probe's is not the return
      // probe's): a symbol perf could not find is ENOENT, a definition the kernel refused is the
      // errno of its strerror() text.
      const asked: Subject | undefined = r.asked ? { kind: r.asked.retprobe ? 'return' : 'entry', symbol: r.asked.symbol } : undefined;
      if (r.asked && r.events.length === 0) {
        f.add('probe.interface', 'perf-probe', r.asked.line, 'perf probe', asked);
        f.add('probe.target', r.asked.symbol, r.asked.line, r.asked.symbol, asked);
        f.kindOf(asked!, r.asked.line, r.asked.symbol);
      }
      const err = r.errors.find((e) => e.notFound) ?? r.errors.find((e) => e.strerror !== undefined);
      if (err) {
        f.add('probe.interface', 'perf-probe', err.line, undefined, asked);
        f.add('probe.registration.result', err.notFound ? 'ENOENT' : (errnoForStrerror(err.strerror ?? '') ?? 'error'), err.line, err.strerror, asked);
        f.add('probe.registration.reason', err.message, err.line, undefined, asked);
      }
      return { kind: 'perf-probe', facts: f.facts, problems: [] };
    },
  },
  {
    // perf stat's counts of a perf probe return event (`F__return`) and of its entry twin (`F`):
    // the returns in the window and the calls the entry probe saw, with no record buffer between.
    kind: 'perf-stat',
    command: /^perf stat\b/,
    sniff: (text) => /^\s*Performance counter stats for\b/m.test(text) && /^\s*[\d,. ]+\s+[\w.-]+:[\w.]+__return\b/m.test(text),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parsePerfStat(text);
      const returns = r.counts.filter((c) => c.event.endsWith('__return'));
      // One return event: two would be two probes, and which is the case's is not this output's to say.
      if (returns.length === 1) {
        const ret = returns[0]!;
        const subject: Subject = { event: ret.event, kind: 'return' };
        if (ret.count !== undefined) f.add('ledger.returns', ret.count, ret.line, ret.event, subject);
        const twin = r.counts.find((c) => c.event === ret.event.slice(0, -'__return'.length));
        if (twin?.count !== undefined) f.add('ledger.entry_events', twin.count, twin.line, twin.event, subject);
      }
      return { kind: 'perf-stat', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'bpftool-link-json',
    command: /^bpftool\b.*\b(?:-j|--json|-p|--pretty)\b.*\blink\b/,
    sniff: (text) => /^\s*\[\s*\{/.test(text) && /"type"\s*:/.test(text),
    read: (text) => readBpftoolLinks(text, 'bpftool-link-json'),
  },
  {
    kind: 'bpftool-link',
    command: /^bpftool\b.*\blink\b/,
    sniff: (text) => /^\d+: (?:perf_event|kprobe_multi|tracing)\s/m.test(text) && /^\s+(?:kretprobe|kprobe|attach_type)\b/m.test(text),
    read: (text) => readBpftoolLinks(text, 'bpftool-link'),
  },
  {
    // A BPF program on a kprobe perf event (bpftool perf show): the kretprobe perf_event_open made
    // for it, with the default pool (bcc, bpftrace, libbpf's perf attach), registered while listed.
    kind: 'bpftool-perf',
    command: /^bpftool\b.*\bperf\b/,
    sniff: (text) => /^\s*pid \d+\s+fd \d+: prog_id \d+\s+k(?:ret)?probe\s/m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const r = parseBpftoolPerf(text);
      const ret = r.probes.filter((p) => p.retprobe);
      // The return probe's line; with none, the thread's entry probe (its facts bound to it).
      const chosen = ret.length ? ret : r.probes;
      const funcs = [...new Set(chosen.map((p) => p.func ?? ''))];
      const p = chosen[0];
      if (p) {
        // Several functions on one list: which is the thread's is not said here, so no symbol binds it.
        const subject: Subject = { kind: p.retprobe ? 'return' : 'entry', ...(funcs.length === 1 && p.func ? { symbol: p.func } : {}) };
        const needle = p.retprobe ? 'kretprobe' : 'kprobe';
        if (funcs.length === 1 && p.func) f.add('probe.target', p.func, p.line, p.func, subject);
        f.add('probe.registration.result', 'ok', p.line, needle, subject);
        if (p.retprobe) f.add('probe.bpf_attach', 'perf-kretprobe', p.line, needle, subject);
      }
      return { kind: 'bpftool-perf', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'bpftool-prog',
    command: /^bpftool\b.*\bprog\b/,
    sniff: (text) => /^\d+: (?:kprobe|tracing|perf_event)\s+name \S+/m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const r = parseBpftoolProgs(text);
      const p = r.progs.find((x) => x.recursionMisses !== undefined && x.statsLine !== undefined);
      if (p && p.statsLine !== undefined) f.add('counters.end.recursion_misses', p.recursionMisses ?? 0, p.statsLine, /recursion_misses/.test(lines[p.statsLine - 1] ?? '') ? 'recursion_misses' : 'run_cnt');
      return { kind: 'bpftool-prog', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'dmesg',
    command: /^(?:dmesg|journalctl)\b/,
    // An elision mark ("[…]", "...") between log lines is the poster's, not a line of another artifact.
    sniff: (_t, nonblank) => nonblank.some((l) => !/^\s*(?:\[(?:…|\.\.\.)\]|…|\.\.\.)\s*$/.test(l)) && nonblank.every((l) => /^\s*(?:\[(?:…|\.\.\.)\]|…|\.\.\.)\s*$|^\s*(?:[A-Z][a-z]{2} [ 0-9]\d [\d:]{8} \S+ kernel: |\[\s*\d+\.\d+\]\s|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d [\d:]{8} \d{4}\]\s)/.test(l)),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parseDmesg(text);
      // samples/kprobes/kretprobe_example.c and the modules built on it: "Planted return probe at S"
      // starts a registration (register_kretprobe() sets nmissed to 0), "Missed probing N instances
      // of S" is printed when that registration ends. A count printed before a later "Planted" is
      // an ended registration's, not the current one's.
      // (A report that plants nothing is no registration: a count's symbol left unsaid matched every one.)
      const plantedAt = (sym: string | undefined, after: number) => r.reports.find((x) => x.line > after && x.planted !== undefined && x.planted.symbol === sym);
      const lastPlantBefore = (sym: string | undefined, before: number) => [...r.reports].reverse().find((x) => x.line < before && x.planted !== undefined && x.planted.symbol === sym);
      const plantedSymbols = new Set(r.reports.filter((x) => x.planted !== undefined).map((x) => x.planted!.symbol));
      for (const rep of r.reports) {
        const subject: Subject = { kind: 'return', ...(rep.symbol ? { symbol: rep.symbol } : {}) };
        // A count that names no function is of the function the log plants, when it plants one only.
        const sym = rep.symbol ?? (plantedSymbols.size === 1 ? [...plantedSymbols][0] : undefined);
        if (rep.nmissed !== undefined && !rep.planted && plantedAt(sym, rep.line)) continue;
        // The same for an exit message followed by another one of the same function: the module was
        // loaded again, and the earlier count is an ended registration's.
        if (rep.atUnregister && r.reports.some((x) => x.line > rep.line && x.atUnregister && x.symbol === rep.symbol)) continue;
        const plant = rep.nmissed !== undefined && sym !== undefined ? lastPlantBefore(sym, rep.line) : undefined;
        // Registration zeroes both counts: rp->nmissed in register_kretprobe(), kp->nmissed in
        // register_kprobe() (kernel/kprobes.c, v6.12; kernel-facts.md §2). So the count of a
        // registration the log plants starts at 0, and so does the total the exit message prints
        // after unregistering (issue 20, silent 3: a fact fixed by construction), planted or not.
        const from = plant ?? (rep.atUnregister ? rep : undefined);
        if (from) {
          const word = plant ? 'Planted' : 'Missed probing';
          f.add('counters.start.nmissed', 0, from.line, word, subject);
          f.add('counters.start.kprobe_nmissed', 0, from.line, word, subject);
          for (const p of ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch']) f.add(p, 'reg-1', from.line, word, subject);
          // A kernel module's message: the probe was made with register_kretprobe().
          if (!plant) f.add('probe.interface', 'module', from.line, word, subject);
        }
        if (rep.planted) {
          f.add('probe.interface', 'module', rep.line, 'Planted', subject);
          f.add('probe.target', rep.planted.symbol, rep.line, rep.planted.symbol, subject);
          f.add('probe.registration.result', 'ok', rep.line, 'Planted', subject);
        }
        if (rep.release !== undefined) f.add('kernel.release', rep.release, rep.line, rep.release);
        if (rep.registerFailed) {
          // register_kprobe() is an entry probe's registration: bound to it, never the return probe's.
          const about: Subject = rep.registerFailed.entry ? { ...subject, kind: 'entry' } : subject;
          f.add('probe.interface', 'module', rep.line, 'register_k', about);
          f.add('probe.registration.result', ERRNO_NAMES[rep.registerFailed.errno] ?? `errno ${rep.registerFailed.errno}`, rep.line, 'err', about);
          if (rep.symbol) f.add('probe.target', rep.symbol, rep.line, rep.symbol, about);
        }
        if (rep.maxactive !== undefined) f.add('probe.maxactive.effective', rep.maxactive, rep.line, 'maxactive', subject);
        if (rep.nmissed !== undefined) {
          f.add('counters.end.nmissed', rep.nmissed, rep.line, rep.nmissed, subject);
          f.add('counters.source', 'module-field', rep.line, rep.nmissed, subject);
        }
        if (rep.kprobeNmissed !== undefined) f.add('counters.end.kprobe_nmissed', rep.kprobeNmissed, rep.line, 'kp.nmissed', subject);
        if (rep.symbol && !rep.planted && !rep.registerFailed) f.add('probe.target', rep.symbol, rep.line, rep.symbol, subject);
      }
      return { kind: 'dmesg', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'kprobes_list',
    files: ['kprobes_list'],
    unread: ['probe.armed'],
    command: /kprobes\/list/,
    sniff: readsAll(parseKprobesList, (r) => r.entries.length),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parseKprobesList(text);
      for (const e of r.entries) {
        const subject: Subject = { kind: e.type === 'r' ? 'return' : 'entry', ...(e.symbol ? { symbol: e.symbol } : {}) };
        if (e.symbol) f.add('probe.target', e.symbol, e.line, e.symbol, subject);
        f.kindOf(subject, e.line, e.symbol);
        f.add('probe.armed', isArmed(e), e.line, e.flags.length ? `[${e.flags[0]}]` : e.symbol, subject);
      }
      return { kind: 'kprobes_list', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'kprobe_events-write',
    command: /^echo\b.*kprobe_events/,
    // A tool's own report of a refused write (gobpf: cannot write "r:kretprobes/x x" to kprobe_events: ...).
    sniff: (text) => TOOL_WRITE.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      let last: KprobeEventDef | undefined;
      lines.forEach((l, i) => {
        const tool = TOOL_WRITE.exec(l);
        if (tool) {
          const def = parseKprobeEventLine(tool[2] ?? '');
          if (typeof def === 'string') return;
          definitionFacts(f, def, i + 1, false);
          const reason = (tool[3] ?? '').trim();
          f.add('probe.registration.result', errnoForStrerror(reason) ?? 'error', i + 1, reason, defSubject(def));
          if (reason) f.add('probe.registration.reason', reason, i + 1, reason, defSubject(def));
          return;
        }
        // The shell's report of a refused write is the errno the kernel returned: "sh: write error:
        // Invalid argument"; of a refused open for the redirect ("bash: /sys/kernel/tracing/kprobe_events:
        // Permission denied", not root), the errno of that open: the definition was never written.
        const refused = /\bwrite error: (.+)$/.exec(l) ?? /^\s*-?(?:ba|z|da)?sh:\s+(?:line \d+:\s+)?\/\S*\/kprobe_events:\s+(.+)$/.exec(l);
        if (refused && last) {
          const errno = errnoForStrerror(refused[1] ?? '');
          const subject = defSubject(last);
          f.add('probe.registration.result', errno ?? 'error', i + 1, refused[1], subject);
          return;
        }
        const q = /echo\s+(['"])(.*?)\1/.exec(l) ?? /echo\s+(\S+\s+\S+)/.exec(l);
        const written = q ? (q[2] ?? q[1] ?? '') : '';
        const def = parseKprobeEventLine(written);
        if (typeof def !== 'string') {
          definitionFacts(f, def, i + 1, false);
          last = def;
        }
      });
      return { kind: 'kprobe_events-write', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'kprobe_events',
    files: ['kprobe_events'],
    command: /kprobe_events/,
    sniff: readsAll(parseKprobeEvents, (r) => r.events.length),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parseKprobeEvents(text);
      for (const d of r.events) definitionFacts(f, d, d.line, true);
      return { kind: 'kprobe_events', facts: f.facts, problems: r.problems };
    },
  },
  {
    // Every dynamic event, kprobes and fprobes alike (kernel/trace/trace_dynevent.c): an fprobe exit
    // event (`fN:GROUP/EVENT SYM%return`, 6.5 and later) is read back only here, never in kprobe_events.
    kind: 'dynamic_events',
    files: ['dynamic_events'],
    command: /dynamic_events/,
    sniff: readsAll(parseDynamicEvents, (r) => r.kprobes.length + r.fprobes.length),
    read: (text) => {
      const f = new Facts(linesOf(text));
      const r = parseDynamicEvents(text);
      for (const d of r.kprobes) definitionFacts(f, d, d.line, true);
      for (const d of r.fprobes) fprobeFacts(f, d);
      return { kind: 'dynamic_events', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'kprobe_profile',
    files: ['kprobe_profile'],
    unread: ['counters.end.nmissed', 'counters.end.hits'],
    command: /kprobe_profile/,
    sniff: readsAll(parseKprobeProfile, (r) => r.rows.length),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const r = parseKprobeProfile(text);
      for (const row of r.rows) {
        const l = lines[row.line - 1] ?? '';
        const cols = l.trim().split(/\s+/);
        const nameEnd = l.indexOf(cols[0] ?? '') + (cols[0] ?? '').length;
        const subject: Subject = { event: row.event };
        f.facts.push({ path: 'counters.hits', value: row.hits, line: row.line, col: Math.max(0, l.indexOf(cols[1] ?? '', nameEnd)), subject });
        f.facts.push({ path: 'counters.nmissed', value: row.misses, line: row.line, col: Math.max(0, l.lastIndexOf(cols[2] ?? '')), subject });
      }
      return { kind: 'kprobe_profile', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'uname',
    files: ['uname_r'],
    command: /^uname\b/,
    // `uname -r` alone, or `uname -a` first in a paste (some post it without the node name: "Linux 5.10.23-1-MANJARO #1 SMP PREEMPT ...").
    sniff: (_t, nonblank) => (nonblank.length === 1 && /^\s*\d+\.\d+(?:\.\d+)?[-+]\S+\s*$/.test(nonblank[0] ?? '')) || UNAME_A.test(nonblank[0] ?? ''),
    read: (text, ctx) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      // `uname -a`: KERNEL-NAME [NODENAME] RELEASE #VERSION ... MACHINE ...; the release keeps its vendor suffix.
      const all = lines.findIndex((l) => UNAME_A.test(l));
      if (all >= 0) {
        const m = UNAME_A.exec(lines[all]!)!;
        const rel = m[1] ?? '';
        f.add('kernel.release', rel, all + 1, rel);
        const rest = (lines[all] ?? '').slice((lines[all] ?? '').indexOf(rel) + rel.length);
        const arch = UNAME_ARCH.exec(rest);
        if (arch) f.add('kernel.arch', arch[1] ?? '', all + 1, ` ${arch[1]}`);
        // The version string names the preemption model the kernel was built with (one reading:
        // preemptionOf). Only when the build words are there to read: after #N, up to the build
        // date or, where a distribution writes its own ("Debian 6.1.176-1 (2026-07-02)"), the machine.
        const end = /\s(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s/.exec(rest)?.index ?? arch?.index;
        const version = end === undefined ? '' : (/#\S+\s+(.*)$/.exec(rest.slice(0, end))?.[1] ?? '').trim();
        if (version) {
          const token = preemptTokenOf(version.split(/\s+/));
          f.add('kernel.preemption', preemptionOf(token), all + 1, token === 'none' ? version : token);
        }
        return { kind: 'uname', facts: f.facts, problems: [] };
      }
      // `uname -m` (alone or before another command's output): a machine name, never a release.
      if (/\s-m\b/.test(ctx.command ?? '') && !/\s-[a-ln-z]*r/.test(ctx.command ?? '')) {
        const i = lines.findIndex((l) => l.trim() !== '');
        const arch = (lines[i] ?? '').trim();
        if (/^[a-z0-9_]+$/.test(arch) && !/^\d+$/.test(arch)) f.add('kernel.arch', arch, i + 1, arch);
        return { kind: 'uname', facts: f.facts, problems: [] };
      }
      const r = parseUnameRelease(text);
      if (r.release && r.line) f.add('kernel.release', r.release, r.line, r.release);
      return { kind: 'uname', facts: f.facts, problems: r.problems };
    },
  },
  {
    kind: 'uname_m',
    files: ['uname_m'],
    read: oneLine('uname_m', parseUnameMachine, (r, f) => { if (r.arch && r.line) f.add('kernel.arch', r.arch, r.line, r.arch); }),
  },
  {
    kind: 'proc_version',
    files: ['proc_version'],
    command: /\/proc\/version/,
    sniff: (_t, nonblank) => nonblank.length === 1 && /^Linux version /.test((nonblank[0] ?? '').trim()),
    read: oneLine('proc_version', parseProcVersion, (r, f) => {
      if (r.release && r.line) f.add('kernel.release', r.release, r.line, r.release);
      if (r.upstream && r.line) f.add('kernel.version', r.upstream, r.line, r.upstream);
      if (r.preempt && r.line) f.add('kernel.preemption', preemptionOf(r.preempt), r.line, r.preempt === 'none' ? '#' : r.preempt);
    }),
  },
  {
    // Kernel config lines (/proc/config.gz, /boot/config-RELEASE, or a grep of them).
    kind: 'kernel-config',
    files: ['config'],
    command: /\bconfig\.gz\b|\/boot\/config-|\bCONFIG_[A-Z]/,
    sniff: (_t, nonblank) => nonblank.every((l) => CONFIG_LINE.test(l)),
    read: (text, ctx) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const set = new Map<string, { value: string; line: number }>();
      lines.forEach((l, i) => {
        const m = CONFIG_LINE.exec(l);
        if (m) set.set((m[1] ?? m[3])!, { value: m[1] !== undefined ? (m[2] ?? '') : 'n', line: i + 1 });
      });
      const preemption = configPreemption(set, ctx.collected === true || grepKeepsDynamic(ctx.command));
      if (preemption) f.add('kernel.preemption', preemption.value, preemption.line, preemption.symbol);
      return { kind: 'kernel-config', facts: f.facts, problems: [] };
    },
  },
  {
    // A trace event's enable file read back (`cat /sys/kernel/tracing/events/GRP/EVENT/enable`):
    // "0" is a probe event that was not enabled, so its probe was not armed; "1" says nothing alone
    // (the probe may still be [GONE] or kprobes off), as the bundle reads it (bundle.ts armedIn).
    kind: 'event-enable',
    command: /\/events\/[\w.-]+\/[\w.-]+\/enable\b/,
    read: (text, ctx) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const at = switchedOffAt(text);
      const ev = /\/events\/([\w.-]+)\/([\w.-]+)\/enable\b/.exec(ctx.command ?? '');
      if (at !== undefined && ev) f.add('probe.armed', false, at, '0', { event: `${ev[1]}/${ev[2]}` });
      return { kind: 'event-enable', facts: f.facts, problems: [] };
    },
  },
  {
    // kprobes' global switch (`cat /sys/kernel/debug/kprobes/enabled`, kernel/kprobes.c
    // arm_all_kprobes/disarm_all_kprobes): "0" disarms every kprobe and kretprobe on the system.
    kind: 'kprobes_enabled',
    command: /kprobes\/enabled\b/,
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const at = switchedOffAt(text);
      if (at !== undefined) f.add('probe.armed', false, at, '0');
      return { kind: 'kprobes_enabled', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'cpu_possible',
    files: ['cpu_possible'],
    command: /cpu\/possible/,
    read: oneLine('cpu_possible', parseCpuPossible, (r, f) => { if (r.count !== undefined && r.line) f.add('kernel.possible_cpus', r.count, r.line, r.list); }),
  },
  {
    // strace of a tracer writing its probe to kprobe_events: the kernel's errno for the definition,
    // its kind taken from the definition ("p:" or "r:"), never assumed.
    kind: 'strace',
    command: /^strace\b/,
    sniff: (text) => text.includes('write(') && STRACE_WRITE.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      lines.forEach((l, i) => {
        const m = STRACE_WRITE.exec(l);
        if (!m) return;
        // A definition the kernel refused may not parse (that can be why): its kind is its first letter.
        const def = parseKprobeEventLine(m[1] ?? '');
        const subject: Subject = typeof def === 'string' ? { kind: m[1]!.startsWith('r') ? 'return' : 'entry' } : defSubject(def);
        f.add('probe.interface', 'tracefs', i + 1, m[1], subject);
        if (typeof def !== 'string' && def.symbol && /^[A-Za-z_][\w.]*$/.test(def.symbol)) f.add('probe.target', def.symbol, i + 1, def.symbol, subject);
        f.add('probe.registration.result', m[2] ?? 'error', i + 1, m[2], subject);
      });
      return { kind: 'strace', facts: f.facts, problems: [] };
    },
  },
  {
    // Other tracers' and agents' own count of records they dropped (ply, tetragon, bcc's perf
    // buffer, ftrace's ring-buffer marker): records lost after the probe fired, the ledger's
    // lost-events fact, never the kretprobe's nmissed.
    kind: 'lost-events',
    sniff: (text) => FTRACE_LOSS.test(text) || (/lost|discarded/i.test(text) && (LOST_LINE.test(text) || PERF_LOST.test(text) || DISCARDED_PACKETS.test(text))),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const problems: LineProblem[] = [];
      // ftrace's ring buffer: its markers and the `trace` header, read as the ledger and a bundle
      // read them (src/evidence/trace.ts lostEventsOf).
      const loss = noTraceLoss();
      let first: { line: number; needle: string } | undefined;
      // A tracer's own buffer (perf's, a BPF ring or perf buffer): what it says it lost is its
      // loss, not the trace's; perf's chunks are a floor (each PERF_RECORD_LOST is at least one sample).
      let overruns = 0;
      let firstOverrun: { line: number; needle: string } | undefined;
      // Packets discarded: a sum of the counted lines would understate the loss, so none is given.
      let overrunsUncounted = false;
      lines.forEach((l, i) => {
        const p = PERF_LOST.exec(l);
        if (p) {
          overruns += Number(p[1] ?? p[2]);
          firstOverrun ??= { line: i + 1, needle: p[0] };
          return;
        }
        if (FTRACE_LOSS.test(l)) {
          const t = parseTraceLine(l.trim());
          if (t?.kind === 'lost' || t?.kind === 'header') {
            addTraceLoss(loss, t);
            if (t.kind === 'lost' || t.written > t.inBuffer) first ??= { line: i + 1, needle: t.kind === 'lost' ? (l.includes('[LOST') ? '[LOST' : 'EVENTS DROPPED') : 'entries-in-buffer' };
            if (t.kind === 'lost' && t.count === undefined) problems.push({ line: i + 1, expected: 'a lost-events marker with a count', got: `${l.trim()}: the trace lost records, how many is unknown` });
            return;
          }
        }
        if (DISCARDED_PACKETS.test(l)) {
          // A packet holds any number of records: the loss is known to be there, not its size.
          overrunsUncounted = true;
          problems.push({ line: i + 1, expected: 'a count of discarded events', got: `${l.trim()}: the tracer's buffers lost records, how many is unknown` });
          return;
        }
        const m = LOST_LINE.exec(l);
        const n = m ? Number(m[1] ?? m[2] ?? m[3] ?? m[4]) : NaN;
        if (!Number.isSafeInteger(n)) return;
        // The others are a BPF tool's buffer (docs/case-format.md: lost_events [LOST N EVENTS],
        // buffer_overruns a tracer's buffers).
        overruns += n;
        firstOverrun ??= { line: i + 1, needle: m![0] };
      });
      const lost = lostEventsOf(loss);
      if (loss.markers > 0 || loss.overwritten !== undefined) {
        // A header with nothing overwritten and no marker: the buffer lost nothing before the read.
        if (lost !== undefined) f.add('ledger.lost_events', lost, first?.line ?? lines.findIndex((l) => l.includes('entries-in-buffer')) + 1, first?.needle ?? 'entries-in-buffer');
      }
      if (firstOverrun && !overrunsUncounted) f.add('ledger.buffer_overruns', overruns, firstOverrun.line, firstOverrun.needle.trim());
      plySession(lines, f);
      return { kind: 'lost-events', facts: f.facts, problems };
    },
  },
  {
    // The ring buffer's own per-CPU counts: what it overwrote, dropped or could not commit since it
    // was last cleared, whatever part of the trace anyone read (src/evidence/bufferStats.ts).
    kind: 'buffer_stats',
    files: ['buffer_stats'],
    unread: ['ledger.buffer_overruns'],
    command: /per_cpu\/cpu[^/\s]*\/stats/,
    sniff: (text) => /^\s*overrun: \d+\s*$/m.test(text) && /^\s*commit overrun: \d+\s*$/m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const r = parseBufferStats(text);
      const lost = r.cpus.map(lostOf);
      if (r.cpus.length > 0 && lost.every((x) => x !== undefined)) {
        const at = r.cpus.find((c) => (lostOf(c) ?? 0) > 0) ?? r.cpus[0]!;
        f.add('ledger.lost_events', (lost as number[]).reduce((a, b) => a + b, 0), at.line, 'entries');
      }
      return { kind: 'buffer_stats', facts: f.facts, problems: r.problems };
    },
  },
  {
    // ply's own session lines, without a loss to report.
    kind: 'ply',
    sniff: (text) => PLY_SESSION.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      plySession(lines, f);
      return { kind: 'ply', facts: f.facts, problems: [] };
    },
  },
  {
    // SystemTap's report at module exit, when the script ran with timing (-t, STP_TIMING): for a
    // `.return` probe, "Skipped due to missed kretprobe/1 on 'PP': N" is its kretprobe's nmissed
    // (the pool ran dry) and ".../2 ...: N" its kprobe's kp.nmissed, each printed only when not 0
    // and read as the probe is unregistered (runtime/linux/kprobes.c stapkp_add_missed): the
    // totals of the one registration the session made, which started at 0. The total "skipped
    // probes" of "Number of errors: E, skipped probes: S" also counts lock timeouts, reentrancy and
    // other causes of SystemTap's own: it is not a kretprobe's miss count, and is read as nothing.
    kind: 'systemtap',
    command: /^stap\b/,
    sniff: (text) => STAP_MISSED.test(text) || /^WARNING: Number of errors: \d+, skipped probes: \d+/m.test(text),
    read: (text) => {
      const lines = linesOf(text);
      const f = new Facts(lines);
      const seen: Array<{ line: number; part: '1' | '2'; pp: string; n: number }> = [];
      lines.forEach((l, i) => {
        const m = new RegExp(STAP_MISSED.source).exec(l);
        if (m) seen.push({ line: i + 1, part: m[1] as '1' | '2', pp: m[2] ?? '', n: Number(m[3]) });
      });
      // One return probe point: with several, a count is one of them and the case is which is asked.
      const pps = [...new Set(seen.map((x) => x.pp))];
      if (pps.length !== 1) return { kind: 'systemtap', facts: [], problems: [] };
      const pp = pps[0]!;
      const symbol = /\bfunction\("([A-Za-z_][\w.]*)(?:@[^"]*)?"\)/.exec(pp)?.[1];
      const subject: Subject = { kind: 'return', ...(symbol ? { symbol } : {}) };
      const first = seen[0]!;
      f.add('probe.interface', 'module', first.line, 'Skipped', subject);
      if (symbol) f.add('probe.target', symbol, first.line, symbol, subject);
      f.add('counters.source', 'module-field', first.line, 'kretprobe/', subject);
      for (const p of ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch']) f.add(p, 'reg-1', first.line, 'Skipped', subject);
      for (const part of ['1', '2'] as const) {
        const x = seen.find((y) => y.part === part);
        const field = part === '1' ? 'nmissed' : 'kprobe_nmissed';
        // Either line is printed only with timing on, which prints the other too when it is not 0.
        f.add(`counters.start.${field}`, 0, first.line, 'Skipped', subject);
        f.add(`counters.end.${field}`, x ? x.n : 0, x ? x.line : first.line, x ? String(x.n) : 'Skipped', subject);
      }
      return { kind: 'systemtap', facts: f.facts, problems: [] };
    },
  },
  {
    kind: 'kallsyms',
    files: ['kallsyms'],
    command: /kallsyms/,
    read: (text, ctx) => {
      const f = new Facts(linesOf(text));
      if (ctx.target === undefined) return { kind: 'kallsyms', facts: [], problems: [] };
      const r = parseKallsyms(text, ctx.target);
      const own = r.symbols.find((s) => s.role === 'function');
      const subject: Subject = { symbol: ctx.target };
      if (own) f.add('probe.target_module', own.module ?? null, own.line, own.module ?? own.name, subject);
      if (r.symbols.length + r.padding.length > 0) {
        const clones = [...new Set(r.symbols.filter((s) => s.role !== 'function').map((s) => s.name))];
        const firstClone = r.symbols.find((s) => s.role !== 'function');
        const at = firstClone ?? own ?? r.padding[0];
        f.add('coverage.clones', clones, at?.line ?? 1, at?.name, subject);
        // Only clones of the function, not the function itself (nor its __pfx_ padding): the plain
        // name is not in kallsyms, so a probe registered by that name fails with ENOENT
        // (kernel-facts.md §1). A listing cut short (--kallsyms-lines, `| head`) proves nothing: the
        // collector's bundle takes only the clones and the module from here.
        if (!own && firstClone && ctx.partial !== true && !r.padding.some((p) => p.role === 'function')) f.add('probe.registration.result', 'ENOENT', firstClone.line, firstClone.name, subject);
      }
      return { kind: 'kallsyms', facts: f.facts, problems: r.problems };
    },
  },
];

function readBpftoolLinks(text: string, kind: 'bpftool-link' | 'bpftool-link-json'): ArtifactReading {
  const lines = linesOf(text);
  const f = new Facts(lines);
  const r = kind === 'bpftool-link' ? parseBpftoolLinks(text) : parseBpftoolLinksJson(text);
  const link = r.links.find((k) => k.kprobe?.retprobe || k.multi?.retprobe) ?? r.links.find((k) => k.tracing?.attachType === 'trace_fexit');
  if (link?.tracing) {
    // A BPF trampoline on the function's return (fexit): no kretprobe, no pool, no miss count. The
    // link names its function only by BTF id, so the target stays the script's.
    const at = kind === 'bpftool-link' ? Math.max(link.line, lines.findIndex((x, i) => i >= link.line - 1 && /trace_fexit/.test(x)) + 1) : Math.max(1, lines.findIndex((x) => /trace_fexit/.test(x)) + 1);
    const subject: Subject = { kind: 'return' };
    f.add('probe.registration.result', 'ok', kind === 'bpftool-link' ? link.line : 1, undefined, subject);
    f.add('probe.bpf_attach', 'fexit', at, 'trace_fexit', subject);
    return { kind, facts: f.facts, problems: [] };
  }
  // A kprobe perf link names one function; a kprobe_multi link one miss count for all of its
  // functions (fprobe's one pool), so its target is the first function it lists, if one.
  const probe = link?.kprobe ?? link?.multi;
  if (link && probe) {
    const func = link.kprobe ? link.kprobe.func : link.multi?.funcs[0];
    // JSON gives one "line" for the whole array: cite the line naming the function.
    const funcLine = kind === 'bpftool-link' ? (func ? Math.max(link.line + 1, lines.findIndex((x, i) => i >= link.line && x.includes(func)) + 1) : link.line + 1) : Math.max(1, lines.findIndex((x) => x.includes(func ?? '\u0000')) + 1);
    const subject: Subject = { kind: 'return', ...(func ? { symbol: func } : {}) };
    if (func) f.add('probe.target', func, funcLine, func, subject);
    f.add('probe.registration.result', 'ok', kind === 'bpftool-link' ? link.line : 1, undefined, subject);
    // A perf link is a kretprobe (the default pool); a kprobe_multi link is an fprobe with one pool
    // for all of its functions (src/kernel/history.ts bpfReturnPoolOf).
    const attachLine = kind === 'bpftool-link' ? link.line + 1 : Math.max(1, lines.findIndex((x) => /"retprobe"/.test(x)) + 1);
    f.add('probe.bpf_attach', link.multi ? 'kprobe-multi' : 'perf-kretprobe', attachLine, link.multi ? 'kretprobe.multi' : 'kretprobe', subject);
    const functions = link.multi ? (link.multi.funcCnt ?? (link.multi.funcs.length || undefined)) : undefined;
    if (functions !== undefined) f.add('probe.bpf_functions', functions, attachLine, link.multi?.funcCnt !== undefined ? (kind === 'bpftool-link' ? `func_cnt ${functions}` : '"func_cnt"') : undefined, subject);
    // Plain output leaves "missed" out when it is 0 and on kernels before 6.7: only a printed value is a fact.
    if (probe.missedPrinted && probe.missed !== undefined) {
      const textLine = link.kprobe ? funcLine : link.line + 1;
      const ml = kind === 'bpftool-link' ? textLine : Math.max(1, lines.findIndex((x) => /"missed"/.test(x)) + 1) || funcLine;
      const needle = kind === 'bpftool-link' ? 'missed' : '"missed"';
      f.add('counters.end.nmissed', probe.missed, ml, kind === 'bpftool-link' ? `missed ${probe.missed}` : '"missed"', subject);
      f.add('counters.source', 'bpf-link', ml, needle, subject);
      // The link's count is its probe's since the link was made: a perf link's kretprobe is
      // registered for that perf event alone (register_kretprobe and register_kprobe zero both
      // counts), a kprobe_multi link's fprobe at the link's creation (fprobe_init zeroes nmissed).
      // One registration, from 0, as a tool-made kprobe_profile row is (issue 20, silent 3).
      f.add('counters.start.nmissed', 0, ml, needle, subject);
      for (const p of ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch']) f.add(p, 'reg-1', ml, needle, subject);
    }
  }
  return { kind, facts: f.facts, problems: [] };
}

/** Whether `name` matches a bpftrace attach point's glob (`*` any run, `?` one character). */
function globMatches(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(name);
}

/** bcc's libbpf refusing an attach, with its strerror (or its own words for ENOENT): "cannot attach kprobe, <reason>" (src/cc/libbpf.c), bpftrace built on it too. */
const LIBBPF_REFUSAL = /^\s*cannot attach k(?:ret)?probe, (.+)$/;

/**
 * The line of a switch file read back as off: an event's `enable` or kprobes' `enabled` holding
 * "0" (its only line, blank lines aside); undefined for "1" or anything else. The bundle reads
 * its snapshots of both files through it too (bundle.ts armedIn).
 */
export function switchedOffAt(text: string): number | undefined {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.trim() !== '');
  return at >= 0 && lines[at]!.trim() === '0' && lines.slice(at + 1).every((l) => l.trim() === '') ? at + 1 : undefined;
}

/** A tracer's report that one probe did not attach (attachFailureOf). */
interface AttachFailure {
  tool: 'bpftrace' | 'bpf-link';
  line: number;
  needle: string;
  kind?: 'entry' | 'return';
  symbol?: string;
  reason?: string;
  errno?: string;
  /** bpftrace went on without the probe ("could not attach probe P, skipping."): the others may be armed. */
  skipped: boolean;
}

/**
 * The first attach refusal of bpftrace or libbpf in `lines`, with the probe it names: bpftrace's
 * "Error attaching probe: 'kretprobe:SYM'" (src/attached_probe.cpp; newer "ERROR: Unable to
 * attach probe: kretprobe:SYM."), its "could not attach probe kprobe:SYM, skipping." (a wildcard
 * match, or missing_probes=warn), with the strerror bcc's libbpf printed before it under older
 * bpftrace ("cannot attach kprobe, <reason>"); libbpf's "prog 'P': failed to create kretprobe
 * 'SYM+0x0' perf event: <strerror, or errstr()'s -EXXX>". One owner for both readers that see them.
 */
function attachFailureOf(lines: readonly string[]): AttachFailure | undefined {
  let found: AttachFailure | undefined;
  let libbpfReason: string | undefined;
  lines.forEach((l, i) => {
    const c = LIBBPF_REFUSAL.exec(l);
    if (c) libbpfReason ??= c[1]!.trim();
    if (found) return;
    const bt = BPFTRACE_ATTACH.exec(l);
    if (bt) {
      const spec = /^(kretprobe|kr|kprobe|k):([A-Za-z_][\w.]*)/.exec(bt[1] ?? bt[2] ?? bt[3] ?? '');
      found = { tool: 'bpftrace', line: i + 1, needle: bt[0].trim(), skipped: bt[2] !== undefined, ...(spec ? { kind: spec[1]!.startsWith('kr') ? 'return' as const : 'entry' as const, symbol: spec[2]! } : {}) };
      return;
    }
    const lb = LIBBPF_CREATE.exec(l);
    if (lb) {
      const errno = errnoForStrerror(lb[3]!);
      found = { tool: 'bpf-link', line: i + 1, needle: `failed to create ${lb[1]}`, kind: lb[1] === 'kretprobe' ? 'return' : 'entry', symbol: lb[2]!, reason: lb[3]!.trim(), skipped: false, ...(errno ? { errno } : {}) };
    }
  });
  if (found?.tool === 'bpftrace' && libbpfReason !== undefined) {
    found.reason = libbpfReason;
    const errno = errnoForStrerror(libbpfReason);
    if (errno) found.errno = errno;
  }
  return found;
}

/** The facts of an attach refusal, bound to the probe it names. */
function addAttachFailure(f: Facts, x: AttachFailure): void {
  const subject: Subject = { ...(x.kind ? { kind: x.kind } : {}), ...(x.symbol ? { symbol: x.symbol } : {}) };
  f.add('probe.interface', x.tool, x.line, x.needle, subject);
  f.kindOf(subject, x.line, x.needle);
  if (x.symbol) f.add('probe.target', x.symbol, x.line, x.symbol, subject);
  f.add('probe.registration.result', x.errno ?? 'error', x.line, x.needle, subject);
  if (x.reason) f.add('probe.registration.reason', x.reason, x.line, x.reason, subject);
}

function readBpftrace(text: string, ctx: ReadContext, kind: 'bpftrace' | 'bpftrace-script'): ArtifactReading {
  const lines = linesOf(text);
  const f = new Facts(lines);
  const isProbeLine = (l: string) => /\b(?:kretprobe|kr|fexit|kretfunc|fr|kprobe|k|fentry|kfunc):\w/.test(l);
  // The return probe's line, wherever the script opens it; else the first probe's.
  const scriptAt = Math.max(lines.findIndex((l) => isProbeLine(l) && bpftraceProbes(l).some((p) => p.kind === 'kretprobe' || p.kind === 'fexit')), lines.findIndex(isProbeLine));
  let subject: Subject | undefined;
  // The function pattern of the subject's attach point (`tcp_grow*`): a refused match of it is the subject's.
  let subjectPoint: string | undefined;
  // The attach points of the return clause, when it is a `kretprobe:` one (read again below against
  // bpftrace's "Attaching N probes").
  let retPoints: string[] | undefined;
  if (scriptAt >= 0) {
    const script = lines[scriptAt]!;
    const probes = bpftraceProbes(script);
    const ret = probes.find((p) => p.kind === 'kretprobe' || p.kind === 'fexit');
    // A script with no return probe is about its entry probe: its facts are bound to it (never the return probe's).
    const entry = ret ? undefined : probes.find((p) => p.kind === 'kprobe');
    const p = ret ?? entry;
    if (p) {
      subject = { kind: ret ? 'return' : 'entry', symbol: p.symbol };
      subjectPoint = /^[^:]*:(?:[\w-]+:)?([^{\s,/]*)/.exec(script.slice(p.index))?.[1];
      f.add('probe.interface', p.kind === 'fexit' ? 'other' : 'bpftrace', scriptAt + 1, script.slice(p.index).split(/[{\s]/)[0], subject);
      f.kindOf(subject, scriptAt + 1, script.slice(p.index).split(/[{\s]/)[0]);
      // fexit/kretfunc: a BPF trampoline, which has no instance pool (kernel-history.md §3); the
      // interface stays `other`, as a write-up's prose names it, and probe.bpf_attach says which.
      if (p.kind === 'fexit') f.add('probe.bpf_attach', 'fexit', scriptAt + 1, script.slice(p.index).split(/[:{\s]/)[0], subject);
      // A `kretprobe:` clause on one function is a real kretprobe made through perf_event_open, with
      // the kernel's default pool (kernel-facts.md §9); only a wildcard (or, where the kernel has
      // it, a list) may become one kprobe_multi link, which bpftool link show then names.
      // An entry point in the same clause (`kprobe:f,kretprobe:f {`) is a probe of its own and does
      // not change how the return point is attached: only the clause's return points count.
      retPoints = ret?.kind === 'kretprobe' ? bpftraceClausePoints(script, p.index)?.filter((x) => /^(?:kretprobe|kr):/.test(x)) : undefined;
      if (retPoints?.length === 1 && !/[*?]/.test(retPoints[0]!)) f.add('probe.bpf_attach', 'perf-kretprobe', scriptAt + 1, retPoints[0], subject);
      if (!/[*?]/.test(script.slice(p.index).split(/[{\s,]/)[0] ?? '')) f.add('probe.target', p.symbol, scriptAt + 1, p.symbol, subject);
      if (p.module) f.add('probe.target_module', p.module, scriptAt + 1, p.module, subject);
    }
  }
  if (kind === 'bpftrace-script') return { kind, facts: f.facts, problems: [] };
  const r = parseBpftraceOutput(text);
  // "Attaching N probes..." is printed before the attach: libbpf's "cannot attach kprobe, <strerror>",
  // "ERROR: Error attaching probe" or "Warning: could not attach probe P, skipping." after it is a failure.
  // A refusal that names its probe (attachFailureOf) is that probe's: one of another probe of the
  // script is not the case probe's, though a fatal one ended the session before anything was armed.
  const named = attachFailureOf(lines);
  const ofSubject = (sym: string | undefined): boolean => sym === undefined || subject?.symbol === undefined || sym === subject.symbol || (subjectPoint !== undefined && /[*?]/.test(subjectPoint) && globMatches(subjectPoint, sym));
  const namesOther = named?.kind !== undefined && subject !== undefined && (named.kind !== subject.kind || !ofSubject(named.symbol));
  if (named && namesOther) addAttachFailure(f, named);
  const refusedAt = named ? -1 : lines.findIndex((l) => LIBBPF_REFUSAL.test(l));
  const err = r.errors[0];
  // After "Attaching", an error that names the attach or a symbol it could not find is the attach failing.
  const failedAt = named ? (namesOther ? undefined : named.line) : refusedAt >= 0 ? refusedAt + 1 : err && (!r.attached || /attach|not found|Could not resolve|No such|unknown symbol/i.test(err.message)) ? err.line : undefined;
  if (named && !namesOther) addAttachFailure(f, { ...named, tool: 'bpftrace' });
  else if (named && !named.skipped) {
    // The session ended at another probe's refusal: nothing of it was armed, and no ok is read.
  } else if (failedAt !== undefined) {
    const reason = refusedAt >= 0 ? LIBBPF_REFUSAL.exec(lines[refusedAt] ?? '')![1]!.trim() : err?.message;
    const errno = refusedAt >= 0 ? errnoForStrerror(reason ?? '') : err && /not found|Could not resolve|No such|unknown symbol/i.test(err.message) ? 'ENOENT' : undefined;
    f.add('probe.registration.result', errno ?? 'error', failedAt, refusedAt >= 0 ? reason : 'ERROR', subject);
    if (reason) f.add('probe.registration.reason', reason, failedAt, reason, subject);
  } else if (r.attached) {
    f.add('probe.registration.result', 'ok', r.attached.line, 'Attaching', subject);
    // A wildcard return clause that bpftrace counted as more probes than the script names was
    // expanded into one perf_event_open kretprobe per function: a kprobe_multi link is one probe.
    const all = retPoints?.length === 1 && /[*?]/.test(retPoints[0]!) ? bpftraceScriptPoints(lines[scriptAt]!) : undefined;
    if (all !== undefined && r.attached.probes > all) f.add('probe.bpf_attach', 'perf-kretprobe', r.attached.line, 'Attaching', subject);
    // bpftrace enables every probe once all are attached, before it prints anything: output after
    // "Attaching N probes..." (a probe's line, a map) shows the session ran with them armed.
    if (lines.slice(r.attached.line).some((l) => l.trim() !== '')) f.add('probe.armed', true, r.attached.line, 'Attaching', subject);
  }
  // A probe bpftrace names on a GCC clone (`kprobe:tcp_grow_window.isra.39`): the clone is what kallsyms has.
  const cloneAt = lines.findIndex((l) => /\bk(?:ret)?probe:[A-Za-z_]\w*\.(?:isra|constprop|part)\.\d+/.test(l));
  if (cloneAt >= 0) {
    const clone = /\bk(?:ret)?probe:([A-Za-z_]\w*\.(?:isra|constprop|part)\.\d+)/.exec(lines[cloneAt]!)![1]!;
    f.add('coverage.clones', [clone], cloneAt + 1, clone, subject);
  }
  for (const m of r.maps) {
    const to = ctx.bpftraceMaps?.find((x) => x.re.test(m.name));
    if (to && m.key === undefined) f.add(to.fact, m.value, m.line, `@${m.name}`, subject);
  }
  // Keyed counts the script assigns per probe: the last value printed of each is the total (count() never falls).
  if (ctx.countMaps && ctx.countMaps.size > 0) {
    const last = new Map<'entry' | 'return', { value: number; line: number; name: string }>();
    for (const m of r.maps) {
      const k = m.key === undefined ? undefined : ctx.countMaps.get(`${m.name}[${m.key.trim()}]`);
      if (k) last.set(k, { value: m.value, line: m.line, name: `@${m.name}[${m.key}]` });
    }
    const e = last.get('entry');
    const ret = last.get('return');
    if (e) f.add('ledger.entry_events', e.value, e.line, e.name, subject);
    if (ret) f.add('ledger.returns', ret.value, ret.line, ret.name, subject);
    // The return probe counted calls: it was registered and armed.
    if (ret && ret.value > 0 && failedAt === undefined && !r.attached) f.add('probe.registration.result', 'ok', ret.line, ret.name, subject);
  }
  // A script whose one action prints the builtin `probe` (`printf("%s\n", probe)`) on an entry and a
  // return probe of one symbol writes one line per firing, `kprobe:SYM` or `kretprobe:SYM`: the
  // lines are its entry-probe hits and its return records (issue 21 class 2, a user's own output).
  const printsProbe = /\bprintf\(\s*"%s(?:\\n)?"\s*,\s*probe\s*\)|\bprint\(\s*probe\s*\)/.test(text);
  const pair = printsProbe && r.attached && subject?.kind === 'return' ? subject.symbol : undefined;
  if (pair && lines.some((l) => bpftraceProbes(l).some((p) => p.kind === 'kprobe' && p.symbol === pair))) {
    const after = lines.map((l, n) => ({ l: l.trim(), n: n + 1 })).filter((x) => x.n > r.attached!.line);
    const entries = after.filter((x) => x.l === `kprobe:${pair}`);
    const returns = after.filter((x) => x.l === `kretprobe:${pair}`);
    const at = (entries[0] ?? returns[0])?.n;
    if (at !== undefined) {
      f.add('ledger.entry_events', entries.length, entries[0]?.n ?? at, `kprobe:${pair}`, subject);
      f.add('ledger.returns', returns.length, returns[0]?.n ?? at, `kretprobe:${pair}`, subject);
    }
  }
  // bpftrace's "Lost N events" is its perf/ring buffer's loss (docs/case-format.md buffer_overruns).
  const lost = r.lost.reduce((s, x) => s + x.count, 0);
  if (r.lost.length) f.add('ledger.buffer_overruns', lost, r.lost[0]!.line, 'Lost');
  // A script that reads `struct kretprobe` as the probe is unregistered prints its fields: the
  // registration's final miss count and its pool as allocated (what the kernel set, default or not).
  // (kprobe: on unregister_kretprobe or unregister_kretprobes, which the single call goes through,
  // with a cast of arg0; fentry:/kfunc: with the typed args->rp / args.rps.)
  if (/\bunregister_kretprobes?\b/.test(text) && (/struct kretprobe\b/.test(text) || /(?:^|[^\w])(?:fentry|kfunc):unregister_kretprobes?\b/m.test(text))) {
    const at = lines.findIndex((l, i) => i > (r.attached?.line ?? 0) - 1 && /^\s*(?:rp\.)?nmissed[=:]\s*\d+/.test(l));
    if (at >= 0) {
      const l = lines[at]!;
      f.add('counters.end.nmissed', Number(/nmissed[=:]\s*(\d+)/.exec(l)![1]), at + 1, 'nmissed');
      f.add('counters.source', 'module-field', at + 1, 'nmissed');
      // Read as the probe is unregistered, the fields are that registration's whole count: it
      // started at 0 when the probe was registered (register_kretprobe clears nmissed), one epoch.
      // Its kprobe's count was cleared by register_kprobe() at the same registration, printed or not.
      f.add('counters.start.nmissed', 0, at + 1, 'nmissed');
      f.add('counters.start.kprobe_nmissed', 0, at + 1, 'nmissed');
      for (const p of ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch']) f.add(p, 'reg-1', at + 1, 'nmissed');
      const max = /\bmaxactive[=:]\s*(\d+)/.exec(l);
      if (max) f.add('probe.maxactive.effective', Number(max[1]), at + 1, 'maxactive');
      const kp = /\bkp\.nmissed[=:]\s*(\d+)/.exec(l);
      if (kp) f.add('counters.end.kprobe_nmissed', Number(kp[1]), at + 1, 'kp.nmissed');
    }
  }
  return { kind, facts: f.facts, problems: r.problems };
}

/** strerror() texts a tracer prints for a failed attach, to errno names (glibc's messages). */
const STRERROR: Record<string, string> = {
  'device or resource busy': 'EBUSY',
  'no such file or directory': 'ENOENT',
  'invalid argument': 'EINVAL',
  'operation not permitted': 'EPERM',
  'permission denied': 'EACCES',
  'cannot allocate memory': 'ENOMEM',
  'cannot assign requested address': 'EADDRNOTAVAIL',
  'operation not supported': 'EOPNOTSUPP',
  'file exists': 'EEXIST',
  'no such device': 'ENODEV',
  'bad address': 'EFAULT',
  'argument list too long': 'E2BIG',
  'invalid or incomplete multibyte or wide character': 'EILSEQ',
  'function not implemented': 'ENOSYS',
  // Not a strerror() text but bcc's own words for one: src/cc/libbpf.c create_probe_event prints
  // "cannot attach kprobe, probe entry may not exist" exactly when its write to kprobe_events
  // failed with ENOENT (any other errno is printed with strerror()); bpftrace built on it too.
  'probe entry may not exist': 'ENOENT',
};

/** The errno name of a strerror() text inside a message ("cannot attach kprobe, Device or resource busy"), or of "-16"/"errno 16". */
export function errnoForStrerror(message: string): string | undefined {
  const m = message.toLowerCase();
  for (const [text, name] of Object.entries(STRERROR)) if (m.includes(text)) return name;
  const n = /(?:returned|errno|error|err)[ =:]*-?(\d+)\b/.exec(m) ?? /(?:^|\s|\()-(\d+)\b/.exec(m);
  if (n) return ERRNO_NAMES[Number(n[1])];
  // libbpf's errstr() from 1.5: the symbolic name, "-ENOENT".
  const sym = /(?:^|[\s(:])-?(E[A-Z0-9]{2,})\b/.exec(message);
  return sym && KNOWN_ERRNO.has(sym[1]!) ? sym[1] : undefined;
}

const KNOWN_ERRNO = new Set(Object.values(ERRNO_NAMES));

const BY_KIND = new Map(ARTIFACT_READERS.map((r) => [r.kind, r]));
const BY_FILE = new Map(ARTIFACT_READERS.flatMap((r) => (r.files ?? []).map((f) => [f, r] as const)));

/** The reader of an artifact kind. */
export function readerOf(kind: ArtifactKind): ArtifactReader {
  const r = BY_KIND.get(kind);
  if (!r) throw new Error(`no artifact reader for ${kind}`);
  return r;
}

/** The artifact a collector snapshot file holds, by its name. */
export function kindOfFile(name: string): ArtifactKind | undefined {
  return BY_FILE.get(name)?.kind;
}

/**
 * A tool's report that it could not read a file, as coreutils and the shell print it: "cat:
 * PATH: Permission denied", "ls: cannot access 'PATH': No such file or directory", "bash:
 * PATH: Permission denied". The reason is strerror()'s text.
 */
const UNREADABLE = /^\s*(?:cat|head|tail|less|more|grep|ls|stat|wc|(?:ba|z|da)?sh|-bash):\s+(?:(?:line \d+:\s+)?)(?:cannot (?:access|open|stat) )?['"‘]?(\/[^\s'"’:]+)['"’]?(?: for reading)?:\s+(Permission denied|No such file or directory|Operation not permitted|Device or resource busy|Invalid argument|No such device)\s*$/;

/** A fact left unknown because the file it is read from could not be read, and why. */
export interface UnreadFact {
  path: string;
  reason: string;
  /** 1-based line of the tool's report, and the column of the file's name in it. */
  line: number;
  col: number;
}

/**
 * The facts a tool's report of an unreadable file leaves unknown (ArtifactReader.unread of the
 * reader whose file it names), each with the reason: evidence that was looked for and could not
 * be had, which is not the same as evidence never looked for.
 */
export function unreadableOf(text: string): UnreadFact[] {
  const out: UnreadFact[] = [];
  linesOf(text).forEach((l, i) => {
    if (!l.includes('/')) return;
    const m = UNREADABLE.exec(l);
    if (!m) return;
    const file = m[1] ?? '';
    const name = file.slice(file.lastIndexOf('/') + 1);
    // kprobes/list is the collector's kprobes_list; per_cpu/cpuN/stats its buffer_stats.
    const reader = /\/kprobes\/list$/.test(file) ? readerOf('kprobes_list') : /\/per_cpu\/cpu\d+\/stats$/.test(file) ? readerOf('buffer_stats') : BY_FILE.get(name);
    for (const path of reader?.unread ?? []) out.push({ path, reason: `${file} could not be read: ${m[2]}`, line: i + 1, col: l.indexOf(file) });
  });
  return out;
}

/** The artifact a command prints (`sudo` and a leading prompt already removed). */
export function kindOfCommand(command: string): ArtifactKind | undefined {
  const c = command.replace(/^sudo\s+/, '');
  // A write to kprobe_events is told apart from a read of it before any other reader looks.
  const write = readerOf('kprobe_events-write');
  if (write.command!.test(c)) return write.kind;
  return ARTIFACT_READERS.find((r) => r.command !== undefined && r.command.test(c))?.kind;
}

/** Recognise output pasted without its command: the first reader in table order that knows it. */
export function sniffArtifact(text: string, ctx: ReadContext = {}): ArtifactKind | undefined {
  const nonblank = linesOf(text).filter((l) => l.trim() !== '');
  if (nonblank.length === 0) return undefined;
  return ARTIFACT_READERS.find((r) => r.sniff?.(text, nonblank, ctx))?.kind;
}

/** Read one artifact through its reader. */
export function readArtifact(kind: ArtifactKind, text: string, ctx: ReadContext = {}): ArtifactReading {
  return readerOf(kind).read(text, ctx);
}

/** The first fact at `path` of a reading, optionally about one subject. */
export function factOf(reading: ArtifactReading | undefined, path: string, about?: (s: Subject | undefined) => boolean): CitedFact | undefined {
  return reading?.facts.find((f) => f.path === path && (about === undefined || about(f.subject)));
}
