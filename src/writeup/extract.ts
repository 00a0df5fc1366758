import path from 'node:path';
import { caseSchema, type Case } from '../case/schema.js';
import { setPath } from '../dotted.js';
import { BASE_FACTS } from '../facts/facts.js';
import { InputError, shown } from '../errors.js';
import { schemaAt } from '../yamlfile.js';
import { unameStart, unreadableOf } from '../evidence/artifacts.js';
import { baseSymbol } from '../evidence/family.js';
import { ArtifactFacts, artifactsOf } from './artifacts.js';
import { readDocument, type SourceLine, type WriteupDocument } from './document.js';
import { explicitFacts } from './explicit.js';
import { ORIGIN_RANK, type WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';
import { readProse, sentencesOf, type Elsewhere, type NotAClaim, type Sentence, type StatedUnknown, type WriteupClaim } from './sentences.js';
import { sniffKind, type WriteupKind } from './text.js';

/** Two or more stated values for one case field: a finding, never a silent pick. */
export interface FactConflict {
  path: string;
  /** The value the case uses: the strongest source (explicit > artifact > sentence), first one on a tie. */
  chosen: WriteupFact;
  others: WriteupFact[];
}

/** Everything read from one write-up. */
export interface Extraction {
  file: string;
  kind: WriteupKind;
  /** Every fact found, in document order (all sources; `implied` ones included). */
  facts: WriteupFact[];
  claims: WriteupClaim[];
  notClaims: NotAClaim[];
  /** Facts the write-up says could not be known, with why (they stay unknown in the case). */
  unknown: StatedUnknown[];
  /** Causes the write-up gives only by reference to another thread: evidence that lives elsewhere. */
  elsewhere: Elsewhere[];
  conflicts: FactConflict[];
  /** The case built from them, validated, with provenance `field -> file:line:col`. */
  case: Case;
}

function slug(file: string): string {
  const base = path.basename(file).replace(/\.[^.]+$/, '');
  const s = base.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return `writeup-${s || 'untitled'}`;
}

/** Lines that open a tracer's error output (bcc's traceback and its libbpf line, strace's refused write to kprobe_events). */
const PASTED_ERROR = /^\s*(?:Traceback \(most recent call last\):|cannot attach k(?:ret)?probe, |write\(\d+, "[pr]\d*:)/;
/** A prose line that opens a tracer's error output; the cheap word test keeps the regular expression off most lines. */
const pastedError = (l: { text: string }): boolean => {
  // The first non-blank character must open one of them (T, c, w): one character read per line.
  const t = l.text;
  let i = 0;
  while (t.charCodeAt(i) === 32 || t.charCodeAt(i) === 9) i++;
  const c = t.charCodeAt(i);
  return (c === 84 || c === 99 || c === 119) && PASTED_ERROR.test(t);
};
/** A prose line's `uname -a` output as a line of its own (from "Linux" on, at its column), or undefined. */
function unameInProse(l: SourceLine): SourceLine | undefined {
  const at = unameStart(l.text);
  return at === undefined ? undefined : { line: l.line, col: l.col + at, text: l.text.slice(at).replace(/`.*$/, '') };
}

/** The facts a tool's report of an unreadable file leaves unknown (src/evidence/artifacts.ts unreadableOf), on their write-up lines. */
function unreadIn(lines: readonly SourceLine[], out: StatedUnknown[]): void {
  // Cheap test first: a report names the file's absolute path after a colon.
  if (!lines.some((l) => l.text.includes(': /') || l.text.includes(" '/"))) return;
  for (const u of unreadableOf(lines.map((l) => l.text).join('\n'))) {
    const l = lines[u.line - 1]!;
    out.push({ path: u.path, reason: u.reason, line: l.line, col: l.col + u.col, text: l.text.trim(), via: 'unreadable-file' });
  }
}

/** Any naming of a return probe: the write-up is about one, so an entry probe's facts stay apart. */
const RETURN_PROBE = /kretprobe|return[- ]probe|retprobe|kretfunc|fexit|%return|\bkr:|\br\d*:[\w/]/i;

const byPosition = (a: { line: number; col: number }, b: { line: number; col: number }) => a.line - b.line || a.col - b.col;

// Each field's own part of the zod case schema (BASE_FACTS is read from the schema's
// definitions as plain data in the build, src/case/defs.ts, which have no safeParse).
const LEAVES = new Map(BASE_FACTS.map((f) => [f.name, schemaAt(caseSchema, f.name.split('.'))]));
const LEAF_ORDER = new Map(BASE_FACTS.map((f, i) => [f.name, i]));
const { id: ID, claims: CLAIMS } = caseSchema.shape;

/**
 * The case built below has the fixed members (format, title, source and provenance, all strings
 * made here), an id, claims and the fields the facts set, nothing else: so it is valid when
 * those are, each checked against its own part of the case schema. Much cheaper than walking the
 * whole schema per write-up; the case schema stays the one definition.
 */
function builtCaseValid(c: Record<string, unknown>, values: ReadonlyArray<readonly [string, WriteupFact['value']]>): boolean {
  if (!ID.safeParse(c.id).success) return false;
  if (c.claims !== undefined && !CLAIMS.safeParse(c.claims).success) return false;
  // Each field's value as set in the case: a field that is not a leaf of the format (the only
  // kind a deeper field could replace in the case) is not valid whatever its value.
  for (const [field, value] of values) if (!leafValid(field, value)) return false;
  return true;
}

/**
 * Which values each field was found to accept: the same few recur across write-ups (bounded).
 * Per field, scalars (and null) are their own keys (a Map keeps 28, '28' and true apart) and
 * lists are keyed by their JSON apart from them.
 */
const ACCEPTED = new Map<string, { scalars: Map<unknown, boolean>; lists: Map<string, boolean> }>();
let acceptedSize = 0;
function leafValid(field: string, value: unknown): boolean {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return LEAVES.get(field)?.safeParse(value).success ?? false;
  let known = ACCEPTED.get(field);
  if (!known) ACCEPTED.set(field, (known = { scalars: new Map(), lists: new Map() }));
  const list = Array.isArray(value) ? JSON.stringify(value) : undefined;
  let ok = list === undefined ? known.scalars.get(value) : known.lists.get(list);
  if (ok === undefined) {
    const leaf = LEAVES.get(field);
    ok = leaf !== undefined && leaf.safeParse(value).success;
    if (acceptedSize >= 8192) {
      ACCEPTED.clear();
      acceptedSize = 0;
      ACCEPTED.set(field, (known = { scalars: new Map(), lists: new Map() }));
    }
    acceptedSize++;
    if (list === undefined) known.scalars.set(value, ok);
    else known.lists.set(list, ok);
  }
  return ok;
}

/**
 * `a` says what `b` says, more precisely: a registration that failed with a named errno refines one
 * that failed with it unknown (`error`, a quoted "Failed to attach" beside the errno a pasted
 * listing or line gives). Not a disagreement.
 */
function refines(path: string, a: WriteupFact['value'], b: WriteupFact['value']): boolean {
  return path === 'probe.registration.result' && b === 'error' && typeof a === 'string' && a !== 'ok' && a !== 'error';
}

/** The value of `path` its strongest stated source gives, among the facts `own` keeps (never an implied default). */
function strongestStated(facts: readonly WriteupFact[], path: string, own: (f: WriteupFact) => boolean): WriteupFact['value'] | undefined {
  let best: WriteupFact | undefined;
  for (const f of facts) if (f.path === path && f.origin !== 'implied' && own(f) && (!best || ORIGIN_RANK[f.origin] > ORIGIN_RANK[best.origin])) best = f;
  return best?.value;
}

/**
 * Facts whose artifact was about a return probe on another function than the case's target are
 * marked `otherProbe` (a clone counts as its base function: evidence/family.ts baseSymbol). Only
 * when the artifacts name two functions or more: a single probed function leaves every fact as it
 * is. The target is the one the case takes (the strongest source, then the first stated), so a
 * probe's own facts never disagree with it.
 */
function bindOtherProbes(facts: WriteupFact[]): void {
  const probed = new Set<string>();
  for (const f of facts) if (f.probeSymbol !== undefined) probed.add(baseSymbol(f.probeSymbol));
  if (probed.size < 2) return;
  let target: WriteupFact | undefined;
  for (const f of facts) if (f.path === 'probe.target' && f.origin !== 'implied' && !f.otherRun && (!target || ORIGIN_RANK[f.origin] > ORIGIN_RANK[target.origin])) target = f;
  if (typeof target?.value !== 'string') return;
  const chosen = baseSymbol(target.value);
  for (const f of facts) if (f.probeSymbol !== undefined && baseSymbol(f.probeSymbol) !== chosen) f.otherProbe = f.probeSymbol;
}

/** Read a write-up's text into facts, claims and a case. Pure: `file` only names positions. */
export function extractWriteup(text: string, file: string, lex: Lexicon): Extraction {
  const kind = sniffKind(text, file);
  const doc: WriteupDocument = readDocument(text, kind);
  const facts: WriteupFact[] = [];
  const claims: WriteupClaim[] = [];
  const notClaims: NotAClaim[] = [];
  const artifacts = new ArtifactFacts(lex);
  let explicitId: string | undefined;
  let explicitTitle: string | undefined;
  let firstHeading: string | undefined;
  const sentences: Sentence[] = [];
  const unread: StatedUnknown[] = [];
  for (const piece of doc.pieces) {
    if (piece.type === 'explicit') {
      const r = explicitFacts(piece.lines, piece.origin, file);
      facts.push(...r.facts);
      claims.push(...r.claims);
      explicitId ??= r.id;
      explicitTitle ??= r.title;
    } else if (piece.type === 'block') {
      for (const a of artifactsOf(piece.lines, piece.info)) artifacts.read(a);
      if (!piece.quoted) unreadIn(piece.lines, unread);
    } else if (!piece.quoted) {
      // A tracer's error pasted without a fence (a traceback in the post's text) is still the artifact.
      if (!piece.heading && piece.lines.some(pastedError)) for (const a of artifactsOf(piece.lines, '')) artifacts.read(a);
      if (!piece.heading) unreadIn(piece.lines, unread);
      // `uname -a` output quoted in a sentence or inline code ("uname -a: Linux db3 5.15.0-91-generic
      // #101-Ubuntu SMP ..."): the artifact from its "Linux" on, read by the uname reader.
      if (!piece.heading) for (const l of piece.lines) { const u = unameInProse(l); if (u) artifacts.read({ kind: 'uname', lines: [u] }); }
      if (piece.heading && firstHeading === undefined) firstHeading = piece.lines.map((l) => l.text).join(' ').trim();
      sentencesOf(piece.lines, sentences);
    }
  }
  const prose = readProse(sentences, lex);
  // The date the kernel was seen running by: the latest date the write-up gives its posts or
  // itself (a kernel cannot carry a change first posted after it, src/kernel/history.ts).
  const dated = observedBy(text);
  if (dated) facts.push(dated);
  const scoped = lex.recordsScope ? scopedRecords(text, sentences, lex.recordsScope) : undefined;
  if (scoped) facts.push(scoped);
  facts.push(...prose.facts);
  claims.push(...prose.claims);
  notClaims.push(...prose.rejected);
  const unknown = prose.unknown;
  const elsewhere = prose.elsewhere;
  let namesReturn: boolean | undefined;
  const mentionsReturn = () => (namesReturn ??= RETURN_PROBE.test(text));
  facts.push(...artifacts.finish(mentionsReturn));
  // A file a tool could not read leaves its facts unknown with the reason, unless the write-up
  // has them all the same (read again, with the rights, later on, or from another source).
  for (const u of unread) if (!facts.some((f) => f.path === u.path)) unknown.push(u);
  // A tool's message about an entry probe, quoted in prose, is the case's only when the write-up
  // is about that entry probe (it names no return probe anywhere), as for the artifact readers.
  if (facts.some((f) => f.entryProbe) && mentionsReturn()) for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.entryProbe) facts.splice(i, 1);
  // A later correction ("Correction: maxactive was 20, not 8") replaces what was said before it of
  // that field, from any source but the author's explicit block: the earlier value is no longer
  // the write-up's, and not a disagreement. What is said after the correction still counts.
  if (facts.some((f) => f.corrects)) {
    facts.sort(byPosition);
    const superseded = new Set<WriteupFact>();
    for (const c of facts) {
      if (!c.corrects) continue;
      for (const f of facts) if (f !== c && f.path === c.path && f.origin !== 'explicit' && byPosition(f, c) < 0 && JSON.stringify(f.value) !== JSON.stringify(c.value)) superseded.add(f);
    }
    for (let i = facts.length - 1; i >= 0; i--) if (superseded.has(facts[i]!)) facts.splice(i, 1);
  }
  // A failure with its errno unknown says less than the same failure with its errno: not listed beside it.
  const failedWith = facts.find((f) => refines('probe.registration.result', f.value, 'error') && f.path === 'probe.registration.result');
  if (failedWith) for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.path === 'probe.registration.result' && facts[i]!.value === 'error') facts.splice(i, 1);
  facts.sort(byPosition);
  // A setting stated of another tool than the one the case's probe is made with (or when that is not
  // known) is not the case's: two subjects, or unknown, never a blend.
  if (facts.some((f) => f.about !== undefined)) {
    const iface = strongestStated(facts, 'probe.interface', (f) => f.about === undefined);
    for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.about !== undefined && facts[i]!.about !== iface) facts.splice(i, 1);
  }
  // What a sentence states of a named function is the case's only when the case's probe is on
  // it: with a target established otherwise (an artifact, the block, a sentence that only names
  // it), statements about another function are that function's, not a disagreement.
  if (facts.some((f) => f.ofTarget !== undefined)) {
    const target = strongestStated(facts, 'probe.target', (f) => f.ofTarget === undefined);
    if (target !== undefined) for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.ofTarget !== undefined && facts[i]!.ofTarget !== target) facts.splice(i, 1);
  }
  // Return probes on several functions, each from its own artifact: the case is the probe on the
  // target it settles on (as below, the strongest source, then the first); the other probes' facts
  // are theirs.
  bindOtherProbes(facts);
  // An A/B with a larger pool ("twice the CPUs is not enough, samples are missing. Tried 50, no
  // sample missing"): the case is the run that lost calls, the larger pool the adequate run's. A
  // pool setting of that value anywhere in the write-up is that run's: listed, never the case's
  // (two subjects, never a blend). The experiment holds only where its number is a pool: named so
  // in its sentence, or stated as one elsewhere.
  if (facts.some((f) => f.otherRunPool !== undefined)) bindOtherRunPools(facts);
  claims.sort(byPosition);
  notClaims.sort(byPosition);

  // One value per field: strongest source wins; disagreeing stated values are a conflict.
  const byPath = new Map<string, WriteupFact[]>();
  for (const f of facts) {
    if (f.otherRun || f.otherProbe !== undefined) continue;
    const list = byPath.get(f.path);
    if (list) list.push(f);
    else byPath.set(f.path, [f]);
  }
  const data: Record<string, unknown> = {};
  const provenance: Record<string, string> = {};
  const conflicts: FactConflict[] = [];
  const values: Array<[string, WriteupFact['value']]> = [];
  for (const [p, list] of byPath) {
    const chosen = list.reduce((best, f) => (ORIGIN_RANK[f.origin] > ORIGIN_RANK[best.origin] || (ORIGIN_RANK[f.origin] === ORIGIN_RANK[best.origin] && refines(p, f.value, best.value)) ? f : best));
    values.push([p, chosen.value]);
    provenance[p] = `${file}:${chosen.line}:${chosen.col}`;
    if (list.length === 1) continue;
    const key = JSON.stringify(chosen.value);
    const others = list.filter((f) => f !== chosen && f.origin !== 'implied' && JSON.stringify(f.value) !== key && !refines(p, chosen.value, f.value) && !refines(p, f.value, chosen.value));
    if (others.length && chosen.origin !== 'implied') conflicts.push({ path: p, chosen, others });
  }
  // Fields in the order of the case format (what the schema's own parse gives, and what
  // `writeup extract` writes), whatever order the write-up stated them in.
  const order = (p: string) => LEAF_ORDER.get(p) ?? LEAF_ORDER.size;
  values.sort((a, b) => order(a[0]) - order(b[0]));
  for (const [p, v] of values) setPath(data, p, v);
  const title = explicitTitle ?? doc.title ?? firstHeading ?? path.basename(file);
  const c: Record<string, unknown> = {
    format: 'kretprobe-case/v1',
    id: explicitId ?? slug(file),
    title,
    source: `write-up ${path.basename(file)} (${kind})`,
    ...data,
  };
  if (claims.length) c.claims = claims.map((x) => ({ kind: x.kind, text: x.text, at: `${file}:${x.line}:${x.col}`, ...(x.otherRun ? { subject: 'other-run' as const } : {}) }));
  if (Object.keys(provenance).length) c.provenance = provenance;
  if (builtCaseValid(c, values)) return { file, kind, facts, claims, notClaims, unknown, elsewhere, conflicts, case: c as Case };
  // Not valid: the whole schema says which field and why.
  const checked = caseSchema.safeParse(c);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = issue.path.join('.');
    const f = facts.find((x) => x.path === field || field.startsWith(`${x.path}.`) || x.path.startsWith(`${field}.`));
    const allowed = BASE_FACTS.find((b) => b.name === field)?.values;
    const expected = allowed ? `${field}: one of ${allowed.join(' | ')} (or unknown)` : `a valid ${field || 'case'} (${issue.message})`;
    throw new InputError({ file, ...(f ? { line: f.line, col: f.col } : {}) }, expected, f ? shown(f.value) : undefined);
  }
  return { file, kind, facts, claims, notClaims, unknown, elsewhere, conflicts, case: checked.data };
}

/**
 * `ledger.records_only_eligible` when a one-liner's one probe keeps one command and the author's
 * prose runs that command as the test (rules/lexicon/facts.yaml, records_scope): the fact is read
 * at the predicate, and bound to the probed function (the case's only when its probe is on it).
 */
function scopedRecords(text: string, sentences: readonly Sentence[], scope: { predicate: RegExp; workload: RegExp }): WriteupFact | undefined {
  // Cheap tests first: most write-ups hold no predicate on comm at all, and the prose is read for
  // the workload only once a predicate was found.
  if (!text.includes('comm')) return undefined;
  let ran: Set<string> | undefined;
  scope.predicate.lastIndex = 0;
  for (let m = scope.predicate.exec(text); m !== null; m = scope.predicate.exec(text)) {
    const g = m.groups ?? {};
    const comm = g.c1 ?? g.c2 ?? g.c3;
    if (comm === undefined) continue;
    if (ran === undefined) {
      ran = new Set();
      for (const s of sentences) {
        scope.workload.lastIndex = 0;
        for (let w = scope.workload.exec(s.text); w !== null; w = scope.workload.exec(s.text)) ran.add(w.groups?.comm ?? '');
      }
    }
    if (!ran.has(comm)) continue;
    const before = text.slice(0, m.index);
    const line = before.split('\n').length;
    const col = m.index - before.lastIndexOf('\n');
    const f: WriteupFact = { path: 'ledger.records_only_eligible', value: true, line, col, text: m[0].trim(), origin: 'artifact', via: 'records-scope' };
    if (g.sym) f.ofTarget = g.sym;
    return f;
  }
  return undefined;
}

const POOL_FIELDS = new Set(['probe.maxactive.requested', 'probe.maxactive.effective']);

/** See extractWriteup: bind pool settings to an A/B's adequate run, and drop an experiment whose number is no pool. */
function bindOtherRunPools(facts: WriteupFact[]): void {
  const pools = new Set<unknown>();
  for (const f of facts) if (f.otherRunPool !== undefined) pools.add(f.otherRunPool.pool);
  const stated = new Set<unknown>();
  for (const f of facts) {
    if (f.otherRunPool !== undefined || !POOL_FIELDS.has(f.path) || !pools.has(f.value)) continue;
    f.otherRun = true;
    stated.add(f.value);
  }
  for (let i = facts.length - 1; i >= 0; i--) {
    const o = facts[i]!.otherRunPool;
    if (o !== undefined && !o.named && !stated.has(o.pool)) facts.splice(i, 1);
  }
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const iso = (y: string, m: number, d: string) => `${y}-${String(m).padStart(2, '0')}-${d.padStart(2, '0')}`;

/**
 * The latest date among the write-up's own dates: a `Date:` line (mail headers, a metadata list:
 * "Date: 2017-02-23", "Date: Thu, 23 Feb 2017 10:00:00 +0000"), a post heading that ends with
 * its date ("## alban · comment · 2017-03-23"), GitHub's "commented on Feb 23, 2017". Dates in
 * prose (plans, release dates, commit dates) are not read. Every observation the write-up reports
 * was made by its latest date, so that one bounds every kernel in it; an earlier one would not.
 */
export function observedBy(text: string): WriteupFact | undefined {
  let best: WriteupFact | undefined;
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!;
    let m: RegExpExecArray | null;
    let date: string | undefined;
    let at = 0;
    let said = '';
    if ((m = /^(?:[-*]\s+)?(?:\*\*)?Date:(?:\*\*)?\s+(?:(\d{4})-(\d{2})-(\d{2})\b|(?:[A-Z][a-z]{2},\s+)?(\d{1,2})\s+([A-Z][a-z]{2})\s+(\d{4})\b)/.exec(line))) {
      if (m[1]) date = `${m[1]}-${m[2]}-${m[3]}`;
      else {
        const month = MONTHS.indexOf(m[5]!.toLowerCase());
        if (month >= 0) date = iso(m[6]!, month + 1, m[4]!);
      }
      at = m.index;
      said = m[0];
    } else if ((m = /^#{1,6}\s.*\s·\s(\d{4})-(\d{2})-(\d{2})\s*$/.exec(line))) {
      date = `${m[1]}-${m[2]}-${m[3]}`;
      at = line.lastIndexOf(date);
      said = date;
    } else if ((m = /\bcommented on ([A-Z][a-z]{2})[a-z]* (\d{1,2}), (\d{4})\b/.exec(line))) {
      const month = MONTHS.indexOf(m[1]!.toLowerCase());
      if (month >= 0) date = iso(m[3]!, month + 1, m[2]!);
      at = m.index;
      said = m[0];
    }
    if (date === undefined || !validDate(date)) continue;
    if (!best || date > (best.value as string)) best = { path: 'kernel.observed_by', value: date, line: n + 1, col: at + 1, text: said, origin: 'artifact', via: 'date' };
  }
  return best;
}

function validDate(d: string): boolean {
  const t = Date.parse(`${d}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d;
}
