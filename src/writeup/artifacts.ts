import { countMapKinds } from '../evidence/bpftrace.js';
import { bareEventName } from '../evidence/trace.js';
import { kindOfCommand, readArtifact, sniffArtifact, type ArtifactKind, type ArtifactReading, type CitedFact, type CitedValue } from '../evidence/artifacts.js';
import type { SourceLine } from './document.js';
import type { WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';

/**
 * Pasted blocks → facts, through the project's one artifact table (src/evidence/artifacts.ts).
 * A block is cut at shell prompts into command + output; the command names the artifact, and
 * output with no command is recognised by the table's first reader that knows it. Each fact cites
 * the source line of the value it came from.
 */

export type { ArtifactKind } from '../evidence/artifacts.js';

/** One artifact found in a block: what kind, the command that printed it, its lines. */
export interface Artifact {
  kind: ArtifactKind;
  command?: SourceLine;
  lines: SourceLine[];
}

const COMMAND = /^\s*(?:(?:\S+@\S+)?[^\s$#]*[$#]\s+)?((?:sudo\s+)?(?:cat|echo|uname|bpftool|bpftrace|perf|dmesg|journalctl|grep|tail|head|python[23]?|insmod|modprobe|lsb_release|ply|strace|stap)(?=\s|$).*)$/;
const PROMPTED = /^\s*(?:\S+@\S+)?[^\s$#]*[$#]\s+\S/;

const asText = (lines: SourceLine[]) => lines.map((l) => l.text).join('\n');

/** Cut a pasted block into artifacts. */
export function artifactsOf(lines: SourceLine[], info: string): Artifact[] {
  const out: Artifact[] = [];
  let current: { command?: SourceLine; lines: SourceLine[] } = { lines: [] };
  const flush = () => {
    // A command the table does not know (a script, `python3 ./test.py`) still cuts the block: its output is recognised by content.
    const kind = (current.command ? kindOfCommand(COMMAND.exec(current.command.text)?.[1] ?? '') : undefined) ?? sniffArtifact(asText(current.lines), { info });
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

/** Clone suffixes GCC gives a function it changed (`.isra.0`, `.constprop.1`, `.part.3`, `.cold`). */
const CLONE = /(?:\.(?:isra|constprop|part|cold|lto_priv)(?:\.\d+)?)+$/;

/**
 * The function a kallsyms listing was grepped for (`grep W /proc/kallsyms`, `cat /proc/kallsyms |
 * fgrep W`): the one function every listed symbol is (or is a clone of), when that name holds W.
 */
function grepTarget(a: Artifact): string | undefined {
  const word = /\b[ef]?grep\s+(?:-\w+\s+)*['"]?([A-Za-z_][A-Za-z0-9_]*)/.exec(a.command?.text ?? '')?.[1];
  if (word === undefined) return undefined;
  const names = new Set<string>();
  for (const l of a.lines) {
    const m = /^\s*[0-9a-f]{8,16}\s+[A-Za-z]\s+(\S+)/.exec(l.text);
    if (m) names.add((m[1] ?? '').replace(CLONE, ''));
  }
  const [only] = names;
  return names.size === 1 && only !== undefined && only.includes(word) ? only : undefined;
}

/** A cited fact of an artifact placed on its write-up line. */
function placed(f: CitedFact, lines: SourceLine[], via: ArtifactKind): WriteupFact {
  const l = lines[f.line - 1]!;
  const out: WriteupFact = { path: f.path, value: f.value as WriteupFact['value'], line: l.line, col: l.col + f.col, text: l.text.trim(), origin: 'artifact', via };
  if (f.subject?.symbol !== undefined && f.subject.kind !== 'entry') out.probeSymbol = f.subject.symbol;
  return out;
}

/** Collects facts from all artifacts of a write-up; some need the whole document (which profile row). */
export class ArtifactFacts {
  readonly facts: WriteupFact[] = [];
  private readonly profiles: Array<{ a: Artifact; facts: CitedFact[] }> = [];
  private readonly defs: Array<{ a: Artifact; facts: CitedFact[] }> = [];
  private readonly kallsyms: Artifact[] = [];
  private readonly perfEvents: string[] = [];
  /** Facts about an entry probe, kept apart: the case's only when the write-up shows no return probe (finish). */
  private readonly entryFacts: WriteupFact[] = [];
  private sawReturn = false;
  /** Keyed count maps of the last bpftrace script pasted, for its output pasted apart. */
  private countMaps: ReadonlyMap<string, 'entry' | 'return'> | undefined;

  constructor(private readonly lex: Lexicon) {}

  /** Read one artifact. */
  read(a: Artifact): void {
    const text = asText(a.lines);
    const command = a.command ? COMMAND.exec(a.command.text)?.[1] : undefined;
    if (a.kind === 'kallsyms') {
      this.kallsyms.push(a);
      return;
    }
    if (a.kind === 'bpftrace-script' || (a.kind === 'bpftrace' && command !== undefined)) this.countMaps = countMapKinds(text);
    const r = readArtifact(a.kind, text, { ...(command !== undefined ? { command } : {}), bpftraceMaps: this.lex.bpftraceMaps, ...(this.countMaps ? { countMaps: this.countMaps } : {}) });
    const put = (fs: CitedFact[]) => { for (const f of fs) this.facts.push(placed(f, a.lines, a.kind)); };
    // A fact about an entry probe is not the return probe's (a failed `p:` says nothing of the `r:`).
    const mine = r.facts.filter((f) => f.subject?.kind !== 'entry');
    if (r.facts.some((f) => f.subject?.kind === 'return')) this.sawReturn = true;
    if (a.kind !== 'kprobe_events' && a.kind !== 'kprobe_events-write') for (const f of r.facts) if (f.subject?.kind === 'entry') this.entryFacts.push(placed(f, a.lines, a.kind));
    switch (a.kind) {
      case 'kprobe_profile':
        if (r.facts.length) this.profiles.push({ a, facts: r.facts });
        break;
      case 'kprobe_events':
      case 'kprobe_events-write':
        this.defs.push({ a, facts: r.facts });
        break;
      case 'error_log': {
        // The newest entry about this probe: the kernel keeps a log of every refused write.
        const last = mine[mine.length - 1]?.line;
        put(mine.filter((f) => f.line === last));
        break;
      }
      case 'kprobes_list': {
        const first = mine[0]?.line;
        put(mine.filter((f) => f.line === first));
        break;
      }
      case 'perf-probe': {
        const ev = mine.find((f) => f.subject?.event !== undefined);
        if (ev?.subject?.event) this.perfEvents.push(ev.subject.event.split(':')[1] ?? '');
        put(mine.filter((f) => f.subject?.event === undefined || f.line === ev?.line));
        break;
      }
      default:
        put(mine);
    }
  }

  /**
   * Facts that need every artifact: probe definitions and which kprobe_profile row is the return
   * event. `mentionsReturn` (asked only when an entry probe's facts are waiting): whether the
   * write-up names a return probe anywhere (kretprobe, return probe); when it does not and no
   * artifact shows one, the thread is about its entry probe, whose facts are then the case's (a
   * failed `p:` stays apart from an `r:` only where there is an `r:`).
   */
  finish(mentionsReturn: () => boolean = () => true): WriteupFact[] {
    const all = this.defs.flatMap((d) => d.facts.map((f) => ({ d, f })));
    const ret = [...all].reverse().find((x) => x.f.subject?.kind === 'return' && x.f.path === 'probe.interface');
    for (const { d, f } of all) if (f.subject?.kind === 'return') this.facts.push(placed(f, d.a.lines, d.a.kind));
    const retSubject = ret?.f.subject;
    const entry = all.find((x) => x.f.subject?.kind === 'entry' && retSubject !== undefined && x.f.subject.symbol === retSubject.symbol && x.f.subject.event !== undefined);
    const retName = retSubject?.event ? bareEventName(retSubject.event) : undefined;
    const rowsOf = (p: { facts: CitedFact[] }) => [...new Set(p.facts.map((f) => f.subject?.event ?? ''))];
    const pick = (p: { facts: CitedFact[] }): string | undefined => {
      const names = rowsOf(p);
      if (retName !== undefined) return names.includes(retName) ? retName : undefined;
      const perf = names.find((n) => this.perfEvents.includes(n) || /__return$/.test(n));
      if (perf) return perf;
      // Names the kernel (`r_SYM_0` for an unnamed `r:`) and bcc (`r_SYM_bcc_PID`) give a return event, beside its `p_` twin.
      const paired = names.find((n) => /^r_/.test(n) && names.includes(`p_${n.slice(2)}`));
      if (paired) return paired;
      return names.length === 1 ? names[0] : undefined;
    };
    const snaps = this.profiles.map((p) => ({ p, row: pick(p) })).filter((x) => x.row !== undefined);
    const phases = snaps.length >= 2 ? [['start', snaps[0]!], ['end', snaps[snaps.length - 1]!]] as const : snaps.length === 1 ? [['end', snaps[0]!]] as const : [];
    for (const [phase, s] of phases) {
      const row = s.p.facts.filter((f) => f.subject?.event === s.row);
      const miss = row.find((f) => f.path === 'counters.nmissed');
      const hits = row.find((f) => f.path === 'counters.hits');
      if (miss) this.facts.push(placed({ ...miss, path: `counters.${phase}.nmissed` }, s.p.a.lines, 'kprobe_profile'));
      if (hits) this.facts.push(placed({ ...hits, path: `counters.${phase}.hits` }, s.p.a.lines, 'kprobe_profile'));
      if (phase === 'end' && miss) this.facts.push(placed({ ...miss, path: 'counters.source', value: 'kprobe_profile', col: s.p.a.lines[miss.line - 1]!.text.indexOf(s.row ?? '') }, s.p.a.lines, 'kprobe_profile'));
    }
    // One profile read of the return event's row (and nothing refused): a row's counters start at 0
    // when its event is created and only a new registration resets them (kernel-facts.md §2, §6),
    // so the read is the end of one registration that started at 0. That registration is the one
    // the thread observed when the event was created by a write in this session before the read
    // (and not written again between), or when the thread writes no event at all (a tool made it:
    // bcc's r_SYM_bcc_PID, gobpf's rSYM, a script run before the thread). A write after the read,
    // or between, may be another registration: then the start stays unknown. (Issue 20, silent 3.)
    if (snaps.length === 1) {
      const s = snaps[0]!;
      const readAt = s.p.a.lines[0]!.line;
      const writes = this.defs.filter((d) => d.a.kind === 'kprobe_events-write');
      const byWrite = ret !== undefined && ret.d.a.kind === 'kprobe_events-write' && retName !== undefined && s.row === retName && retSubject?.event !== undefined;
      const writtenAt = byWrite ? ret.d.a.lines[0]!.line : undefined;
      const oneRegistration = byWrite
        ? writtenAt! < readAt && !writes.some((d) => d !== ret.d && d.a.lines[0]!.line > writtenAt! && d.a.lines[0]!.line < readAt)
        : writes.length === 0;
      const refused = this.facts.some((f) => f.path === 'probe.registration.result' && f.value !== 'ok');
      const row = s.p.facts.find((f) => f.subject?.event === s.row && f.path === 'counters.nmissed');
      if (oneRegistration && !refused && row) {
        const at = (path: string, value: CitedValue) => this.facts.push(placed({ ...row, path, value }, s.p.a.lines, 'kprobe_profile'));
        at('counters.start.nmissed', 0);
        at('counters.start.hits', 0);
        for (const p of ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch']) at(p, 'reg-1');
        // The profile lists the event: it is registered.
        at('probe.registration.result', 'ok');
        at('counters.event', s.row!);
        if (byWrite) this.facts.push(placed({ ...ret.f, path: 'probe.event', value: retSubject!.event! }, ret.d.a.lines, ret.d.a.kind));
      }
    }
    const twin = snaps[snaps.length - 1]?.row;
    const entryName = entry?.f.subject?.event ? bareEventName(entry.f.subject.event) : twin !== undefined && /^r_/.test(twin) && retName === undefined ? `p_${twin.slice(2)}` : undefined;
    if (entryName !== undefined && snaps.length > 0) {
      const hitsIn = (p: { facts: CitedFact[] } | undefined) => p?.facts.find((f) => f.path === 'counters.hits' && f.subject?.event === entryName);
      const last = this.profiles[this.profiles.length - 1]!;
      const first = this.profiles.length >= 2 ? this.profiles[0] : undefined;
      const re = hitsIn(last);
      const rs = hitsIn(first);
      if (re) this.facts.push(placed({ ...re, path: 'ledger.entry_events', value: (re.value as number) - ((rs?.value as number | undefined) ?? 0) }, last.a.lines, 'kprobe_profile'));
    }
    // No return probe anywhere: the thread is about its entry probe, whose facts are the case's.
    if (this.entryFacts.length + this.defs.length > 0 && !this.sawReturn && this.defs.every((d) => d.facts.every((f) => f.subject?.kind !== 'return')) && !mentionsReturn()) {
      for (const d of this.defs) for (const f of d.facts) if (f.subject?.kind === 'entry') this.facts.push(placed(f, d.a.lines, d.a.kind));
      this.facts.push(...this.entryFacts);
    }
    // A failure whose errno the artifact did not decide ("error") gives way to one that names it (the shell's write error).
    if (this.facts.some((f) => f.path === 'probe.registration.result' && f.value !== 'ok' && f.value !== 'error')) {
      for (let i = this.facts.length - 1; i >= 0; i--) if (this.facts[i]!.path === 'probe.registration.result' && this.facts[i]!.value === 'error') this.facts.splice(i, 1);
    }
    // kprobe_profile lists only events written to kprobe_events, by hand, by a tool (bcc's
    // `r_SYM_bcc_PID`, gobpf's `rSYM`) or by perf probe (kernel-facts.md §6: BPF's perf_event_open
    // probes are not listed): a row not named perf probe's way (`SYM__return`), in a thread with no
    // perf probe output, was made through tracefs.
    if (snaps.length > 0 && this.perfEvents.length === 0 && !/__return$/.test(snaps[snaps.length - 1]!.row ?? '__return') && !this.facts.some((f) => f.path === 'probe.interface')) {
      const s = snaps[snaps.length - 1]!;
      const miss = s.p.facts.find((f) => f.subject?.event === s.row);
      if (miss) this.facts.push({ ...placed({ ...miss, path: 'probe.interface', value: 'tracefs', col: 0 }, s.p.a.lines, 'kprobe_profile'), origin: 'implied' });
    }
    // kallsyms is searched for the return probe's target, once the write-up has named it; else for
    // the word the listing was grepped for, when every symbol listed is one function or its clones.
    const named = this.facts.find((f) => f.path === 'probe.target')?.value;
    const listings: Array<{ a: Artifact; target: string; r: ArtifactReading }> = [];
    for (const a of this.kallsyms) {
      const target = typeof named === 'string' ? named : grepTarget(a);
      // A listing cut short by head/tail cannot show a symbol is absent.
      if (target !== undefined) listings.push({ a, target, r: readArtifact('kallsyms', asText(a.lines), { target, ...(/\|\s*(?:head|tail)\b/.test(a.command?.text ?? '') ? { partial: true } : {}) }) });
    }
    // Listings of one function from two machines, one with it and one with only its clones: the
    // thread holds a failing and a working kernel. The case is the failing one's (what the thread
    // reports); the working machine's listing is another subject, never blended into it.
    const absentOn = new Set(listings.filter((x) => x.r.facts.some((f) => f.path === 'probe.registration.result')).map((x) => x.target));
    for (const { a, target, r } of listings) {
      if (absentOn.has(target) && r.facts.some((f) => f.path === 'probe.target_module')) continue;
      for (const f of r.facts) this.facts.push(placed(f, a.lines, 'kallsyms'));
      if (typeof named !== 'string' && r.facts.length > 0) {
        const l = a.lines.find((x) => x.text.includes(target)) ?? a.lines[0]!;
        this.facts.push({ path: 'probe.target', value: target, line: l.line, col: l.col + Math.max(0, l.text.indexOf(target)), text: l.text.trim(), origin: 'artifact', via: 'kallsyms' });
      }
    }
    return this.facts;
  }
}
