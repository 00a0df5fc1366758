import type { LineProblem } from '../errors.js';
import { numberedLines, parseBase0, problem } from './lines.js';

/** One fetch argument of a probe definition, e.g. `arg1=$retval` or `+0(%di):string`. */
export interface FetchArg {
  /** The name given with `name=`; absent when the kernel names it (`argN`, or `retval` on newer kernels). */
  name?: string;
  /** The fetch expression without its type: `$retval`, `%di`, `+0($arg1)`. */
  fetch: string;
  /** The type after the last `:` when one is given: `u32`, `string`, `x64`. */
  type?: string;
}

/**
 * One line of tracefs `kprobe_events` (or a definition as the user wrote it):
 * `r[MAXACTIVE][:[GRP/][EVENT]] [MOD:]SYM[+off] [FETCHARGS]` or `p[:[GRP/][EVENT]] [MOD:]SYM[+off][%return] [FETCHARGS]`.
 */
export interface KprobeEventDef {
  line: number;
  /** `r` for a return probe, including `p ...%return`, which the kernel reads back as `r`. */
  kind: 'p' | 'r';
  /** Written as `p SYM%return` rather than `r`. */
  percentReturn: boolean;
  /**
   * MAXACTIVE as written (`r010` is 8, `r0x10` is 16, kstrtouint base 0). Absent when no number
   * was given. Reading back a registered event shows the effective value (`r:` reads `r10:`).
   */
  maxactive?: number;
  group: string;
  /** Absent only for an address probe without a name: the kernel names it from a hashed pointer. */
  event?: string;
  /** Group or event came from the kernel's defaults rather than the text. */
  groupDefaulted: boolean;
  eventDefaulted: boolean;
  module?: string;
  symbol?: string;
  /** A raw address target (`0xffffffff81000000`) instead of a symbol. */
  address?: string;
  offset: number;
  args: FetchArg[];
  raw: string;
}

export interface KprobeEventsResult {
  events: KprobeEventDef[];
  problems: LineProblem[];
}

/** `KPROBE_EVENT_SYSTEM` in trace_kprobe.c. */
export const DEFAULT_KPROBE_GROUP = 'kprobes';

const NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Parse tracefs `kprobe_events` text. Blank and `#` comment lines are ignored. */
export function parseKprobeEvents(text: string): KprobeEventsResult {
  const events: KprobeEventDef[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const parsed = parseKprobeEventLine(trimmed, no);
    if (typeof parsed === 'string') problems.push(problem(no, parsed, line));
    else events.push(parsed);
  }
  return { events, problems };
}

/** Parse one definition; a string result says what was expected instead. */
export function parseKprobeEventLine(line: string, no = 1): KprobeEventDef | string {
  const tokens = line.trim().split(/\s+/);
  const head = tokens[0] ?? '';
  const m = /^([pr])([^:]*)(?::(.*))?$/.exec(head);
  if (!m) return 'a probe definition starting with p or r';
  const letter = m[1] as 'p' | 'r';
  const numberText = m[2] ?? '';
  const nameText = m[3];
  let maxactive: number | undefined;
  if (numberText !== '') {
    // trace_kprobe.c only looks for a number right after the letter, and only on `r`.
    if (letter === 'p') return 'no MAXACTIVE after p (only r takes one)';
    const value = parseBase0(numberText);
    if (value === undefined) return 'a MAXACTIVE number after r (decimal, 0x hex or 0 octal)';
    maxactive = value;
  }

  let group = DEFAULT_KPROBE_GROUP;
  let event: string | undefined;
  let groupDefaulted = true;
  let eventDefaulted = true;
  if (nameText !== undefined && nameText !== '') {
    const slash = nameText.indexOf('/');
    const grp = slash >= 0 ? nameText.slice(0, slash) : '';
    const ev = slash >= 0 ? nameText.slice(slash + 1) : nameText;
    if (slash >= 0) {
      if (!NAME.test(grp)) return 'a group name before /';
      group = grp;
      groupDefaulted = false;
    }
    if (ev !== '') {
      if (!NAME.test(ev)) return 'an event name after :';
      event = ev;
      eventDefaulted = false;
    }
  }

  const target = tokens[1];
  if (target === undefined) return 'a probe point ([MOD:]SYM[+off] or an address) after the event name';
  let point = target;
  let percentReturn = false;
  if (point.endsWith('%return')) {
    if (letter !== 'p') return 'the %return suffix only on a p definition';
    percentReturn = true;
    point = point.slice(0, -'%return'.length);
  }
  const kind: 'p' | 'r' = letter === 'r' || percentReturn ? 'r' : 'p';

  let module: string | undefined;
  let symbol: string | undefined;
  let address: string | undefined;
  let offset = 0;
  if (/^0[xX][0-9a-fA-F]+$/.test(point)) {
    address = point.toLowerCase();
  } else {
    const pm = /^(?:([A-Za-z0-9_-]+):)?([A-Za-z_.$][A-Za-z0-9_.$]*)(?:([+-])([0-9A-Za-z]+))?$/.exec(point);
    if (!pm) return 'a probe point [MOD:]SYM[+off]';
    module = pm[1];
    symbol = pm[2];
    if (pm[4] !== undefined) {
      const off = parseBase0(pm[4]);
      if (off === undefined) return 'an offset after + (decimal or 0x hex)';
      offset = pm[3] === '-' ? -off : off;
    }
  }

  if (event === undefined && symbol !== undefined) {
    // trace_kprobe.c: "%c_%s_%ld" from the symbol as written (with MOD:), then ':' and '.' become '_'.
    const written = module !== undefined ? `${module}:${symbol}` : symbol;
    event = `${kind}_${written}_${offset}`.replace(/[:.]/g, '_');
  }

  const args: FetchArg[] = [];
  for (const tok of tokens.slice(2)) {
    const arg = parseFetchArg(tok);
    if (arg === undefined) return 'fetch arguments of the form [NAME=]FETCHARG[:TYPE]';
    args.push(arg);
  }

  const def: KprobeEventDef = {
    line: no,
    kind,
    percentReturn,
    group,
    groupDefaulted,
    eventDefaulted,
    offset,
    args,
    raw: line.trim(),
  };
  if (maxactive !== undefined) def.maxactive = maxactive;
  if (event !== undefined) def.event = event;
  if (module !== undefined) def.module = module;
  if (symbol !== undefined) def.symbol = symbol;
  if (address !== undefined) def.address = address;
  return def;
}

function parseFetchArg(token: string): FetchArg | undefined {
  let name: string | undefined;
  let rest = token;
  const eq = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)$/.exec(token);
  if (eq) {
    name = eq[1];
    rest = eq[2] ?? '';
  }
  let type: string | undefined;
  // The type follows the last ':' outside brackets; fetch expressions such as `@sym` or `+0(%di)` hold no ':'.
  const tm = /^(.+):([a-z][a-z0-9]*(?:\[[0-9]+\])?|b[0-9]+@[0-9]+\/[0-9]+)$/.exec(rest);
  if (tm) {
    rest = tm[1] ?? '';
    type = tm[2];
  }
  if (rest === '' || /[=\s]/.test(rest)) return undefined;
  const arg: FetchArg = { fetch: rest };
  if (name !== undefined) arg.name = name;
  if (type !== undefined) arg.type = type;
  return arg;
}

/** `GRP/EVENT` of a definition, the way the user names it on the command line. */
export function eventPath(def: Pick<KprobeEventDef, 'group' | 'event'>): string | undefined {
  return def.event === undefined ? undefined : `${def.group}/${def.event}`;
}

/**
 * One fprobe event as tracefs `dynamic_events` reads it back (kernel/trace/trace_fprobe.c,
 * trace_fprobe_show): `f[MAXACTIVE]:GROUP/EVENT SYM[%return] [FETCHARGS]`, MAXACTIVE only on an
 * exit event that was given one (6.5 to 6.13; from 6.14 an exit takes none).
 */
export interface FprobeEventDef {
  line: number;
  /** An exit (`%return`): a return probe, like a kprobe `r` event. */
  exit: boolean;
  maxactive?: number;
  group: string;
  event: string;
  symbol: string;
  raw: string;
}

/** `FPROBE_EVENT_SYSTEM` in trace_fprobe.c: the group of an fprobe event named without one. */
export const DEFAULT_FPROBE_GROUP = 'fprobes';

/**
 * Tracefs `dynamic_events`: every dynamic event, one per line. kprobe lines (`p`/`r`) are read as
 * kprobe_events reads them and fprobe lines (`f`) as the kernel shows them; other kinds (uprobes,
 * whose target is a path, eprobes `e:`, tracepoint probes `t:`) are not this tool's and are
 * left alone, as are blank and `#` lines.
 */
export function parseDynamicEvents(text: string): { kprobes: KprobeEventDef[]; fprobes: FprobeEventDef[]; problems: LineProblem[] } {
  const kprobes: KprobeEventDef[] = [];
  const fprobes: FprobeEventDef[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const tokens = trimmed.split(/\s+/);
    const head = tokens[0] ?? '';
    if (/^[et][^:]*:/.test(head) || (/^[pr]/.test(head) && tokens[1]?.startsWith('/'))) continue;
    if (head.startsWith('f')) {
      const f = parseFprobeEventLine(trimmed, no);
      if (typeof f === 'string') problems.push(problem(no, f, line));
      else fprobes.push(f);
      continue;
    }
    const k = parseKprobeEventLine(trimmed, no);
    if (typeof k === 'string') problems.push(problem(no, k, line));
    else kprobes.push(k);
  }
  return { kprobes, fprobes, problems };
}

/** One `f` line of dynamic_events (or as written: the group may be left out); a string says what was expected instead. */
export function parseFprobeEventLine(line: string, no = 1): FprobeEventDef | string {
  const tokens = line.trim().split(/\s+/);
  const m = /^f(\d*):(?:([A-Za-z_][\w.-]*)\/)?([A-Za-z_][\w.-]*)$/.exec(tokens[0] ?? '');
  if (!m) return 'an fprobe event f[MAXACTIVE]:[GROUP/]EVENT';
  const target = tokens[1];
  const t = target === undefined ? null : /^([A-Za-z_][\w.]*)(%return)?$/.exec(target);
  if (!t) return 'a function after the event name (SYM or SYM%return)';
  const exit = t[2] !== undefined;
  if (m[1] !== '' && !exit) return 'no MAXACTIVE on an fprobe entry event (only an exit takes one)';
  const def: FprobeEventDef = { line: no, exit, group: m[2] ?? DEFAULT_FPROBE_GROUP, event: m[3]!, symbol: t[1]!, raw: line.trim() };
  if (m[1] !== '') def.maxactive = Number(m[1]);
  return def;
}
