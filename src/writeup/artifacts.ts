import { bareEventName } from '../evidence/trace.js';
import { parseBpftoolLinks, parseBpftoolLinksJson, parseBpftoolProgs } from '../evidence/bpftool.js';
import { bpftraceProbes, parseBpftraceOutput } from '../evidence/bpftrace.js';
import { parseCpuPossible } from '../evidence/cpus.js';
import { ERRNO_NAMES, parseDmesg } from '../evidence/dmesg.js';
import { errnoForReason, parseErrorLog } from '../evidence/errorLog.js';
import { parseProcVersion, parseUnameRelease } from '../evidence/kernelVersion.js';
import { parseKprobeEventLine, parseKprobeEvents, type KprobeEventDef } from '../evidence/kprobeEvents.js';
import { parseKprobeProfile, type KprobeProfileRow } from '../evidence/kprobeProfile.js';
import { isArmed, parseKprobesList } from '../evidence/kprobesList.js';
import { parsePerfProbe } from '../evidence/perfProbe.js';
import type { SourceLine } from './document.js';
import type { WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';

/**
 * Pasted blocks → facts, through the project's kernel-artifact parsers (src/evidence). A block is
 * cut at shell prompts into command + output; the command names the artifact, and output with no
 * command is recognised by the first parser that reads all of it. Each fact cites the source line
 * of the value it came from.
 */

/** One artifact found in a block: what kind, the command that printed it, its lines. */
export interface Artifact {
  kind: ArtifactKind;
  command?: SourceLine;
  lines: SourceLine[];
}

export type ArtifactKind =
  | 'kprobe_profile' | 'kprobe_events' | 'kprobe_events-write' | 'error_log' | 'kprobes_list' | 'uname' | 'proc_version' | 'cpu_possible'
  | 'bpftool-link' | 'bpftool-link-json' | 'bpftool-prog' | 'bpftrace' | 'bpftrace-script' | 'dmesg' | 'perf-probe' | 'module-source';

const COMMAND = /^\s*(?:(?:\S+@\S+)?[^\s$#]*[$#]\s+)?((?:sudo\s+)?(?:cat|echo|uname|bpftool|bpftrace|perf|dmesg|journalctl|grep|tail|head)(?=\s|$).*)$/;
const PROMPTED = /^\s*(?:\S+@\S+)?[^\s$#]*[$#]\s+\S/;

function kindOfCommand(cmd: string): ArtifactKind | undefined {
  const c = cmd.replace(/^sudo\s+/, '');
  if (/^echo\b.*kprobe_events/.test(c)) return 'kprobe_events-write';
  if (/kprobe_profile/.test(c)) return 'kprobe_profile';
  if (/kprobe_events/.test(c)) return 'kprobe_events';
  if (/error_log/.test(c)) return 'error_log';
  if (/kprobes\/list/.test(c)) return 'kprobes_list';
  if (/^uname\b/.test(c)) return 'uname';
  if (/\/proc\/version/.test(c)) return 'proc_version';
  if (/cpu\/possible/.test(c)) return 'cpu_possible';
  if (/^bpftool\b.*\b(?:-j|--json|-p|--pretty)\b.*\blink\b/.test(c)) return 'bpftool-link-json';
  if (/^bpftool\b.*\blink\b/.test(c)) return 'bpftool-link';
  if (/^bpftool\b.*\bprog\b/.test(c)) return 'bpftool-prog';
  if (/^bpftrace\b/.test(c)) return 'bpftrace';
  if (/^(?:dmesg|journalctl)\b/.test(c)) return 'dmesg';
  if (/^perf probe\b/.test(c)) return 'perf-probe';
  return undefined;
}

const asText = (lines: SourceLine[]) => lines.map((l) => l.text).join('\n');

/** Recognise output pasted without its command: the first parser that reads all of it. */
function sniff(lines: SourceLine[], info: string): ArtifactKind | undefined {
  const text = asText(lines);
  const nonblank = lines.filter((l) => l.text.trim() !== '');
  if (nonblank.length === 0) return undefined;
  if (/^(?:c|h)$/i.test(info) && /\bstruct kretprobe\b/.test(text)) return 'module-source';
  if (/^(?:bpftrace|bt)$/i.test(info)) return /^Attaching \d+ probes?/m.test(text) ? 'bpftrace' : 'bpftrace-script';
  if (/^Attaching \d+ probes?\.\.\./m.test(text)) return 'bpftrace';
  if (/^\[\s*\d+\.\d+\]\s+\S.*: error: /m.test(text) && /^\s+Command: /m.test(text)) return 'error_log';
  // (The second expression needs "(on " somewhere: most blocks have none, and are not scanned.)
  if (/^Added new events?:$/m.test(text) || (text.includes('(on ') && /^\s*\w+:\w+\s+\(on \S+\)$/m.test(text))) return 'perf-probe';
  if (/^\s*\[\s*\{/.test(text) && /"type"\s*:/.test(text)) return 'bpftool-link-json';
  if (/^\d+: (?:perf_event|kprobe_multi|tracing)\s/m.test(text) && /^\s+(?:kretprobe|kprobe|attach_type)\b/m.test(text)) return 'bpftool-link';
  if (/^\d+: (?:kprobe|tracing|perf_event)\s+name \S+/m.test(text)) return 'bpftool-prog';
  if (nonblank.every((l) => /^\s*(?:[A-Z][a-z]{2} [ 0-9]\d [\d:]{8} \S+ kernel: |\[\s*\d+\.\d+\]\s)/.test(l.text))) return 'dmesg';
  // The line parsers read every line or it is not theirs: the first line is tried alone before
  // the whole block (most pasted blocks are none of these, and fail on their first line).
  const head = nonblank[0]!.text;
  const all = <T extends { problems: unknown[] }>(parse: (t: string) => T, n: (r: T) => number) => {
    if (parse(head).problems.length > 0) return false;
    const r = parse(text);
    return r.problems.length === 0 && n(r) > 0;
  };
  if (all(parseKprobesList, (r) => r.entries.length)) return 'kprobes_list';
  if (all(parseKprobeEvents, (r) => r.events.length)) return 'kprobe_events';
  if (all(parseKprobeProfile, (r) => r.rows.length)) return 'kprobe_profile';
  if (nonblank.length === 1 && /^\s*\d+\.\d+(?:\.\d+)?[-+]\S+\s*$/.test(nonblank[0]!.text)) return 'uname';
  if (nonblank.length === 1 && /^Linux version /.test(nonblank[0]!.text.trim())) return 'proc_version';
  return undefined;
}

/** Cut a pasted block into artifacts. */
export function artifactsOf(lines: SourceLine[], info: string): Artifact[] {
  const out: Artifact[] = [];
  let current: { command?: SourceLine; lines: SourceLine[] } = { lines: [] };
  const flush = () => {
    const kind = current.command ? kindOfCommand(COMMAND.exec(current.command.text)?.[1] ?? '') : sniff(current.lines, info);
    if (kind) out.push({ kind, ...(current.command ? { command: current.command } : {}), lines: current.lines });
  };
  const anyPrompt = lines.some((l) => PROMPTED.test(l.text));
  for (const l of lines) {
    const m = COMMAND.exec(l.text);
    // Without a prompt anywhere in the block, only a line that starts with a known command is one.
    const isCommand = m !== null && (PROMPTED.test(l.text) || (!anyPrompt && /^\s*(?:sudo\s+)?(?:cat|echo|uname|bpftool|bpftrace|perf|dmesg|journalctl)\s/.test(l.text)));
    if (isCommand && !/^(?:bpftrace|bt)$/i.test(info)) {
      flush();
      current = { command: l, lines: [] };
      if (kindOfCommand(m[1] ?? '') === 'kprobe_events-write' || /^(?:sudo\s+)?(?:bpftrace|perf probe)\b/.test(m[1] ?? '')) current.lines.push(l);
      continue;
    }
    current.lines.push(l);
  }
  flush();
  return out;
}

/** Where a value sits on its line: the first occurrence of `needle`, else the line's start. */
function at(l: SourceLine, needle?: string | number): { line: number; col: number } {
  if (needle !== undefined) {
    const i = l.text.indexOf(String(needle));
    if (i >= 0) return { line: l.line, col: l.col + i };
  }
  const lead = l.text.length - l.text.trimStart().length;
  return { line: l.line, col: l.col + lead };
}

/** Collects facts from all artifacts of a write-up; some need the whole document (which profile row). */
export class ArtifactFacts {
  readonly facts: WriteupFact[] = [];
  private readonly profiles: Array<{ a: Artifact; rows: KprobeProfileRow[] }> = [];
  private readonly defs: Array<{ l: SourceLine; def: KprobeEventDef; readBack: boolean }> = [];
  private readonly perfEvents: string[] = [];

  constructor(private readonly lex: Lexicon) {}

  private add(path: string, value: WriteupFact['value'], l: SourceLine, via: ArtifactKind, needle?: string | number): void {
    const pos = at(l, needle);
    this.facts.push({ path, value, ...pos, text: l.text.trim(), origin: 'artifact', via });
  }

  /** Read one artifact. */
  read(a: Artifact): void {
    const text = asText(a.lines);
    const lineOf = (n: number) => a.lines[n - 1]!;
    switch (a.kind) {
      case 'kprobe_profile': {
        const r = parseKprobeProfile(text);
        if (r.rows.length) this.profiles.push({ a, rows: r.rows });
        break;
      }
      case 'kprobe_events':
      case 'kprobe_events-write': {
        if (a.kind === 'kprobe_events-write') {
          for (const l of a.lines) {
            const q = /echo\s+(['"])(.*?)\1/.exec(l.text) ?? /echo\s+(\S+\s+\S+)/.exec(l.text);
            const written = q ? (q[2] ?? q[1] ?? '') : '';
            const def = parseKprobeEventLine(written);
            if (typeof def !== 'string') this.defs.push({ l, def, readBack: false });
          }
        } else {
          for (const def of parseKprobeEvents(text).events) this.defs.push({ l: lineOf(def.line), def, readBack: true });
        }
        break;
      }
      case 'error_log': {
        const r = parseErrorLog(text);
        const e = r.entries[r.entries.length - 1];
        if (e) {
          const l = lineOf(e.line);
          const errno = errnoForReason(e.reason);
          if (errno) this.add('probe.registration.result', errno, l, a.kind, e.reason);
          this.add('probe.registration.reason', e.word ? `${e.reason} (at "${e.word}")` : e.reason, l, a.kind, e.reason);
          this.add('probe.interface', 'tracefs', l, a.kind, e.subsystem);
        }
        break;
      }
      case 'kprobes_list': {
        const r = parseKprobesList(text);
        const ret = r.entries.find((e) => e.type === 'r');
        if (ret) {
          const l = lineOf(ret.line);
          if (ret.symbol) this.add('probe.target', ret.symbol, l, a.kind, ret.symbol);
          this.add('probe.armed', isArmed(ret), l, a.kind, ret.flags.length ? `[${ret.flags[0]}]` : ret.symbol);
        }
        break;
      }
      case 'uname': {
        const outLines = a.lines.filter((l) => l.text.trim() !== '');
        const cmd = a.command ? COMMAND.exec(a.command.text)?.[1] ?? '' : '';
        if (/\s-a\b/.test(cmd) && outLines[0]) {
          const rel = outLines[0].text.trim().split(/\s+/)[2];
          if (rel && /^\d+\.\d+/.test(rel)) this.add('kernel.release', rel, outLines[0], a.kind, rel);
        } else {
          const r = parseUnameRelease(text);
          if (r.release && r.line) this.add('kernel.release', r.release, lineOf(r.line), a.kind, r.release);
        }
        break;
      }
      case 'proc_version': {
        const r = parseProcVersion(text);
        if (r.release && r.line) this.add('kernel.release', r.release, lineOf(r.line), a.kind, r.release);
        break;
      }
      case 'cpu_possible': {
        const r = parseCpuPossible(text);
        if (r.count !== undefined && r.line) this.add('kernel.possible_cpus', r.count, lineOf(r.line), a.kind, r.list);
        break;
      }
      case 'bpftool-link':
      case 'bpftool-link-json': {
        const r = a.kind === 'bpftool-link' ? parseBpftoolLinks(text) : parseBpftoolLinksJson(text);
        const link = r.links.find((k) => k.kprobe?.retprobe);
        if (link?.kprobe) {
          // JSON gives one "line" for the whole array: cite the line naming the function.
          const l = a.kind === 'bpftool-link' ? lineOf(link.line + 1) : a.lines.find((x) => x.text.includes(link.kprobe!.func ?? '\u0000')) ?? lineOf(1);
          if (link.kprobe.func) this.add('probe.target', link.kprobe.func, l, a.kind, link.kprobe.func);
          this.add('probe.registration.result', 'ok', lineOf(a.kind === 'bpftool-link' ? link.line : 1), a.kind);
          // Plain output leaves "missed" out when it is 0 and on kernels before 6.7: only a printed value is a fact.
          if (link.kprobe.missedPrinted && link.kprobe.missed !== undefined) {
            const ml = a.kind === 'bpftool-link' ? l : a.lines.find((x) => /"missed"/.test(x.text)) ?? l;
            this.add('counters.end.nmissed', link.kprobe.missed, ml, a.kind, a.kind === 'bpftool-link' ? `missed ${link.kprobe.missed}` : '"missed"');
            this.add('counters.source', 'bpf-link', ml, a.kind, a.kind === 'bpftool-link' ? 'missed' : '"missed"');
          }
        }
        break;
      }
      case 'bpftool-prog': {
        const r = parseBpftoolProgs(text);
        const p = r.progs.find((x) => x.recursionMisses !== undefined && x.statsLine !== undefined);
        if (p && p.statsLine !== undefined) {
          const l = lineOf(p.statsLine);
          this.add('counters.end.recursion_misses', p.recursionMisses ?? 0, l, a.kind, /recursion_misses/.test(l.text) ? 'recursion_misses' : 'run_cnt');
        }
        break;
      }
      case 'bpftrace':
      case 'bpftrace-script': {
        this.readBpftrace(a, text);
        break;
      }
      case 'dmesg': {
        const r = parseDmesg(text);
        for (const rep of r.reports) {
          const l = lineOf(rep.line);
          if (rep.planted) {
            this.add('probe.interface', 'module', l, a.kind, 'Planted');
            this.add('probe.target', rep.planted.symbol, l, a.kind, rep.planted.symbol);
            this.add('probe.registration.result', 'ok', l, a.kind, 'Planted');
          }
          if (rep.registerFailed) {
            this.add('probe.interface', 'module', l, a.kind, 'register_kretprobe');
            this.add('probe.registration.result', ERRNO_NAMES[rep.registerFailed.errno] ?? `errno ${rep.registerFailed.errno}`, l, a.kind, 'returned');
          }
          if (rep.nmissed !== undefined) {
            this.add('counters.end.nmissed', rep.nmissed, l, a.kind, rep.nmissed);
            this.add('counters.source', 'module-field', l, a.kind, rep.nmissed);
          }
          if (rep.kprobeNmissed !== undefined) this.add('counters.end.kprobe_nmissed', rep.kprobeNmissed, l, a.kind, 'kp.nmissed');
          if (rep.symbol && !rep.planted) this.add('probe.target', rep.symbol, l, a.kind, rep.symbol);
        }
        break;
      }
      case 'perf-probe': {
        const r = parsePerfProbe(text);
        const ev = r.events.find((e) => e.retprobe);
        if (ev) {
          const l = lineOf(ev.line);
          this.perfEvents.push(ev.event);
          this.add('probe.interface', 'perf-probe', l, a.kind, `${ev.group}:${ev.event}`);
          this.add('probe.target', ev.symbol, l, a.kind, `on ${ev.symbol}`);
          if (ev.module) this.add('probe.target_module', ev.module, l, a.kind, `in ${ev.module}`);
          if (r.added) this.add('probe.registration.result', 'ok', lineOf(ev.line), a.kind, `${ev.group}:${ev.event}`);
        }
        const err = r.errors.find((e) => e.notFound);
        if (err) {
          const l = lineOf(err.line);
          this.add('probe.interface', 'perf-probe', l, a.kind);
          this.add('probe.registration.result', 'ENOENT', l, a.kind);
          this.add('probe.registration.reason', err.message, l, a.kind);
        }
        break;
      }
      case 'module-source': {
        for (const l of a.lines) {
          const sym = /\.kp\.symbol_name\s*=\s*"([^"]+)"/.exec(l.text);
          if (sym) { this.add('probe.interface', 'module', l, a.kind, '.kp.symbol_name'); this.add('probe.target', sym[1] ?? '', l, a.kind, sym[1]); }
          const max = /\.maxactive\s*=\s*(\d+)/.exec(l.text);
          if (max) this.add('probe.maxactive.requested', Number(max[1]), l, a.kind, `= ${max[1]}`);
          if (/\.data_size\s*=\s*sizeof/.test(l.text)) this.add('probe.per_instance_data', true, l, a.kind, '.data_size');
          if (/\.entry_handler\s*=\s*\w/.test(l.text)) this.add('probe.entry_handler.present', true, l, a.kind, '.entry_handler');
        }
        break;
      }
    }
  }

  private readBpftrace(a: Artifact, text: string): void {
    const script = a.lines.find((l) => /\b(?:kretprobe|kr|fexit|kretfunc|fr|kprobe|k|fentry|kfunc):\w/.test(l.text));
    if (script) {
      const probes = bpftraceProbes(script.text);
      const ret = probes.find((p) => p.kind === 'kretprobe' || p.kind === 'fexit');
      if (ret) {
        const fexit = ret.kind === 'fexit';
        this.add('probe.interface', fexit ? 'other' : 'bpftrace', script, a.kind, script.text.slice(ret.index).split(/[{\s]/)[0]);
        this.add('probe.target', ret.symbol, script, a.kind, ret.symbol);
        if (ret.module) this.add('probe.target_module', ret.module, script, a.kind, ret.module);
      }
    }
    if (a.kind === 'bpftrace-script') return;
    const r = parseBpftraceOutput(text);
    const lineOf = (n: number) => a.lines[n - 1]!;
    if (r.attached) this.add('probe.registration.result', 'ok', lineOf(r.attached.line), a.kind, 'Attaching');
    const err = r.errors[0];
    if (err && !r.attached) {
      const l = lineOf(err.line);
      this.add('probe.registration.result', /not found|Could not resolve|No such|unknown symbol/i.test(err.message) ? 'ENOENT' : 'error', l, a.kind, 'ERROR');
      this.add('probe.registration.reason', err.message, l, a.kind, err.message);
    }
    for (const m of r.maps) {
      const to = this.lex.bpftraceMaps.find((x) => x.re.test(m.name));
      if (to && m.key === undefined) this.add(to.fact, m.value, lineOf(m.line), a.kind, `@${m.name}`);
    }
    const lost = r.lost.reduce((s, x) => s + x.count, 0);
    if (r.lost.length) this.add('ledger.lost_events', lost, lineOf(r.lost[0]!.line), a.kind, 'Lost');
  }

  /** Facts that need every artifact: probe definitions and which kprobe_profile row is the return event. */
  finish(): WriteupFact[] {
    const retDef = [...this.defs].reverse().find((d) => d.def.kind === 'r');
    for (const d of this.defs) {
      if (d.def.kind !== 'r') continue;
      const via: ArtifactKind = d.readBack ? 'kprobe_events' : 'kprobe_events-write';
      const sym = d.def.symbol ?? d.def.address;
      this.add('probe.interface', 'tracefs', d.l, via, d.def.raw.split(/\s/)[0]);
      if (sym) this.add('probe.target', sym, d.l, via, sym);
      if (d.def.module) this.add('probe.target_module', d.def.module, d.l, via, `${d.def.module}:`);
      if (d.def.maxactive !== undefined) this.add(d.readBack ? 'probe.maxactive.effective' : 'probe.maxactive.requested', d.def.maxactive, d.l, via, d.def.raw.split(/[\s:]/)[0]);
      if (d.readBack) this.add('probe.registration.result', 'ok', d.l, via, d.def.raw.split(/\s/)[0]);
    }
    const entryDef = this.defs.find((d) => d.def.kind === 'p' && retDef !== undefined && d.def.symbol === retDef.def.symbol);
    const retName = retDef?.def.event ? bareEventName(retDef.def.event) : undefined;
    const pickRow = (rows: KprobeProfileRow[]): KprobeProfileRow | undefined => {
      if (retName !== undefined) return rows.find((r) => r.event === retName);
      const perf = rows.find((r) => this.perfEvents.includes(r.event) || /__return$/.test(r.event));
      if (perf) return perf;
      return rows.length === 1 ? rows[0] : undefined;
    };
    const snaps = this.profiles.map((p) => ({ p, row: pickRow(p.rows) })).filter((x) => x.row !== undefined);
    const phases = snaps.length >= 2 ? [['start', snaps[0]!], ['end', snaps[snaps.length - 1]!]] as const : snaps.length === 1 ? [['end', snaps[0]!]] as const : [];
    for (const [phase, s] of phases) {
      const l = s.p.a.lines[s.row!.line - 1]!;
      const cols = l.text.trim().split(/\s+/);
      const hitsAt = l.text.indexOf(cols[1] ?? '', l.text.indexOf(cols[0] ?? '') + (cols[0] ?? '').length);
      const missAt = l.text.lastIndexOf(cols[2] ?? '');
      this.facts.push({ path: `counters.${phase}.nmissed`, value: s.row!.misses, line: l.line, col: l.col + Math.max(0, missAt), text: l.text.trim(), origin: 'artifact', via: 'kprobe_profile' });
      this.facts.push({ path: `counters.${phase}.hits`, value: s.row!.hits, line: l.line, col: l.col + Math.max(0, hitsAt), text: l.text.trim(), origin: 'artifact', via: 'kprobe_profile' });
      if (phase === 'end') this.add('counters.source', 'kprobe_profile', l, 'kprobe_profile', cols[0]);
    }
    if (entryDef?.def.event && snaps.length > 0) {
      const entryName = bareEventName(entryDef.def.event);
      const last = this.profiles[this.profiles.length - 1]!;
      const first = this.profiles.length >= 2 ? this.profiles[0]! : undefined;
      const re = last.rows.find((r) => r.event === entryName);
      const rs = first?.rows.find((r) => r.event === entryName);
      if (re) {
        const l = last.a.lines[re.line - 1]!;
        this.add('ledger.entry_events', re.hits - (rs?.hits ?? 0), l, 'kprobe_profile', String(re.hits));
      }
    }
    return this.facts;
  }
}
