import type { ClaimKind } from '../case/schema.js';
import type { SourceLine } from './document.js';
import { convert, isCaseField, type WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';

/** A sentence of prose with a map back to source positions. */
export interface Sentence {
  text: string;
  /** Position of character `i` of `text`. */
  at(i: number): { line: number; col: number };
  /** The paragraph it belongs to (identity only): sentences of one paragraph share it. */
  readonly paragraph?: object;
}

/** A claim the author makes, at the position of the words that make it. */
export interface WriteupClaim {
  kind: ClaimKind;
  text: string;
  line: number;
  col: number;
  origin: 'sentence' | 'explicit';
  /** Said of another run than the case's (an A/B's other arm): its subject is other-run. */
  otherRun?: true;
}

/** Words that matched a claim pattern but are not the author's claim, and why. */
/** A fact the write-up says could not be known: it stays unknown in the case, with this reason. */
export interface StatedUnknown {
  path: string;
  reason: string;
  line: number;
  col: number;
  text: string;
  via: string;
}

/** A cause the write-up gives only by reference to another thread: the evidence lives there, not here. */
export interface Elsewhere {
  /** The thread referred to, as written (`#835`, `iovisor/bcc#1072`, an issue URL). */
  ref: string;
  /** Asked ("Is this because of #835?") rather than stated. */
  asked: boolean;
  line: number;
  col: number;
  text: string;
  via: string;
}

export interface NotAClaim {
  kind: ClaimKind;
  line: number;
  col: number;
  reason: 'question' | 'hedged' | 'attributed' | 'quoted' | 'negated';
  text: string;
}

/** Index of the last of the ascending `starts` that is <= offset (0 when none is). */
function lastAtOrBefore(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Words whose full stop does not end a sentence ("e.g. "), matched case-insensitively. */
const ABBREVIATIONS = ['e.g', 'i.e', 'etc', 'vs', 'cf', 'approx', 'ca', 'Fig', 'al', 'no'];
const ABBREV = new RegExp(`(?:${ABBREVIATIONS.map((w) => `\\b${w.replace(/\./g, '\\.')}`).join('|')})$`, 'i');
/**
 * Their last letters, lower case: a full stop after any other character ends a sentence without
 * cutting and testing the words before it (x | 0x20 is one of these letters only when x is that
 * ASCII letter in either case, the only characters /i matches them with).
 */
const ABBREV_END = new Set(ABBREVIATIONS.map((w) => w.toLowerCase().charCodeAt(w.length - 1)));

/** A paragraph's lines; where each starts in their joined text is worked out when first asked. */
interface Paragraph {
  lines: SourceLine[];
  starts?: number[];
}

/** A sentence of a paragraph: its text starts at `base` in the paragraph's joined lines. */
class ProseSentence implements Sentence {
  constructor(
    readonly text: string,
    private readonly base: number,
    readonly paragraph: Paragraph,
  ) {}

  at(i: number): { line: number; col: number } {
    const offset = this.base + i;
    const { lines } = this.paragraph;
    const starts = (this.paragraph.starts ??= startsOf(lines));
    const lo = lastAtOrBefore(starts, offset);
    const l = lines[lo]!;
    return { line: l.line, col: l.col + Math.max(0, offset - starts[lo]!) };
  }
}

/** Where each line starts in the lines joined by one space. */
function startsOf(lines: SourceLine[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.text.length + 1;
  }
  return starts;
}

const NONE: number[] = [];

/** A character String.prototype.trim removes: ECMAScript WhiteSpace and LineTerminator. */
function isBlank(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** A sentence ends at . ! or ? followed by a space, a tab or the end of the paragraph. */
const BOUNDARY = /[.!?](?=[ \t]|$)/g;
const MARKUP = /[`*]/g;
const COMMENT = /<!--[\s\S]*?(?:-->|$)|^(?:(?!<!--)[\s\S])*?-->/g;

/** The texts of a paragraph's lines, to join: one array reused (sentencesOf is not re-entered). */
const TEXTS: string[] = [];

/**
 * Split prose lines into sentences; markup characters become spaces so columns stay true. The
 * sentences are appended to `into` when given (the caller's list, not a list per paragraph).
 */
export function sentencesOf(lines: SourceLine[], into: Sentence[] = []): Sentence[] {
  // One native join (a flat string) rather than a chain of concatenations to flatten later; a
  // single line is its own text.
  let joined: string;
  if (lines.length === 1) joined = lines[0]!.text;
  else {
    TEXTS.length = 0;
    for (const l of lines) TEXTS.push(l.text);
    joined = TEXTS.join(' ');
    TEXTS.length = 0;
  }
  const marked = joined.includes('`') || joined.includes('*') ? joined.replace(MARKUP, ' ') : joined;
  // An HTML comment (an issue template's hints: "e.g. kernel 5.15.0-91-generic") is not the
  // author's text; blanked to its length, so offsets keep their source positions. One cut by a
  // blank line leaves an opener without its end, or an end without its opener, in a paragraph.
  const clean = marked.includes('<!--') || marked.includes('-->') ? marked.replace(COMMENT, (m) => ' '.repeat(m.length)) : marked;
  const paragraph: Paragraph = { lines };
  let begin = 0;
  // The boundaries are found by the regular expression (native code), not by a loop over every
  // character; an abbreviation's full stop ("e.g. ") is passed over.
  // test() rather than exec(): no match object per boundary (the match is the one character
  // before lastIndex).
  BOUNDARY.lastIndex = 0;
  while (BOUNDARY.test(clean)) {
    const i = BOUNDARY.lastIndex - 1;
    if (clean.charCodeAt(i) === 46 && ABBREV_END.has(clean.charCodeAt(i - 1) | 0x20) && ABBREV.test(clean.slice(Math.max(begin, i - 8), i))) continue;
    pushSentence(into, clean, begin, i + 1, paragraph);
    begin = i + 1;
  }
  pushSentence(into, clean, begin, clean.length, paragraph);
  return into;
}

/** The sentence [begin, end) of `clean` less the blanks around it, cut once (what trim() keeps), if any is left. */
function pushSentence(out: Sentence[], clean: string, begin: number, end: number, paragraph: Paragraph): void {
  let a = begin;
  let b = end;
  while (a < b && isBlank(clean.charCodeAt(a))) a++;
  while (b > a && isBlank(clean.charCodeAt(b - 1))) b--;
  if (b > a) out.push(new ProseSentence(clean.slice(a, b), a, paragraph));
}

/** Two ascending lists of distinct numbers as one, ascending, each once. */
function mergeAscending(a: number[], b: number[]): number[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x <= y) {
      out.push(x);
      i++;
      if (x === y) j++;
    } else {
      out.push(y);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

function fill(template: string, groups: Record<string, string | undefined>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, g: string) => groups[g] ?? '');
}

type Indexed = RegExpMatchArray & { indices?: { groups?: Record<string, [number, number] | undefined> } };

/**
 * Facts and claims of the author's prose. A pattern only runs on the sentences that hold one of
 * its `needs` words at a word start (a scan for them all is far cheaper than a case-insensitive regular expression),
 * and each match is judged within its sentence. Questions and hedged clauses state no facts.
 */
export function readProse(sentences: Sentence[], lex: Lexicon): { facts: WriteupFact[]; claims: WriteupClaim[]; rejected: NotAClaim[]; unknown: StatedUnknown[]; elsewhere: Elsewhere[] } {
  // Where each needed word occurs: one indexOf walk over the joined lower-case prose per word,
  // shared by every pattern that needs it.
  // Lower-casing the joined text keeps its length (ASCII and most scripts), so each sentence's
  // offset holds; where it does not (a dotted capital I), each sentence is lower-cased alone.
  let texts = sentences.map((s) => s.text);
  let joined = texts.join('\n').toLowerCase();
  if (joined.length !== texts.reduce((n, t) => n + t.length + 1, -1) && texts.length > 0) {
    texts = texts.map((t) => t.toLowerCase());
    joined = texts.join('\n');
  }
  const starts: number[] = [];
  let at = 0;
  for (const t of texts) {
    starts.push(at);
    at += t.length + 1;
  }
  const byWord = sentencesWithWords(joined, starts, wordIndexOf(lex));
  const withWord = (w: string): number[] => byWord.get(w) ?? NONE;
  let all: number[] | undefined;
  const byNeeds = new Map<string[], number[]>();
  const candidates = (needs: string[]): number[] => {
    if (needs.length === 0) return (all ??= sentences.map((_, i) => i));
    let out = byNeeds.get(needs);
    if (!out) {
      if (needs.length === 1) out = withWord(needs[0]!);
      else {
        // Each word's list is ascending with each sentence once: merged pairwise, in order, each
        // once (what sorting their concatenation and dropping repeats gives).
        out = withWord(needs[0]!);
        for (let k = 1; k < needs.length; k++) out = mergeAscending(out, withWord(needs[k]!));
      }
      byNeeds.set(needs, out);
    }
    return out;
  };
  const corrections: Array<boolean | undefined> = [];
  const correcting = (i: number) => (corrections[i] ??= lex.correction !== undefined && lex.correction.test(sentences[i]!.text));
  const questions: Array<boolean | undefined> = [];
  const question = (i: number) => (questions[i] ??= isQuestion(sentences[i]!.text, lex));
  /** Call `each` for every match of `re` in the candidate sentences, with local offsets. */
  type Each = (m: Indexed, i: number, s: Sentence, start: number, end: number) => void;
  const matches = (re: RegExp, needs: string[], each: Each): void => matchesIn(re, candidates(needs), each);
  /** The same for a given list of sentence indices. */
  const matchesIn = (re: RegExp, indices: number[], each: Each): void => {
    for (const i of indices) {
      const s = sentences[i]!;
      re.lastIndex = 0;
      for (let m = re.exec(s.text) as Indexed | null; m !== null; m = re.exec(s.text) as Indexed | null) {
        if (m[0].length === 0) re.lastIndex++;
        each(m, i, s, m.index!, m.index! + m[0].length);
      }
    }
  };

  const facts: WriteupFact[] = [];
  // Per sentence, where it starts telling another run's outcome (an A/B's adequate arm).
  const otherRunFrom = new Map<number, number>();
  // Per sentence, computed once: whether it holds a quotation mark, and where it names a tool.
  const quoted: Array<boolean | undefined> = [];
  const hasQuotes = (i: number) => (quoted[i] ??= /["“‘]/.test(sentences[i]!.text));
  const tools: Array<Array<{ at: number; value: string }> | undefined> = [];
  const toolsIn = (i: number) => (tools[i] ??= toolsOf(sentences[i]!.text, lex));
  const used = new Map<string, Array<[number, number]>>();
  const overlaps = (key: string, a: number, b: number) => (used.get(key) ?? []).some(([x, y]) => a < y && x < b);
  const record = (i: number, f: WriteupFact, start: number, end: number) => {
    facts.push(f);
    const key = `${i}|${f.path}`;
    const list = used.get(key) ?? [];
    list.push([start, end]);
    used.set(key, list);
  };
  // The sentence before `i` in its paragraph matches `re` (and asks nothing): the run a match compares with.
  const afterOk = (re: RegExp, i: number) => {
    const prev = sentences[i - 1];
    if (prev === undefined || prev.paragraph === undefined || prev.paragraph !== sentences[i]!.paragraph || question(i - 1)) return false;
    re.lastIndex = 0;
    return re.test(prev.text);
  };
  for (const p of lex.facts) {
    matches(p.re, p.needs, (m, i, s, start, end) => {
      if (question(i)) return;
      if (p.after !== undefined && !afterOk(p.after, i)) return;
      // A tool's message hedges in its own words ("probe entry may not exist"): only the author's
      // words around it can hedge the fact.
      const clause = p.quoted ? clauseOutside(s.text, start, end) : clauseAround(s.text, start, end);
      if (!p.names && (lex.notAClaim.hedge.test(clause) || lex.notAClaim.conditional.test(clause))) return;
      // A message the author says did not appear ("no "Failed to attach" this time") states nothing.
      // (From where the quotation opens: the message's own colons and commas do not cut the author's clause.)
      if (p.quoted && negatedBefore(s.text, insideQuotes(s.text, start) ? quoteOpening(s.text, start) : start, lex)) return;
      // Words in quotation marks are someone else's (a commit's or a thread's title), not the author's fact.
      if (!p.quoted && hasQuotes(i) && insideQuotes(s.text, start)) return;
      const groups = m.groups ?? {};
      const entryProbe = p.probe !== undefined && fill(p.probe, groups).toLowerCase() === 'kprobe';
      // A pattern that names the function it speaks of (it sets probe.target beside other fields)
      // binds those fields to that function.
      const subjectT = p.entries.length > 1 ? p.entries.find(([pathT]) => pathT === 'probe.target')?.[1] : undefined;
      const subject = typeof subjectT === 'string' ? fill(subjectT, groups) : undefined;
      // The pool of the other run the match names (an A/B's adequate run), and whether the
      // sentence itself says the number is a pool (`named`: "maxactive 50", "r50").
      const otherPool = p.otherRunPool !== undefined ? convert(fill(p.otherRunPool, groups), 'count', 'probe.maxactive.requested') : undefined;
      for (const [pathT, valT, implied] of p.entries) {
        const path = fill(pathT, groups);
        if (!isCaseField(path) || overlaps(`${i}|${path}`, start, end)) continue;
        let value: string | number | boolean | string[] | undefined;
        let where = start;
        if (typeof valT === 'string') {
          const ref = /^\{([a-z_]+)(?::([a-z]+))?\}$/.exec(valT);
          if (ref) {
            const g = ref[1] ?? '';
            const v = convert(groups[g] ?? '', ref[2], path);
            if (v === undefined || v === null || (Array.isArray(v) && ref[2] !== 'list')) continue;
            value = v;
            const gi = m.indices?.groups?.[g]?.[0];
            where = gi === undefined ? start : gi;
          } else value = convert(valT, undefined, path) as string | number | boolean | undefined;
        } else value = valT;
        if (value === undefined) continue;
        const pos = s.at(where);
        const f: WriteupFact = { path, value, line: pos.line, col: pos.col, text: m[0], origin: implied ? 'implied' : 'sentence', via: p.id };
        if (entryProbe) f.entryProbe = true;
        if (correcting(i)) f.corrects = true;
        if (subject) f.ofTarget = subject;
        if (typeof otherPool === 'number') f.otherRunPool = { pool: otherPool, named: (groups.named ?? '') !== '' };
        // A kernel the sentence says works ("works on 5.4.0-42-generic, fails on 5.10.0-8-amd64") is
        // the working machine's, another subject than the failure the case is about: never blended
        // into the case (issue 21 class 5).
        if (path.startsWith('kernel.') && lex.workingKernel && typeof valT === 'string' && valT.startsWith('{')) {
          const vStart = where;
          const vEnd = vStart + String(value).length;
          let a = vStart;
          while (a > 0 && !/[,;:(—]/.test(s.text[a - 1]!)) a--;
          let b = vEnd;
          while (b < s.text.length && !/[,;:)—]/.test(s.text[b]!)) b++;
          if (lex.workingKernel.before.test(s.text.slice(a, vStart)) || lex.workingKernel.after.test(s.text.slice(vEnd, b))) f.about = 'working-kernel';
        }
        // A pool setting is bound to the tool the sentence names before it (issue 21 class 6, whose fact).
        if (path.startsWith('probe.maxactive.')) {
          let owner: string | undefined;
          for (const t of toolsIn(i)) if (t.at < start) owner = t.value;
          if (owner !== undefined) f.about = owner;
        }
        record(i, f, start, end);
        // An A/B's outcome told of the other run (a pattern that binds a pool to that run): what
        // the sentence says from there on is about that run, claims too.
        if (p.otherRunPool !== undefined && start < (otherRunFrom.get(i) ?? Infinity)) otherRunFrom.set(i, start);
      }
    });
  }

  // One interface per sentence: the first one named ("with fexit through bpftrace" is fexit),
  // and of two named at one place the first listed. Every interface pattern is the lead followed
  // by a name, so a match can start only where the lead does: the lead is found once per
  // sentence, and the names are tried only there, anchored.
  {
    const first = new Map<number, { m: Indexed; value: string; start: number; end: number }>();
    const lead = lex.interfaceLead;
    for (const i of candidates(lex.interfaceNeeds)) {
      const text = sentences[i]!.text;
      lead.lastIndex = 0;
      search: for (let l = lead.exec(text); l !== null; l = lead.exec(text)) {
        lead.lastIndex = l.index + 1;
        for (const n of lex.interfaces) {
          n.re.lastIndex = l.index;
          const m = n.re.exec(text) as Indexed | null;
          if (m === null) continue;
          first.set(i, { m, value: n.value, start: l.index, end: l.index + m[0].length });
          break search;
        }
      }
    }
    for (const [i, { m, value, start, end }] of first) {
      const s = sentences[i]!;
      const clause = clauseAround(s.text, start, end);
      if (question(i) || overlaps(`${i}|probe.interface`, start, end) || lex.notAClaim.hedge.test(clause) || lex.notAClaim.conditional.test(clause)) continue;
      const vAt = m.indices?.groups?.v?.[0];
      const pos = s.at(vAt === undefined ? start : vAt);
      record(i, { path: 'probe.interface', value, line: pos.line, col: pos.col, text: m[0].trim(), origin: 'sentence', via: 'interface' }, start, end);
    }
  }

  const claims: WriteupClaim[] = [];
  const rejected: NotAClaim[] = [];
  const n = lex.notAClaim;
  for (const c of lex.claims) {
    const found = new Map<number, WriteupClaim>();
    const refused = new Map<number, NotAClaim>();
    for (const re of c.res) {
      matches(re, c.needs, (m, i, s, start, end) => {
        let clauseStart = start;
        while (clauseStart > 0 && !/[,;:(—]/.test(s.text[clauseStart - 1]!)) clauseStart--;
        const reason: NotAClaim['reason'] | undefined =
          question(i) ? 'question'
          : n.hedge.test(s.text) || n.conditional.test(clauseAround(s.text, start, end)) ? 'hedged'
          : insideQuotes(s.text, start) ? 'quoted'
          : n.attribution.test(s.text.slice(0, start)) ? 'attributed'
          : n.negationBefore.test(s.text.slice(clauseStart, start)) || n.negationAfter.test(s.text.slice(end)) ? 'negated'
          : undefined;
        const pos = s.at(start);
        if (reason === undefined) {
          const prior = found.get(i);
          if (!prior || pos.line < prior.line || (pos.line === prior.line && pos.col < prior.col)) {
            const claim: WriteupClaim = { kind: c.kind, text: s.text.length > 240 ? `${s.text.slice(0, 239)}…` : s.text, line: pos.line, col: pos.col, origin: 'sentence' };
            if (start >= (otherRunFrom.get(i) ?? Infinity)) claim.otherRun = true;
            found.set(i, claim);
          }
        } else if (!refused.has(i)) refused.set(i, { kind: c.kind, line: pos.line, col: pos.col, reason, text: m[0] });
      });
    }
    claims.push(...found.values());
    for (const [i, r] of refused) if (!found.has(i)) rejected.push(r);
  }
  const unknown: StatedUnknown[] = [];
  for (const u of lex.unknown) {
    matches(u.re, u.needs, (m, i, s, start, end) => {
      // The words around the statement hedge it, not its own: "could not read nmissed" says the
      // author was unable to, where "could" alone would be a hedge.
      const clause = clauseOutside(s.text, start, end);
      if (question(i) || lex.notAClaim.hedge.test(clause) || lex.notAClaim.conditional.test(clause)) return;
      const pos = s.at(start);
      unknown.push({ path: u.fact, reason: u.reason, line: pos.line, col: pos.col, text: m[0], via: u.id });
    });
  }
  // A cause given only by reference to another thread (issue 21 class 8): marked, never a fact.
  const elsewhere: Elsewhere[] = [];
  for (const e of lex.elsewhere) {
    matches(e.re, e.needs, (m, i, s, start) => {
      const ref = m.groups?.ref;
      if (ref === undefined || elsewhere.some((x) => x.ref === ref && x.text === s.text)) return;
      const pos = s.at(start);
      elsewhere.push({ ref, asked: question(i), line: pos.line, col: pos.col, text: s.text.length > 240 ? `${s.text.slice(0, 239)}…` : s.text, via: e.id });
    });
  }
  return { facts, claims, rejected, unknown, elsewhere };
}

/**
 * Every `needs` word of a lexicon, bucketed by its first two characters: a 128x128 table for
 * ASCII pairs (the usual case), a map keyed by the pair's text otherwise; one-character words
 * by their one character.
 */
interface WordIndex {
  ascii: Array<string[] | undefined>;
  other: Map<string, string[]>;
  single: Map<number, string[]>;
  words: string[];
  /** Any of the words: finds the next position where one starts (native code, no per-character loop in JS). */
  any: RegExp;
}
const wordIndexes = new WeakMap<Lexicon, WordIndex>();
function wordIndexOf(lex: Lexicon): WordIndex {
  let idx = wordIndexes.get(lex);
  if (idx) return idx;
  const words = [...new Set([...lex.facts.flatMap((p) => p.needs), ...lex.unknown.flatMap((u) => u.needs), ...lex.elsewhere.flatMap((e) => e.needs), ...lex.interfaceNeeds, ...lex.claims.flatMap((c) => c.needs)])];
  idx = { ascii: new Array<string[] | undefined>(128 * 128).fill(undefined), other: new Map(), single: new Map(), words, any: anyOf(words) };
  for (const w of words) {
    const c0 = w.charCodeAt(0);
    const c1 = w.charCodeAt(1);
    if (w.length === 1) idx.single.set(c0, [...(idx.single.get(c0) ?? []), w]);
    else if (c0 < 128 && c1 < 128) (idx.ascii[c0 * 128 + c1] ??= []).push(w);
    else idx.other.set(w.slice(0, 2), [...(idx.other.get(w.slice(0, 2)) ?? []), w]);
  }
  wordIndexes.set(lex, idx);
  return idx;
}

/**
 * One regular expression that matches where any of the words starts at the start of a word of
 * the text (a `needs` entry is a word or the stem of one), with the words folded
 * into a trie ("re(?:ad|quest|turn)" rather than "read|request|return"), so the engine tries a
 * letter once at each position instead of once per word.
 */
function anyOf(words: string[]): RegExp {
  if (words.length === 0) return /(?!)/g;
  type Node = Map<string, Node> & { end?: boolean };
  const root: Node = new Map();
  for (const w of words) {
    let n = root;
    for (const ch of w) {
      let next = n.get(ch);
      if (!next) n.set(ch, (next = new Map() as Node));
      n = next;
    }
    n.end = true;
  }
  const esc = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  // A word that is the prefix of another ends the match there: its position is what counts.
  const emit = (n: Node): string => {
    if (n.end) return '';
    const alts = [...n].map(([c, child]) => esc(c) + emit(child));
    return alts.length === 1 ? alts[0]! : `(?:${alts.join('|')})`;
  };
  return new RegExp(`\\b${emit(root)}`, 'g');
}

/**
 * For each needed word, the ascending indices of the sentences whose text holds it: one walk
 * over the joined lower-case prose for all words at once (a word never spans the newline that
 * separates two sentences), instead of one indexOf walk per word: one regular expression of all
 * the words finds where one starts, a table by the first two characters says which.
 */
function sentencesWithWords(joined: string, starts: number[], idx: WordIndex): Map<string, number[]> {
  // A word no sentence holds has no entry (most words, in most write-ups).
  const out = new Map<string, number[]>();
  let sentence = 0;
  let nextStart = starts[1] ?? Infinity;
  const add = (w: string) => {
    const list = out.get(w);
    if (!list) out.set(w, [sentence]);
    else if (list[list.length - 1] !== sentence) list.push(sentence);
  };
  const { ascii, other, single, any } = idx;
  any.lastIndex = 0;
  for (let m = any.exec(joined); m !== null; m = any.exec(joined)) {
    const p = m.index;
    // Every position where some word starts is met (the search resumes one past the last hit);
    // there, every word starting at it is checked.
    any.lastIndex = p + 1;
    while (p >= nextStart) nextStart = starts[++sentence + 1] ?? Infinity;
    const c0 = joined.charCodeAt(p);
    const one = single.get(c0);
    if (one) for (const w of one) add(w);
    const c1 = joined.charCodeAt(p + 1);
    const bucket = c0 < 128 && c1 < 128 ? ascii[c0 * 128 + c1] : other.get(joined.slice(p, p + 2));
    if (bucket) for (const w of bucket) if (joined.startsWith(w, p)) add(w);
  }
  return out;
}

/** Where the sentence names an interface (a tool), in text order. */
function toolsOf(text: string, lex: Lexicon): Array<{ at: number; value: string }> {
  const out: Array<{ at: number; value: string }> = [];
  for (const t of lex.tools) {
    t.re.lastIndex = 0;
    for (let m = t.re.exec(text); m !== null; m = t.re.exec(text)) out.push({ at: m.index, value: t.value });
  }
  return out.sort((a, b) => a.at - b.at);
}

function isQuestion(text: string, lex: Lexicon): boolean {
  return text.endsWith('?') || lex.notAClaim.question.test(text);
}

/** The clause holding [start, end): between the nearest , ; : ( or dash on either side. */
function clauseAround(text: string, start: number, end: number): string {
  let a = start;
  while (a > 0 && !/[,;:(—]/.test(text[a - 1]!)) a--;
  let b = end;
  while (b < text.length && !/[,;:)—]/.test(text[b]!)) b++;
  return text.slice(a, b);
}

/** A negation in the clause before `start` ("no", "never", "without" the message). */
function negatedBefore(text: string, start: number, lex: Lexicon): boolean {
  let a = start;
  while (a > 0 && !/[,;:(—]/.test(text[a - 1]!)) a--;
  return lex.notAClaim.negationBefore.test(text.slice(a, start));
}

/** The clause around [start, end) with those words left out (the message a tool printed, quoted). */
function clauseOutside(text: string, start: number, end: number): string {
  let a = start;
  while (a > 0 && !/[,;:(—]/.test(text[a - 1]!)) a--;
  let b = end;
  while (b < text.length && !/[,;:)—]/.test(text[b]!)) b++;
  return `${text.slice(a, start)} ${text.slice(end, b)}`;
}

/** Where the quotation that holds `at` opens (the last opening mark before it). */
function quoteOpening(text: string, at: number): number {
  const before = text.slice(0, at);
  return Math.max(before.lastIndexOf('"'), before.lastIndexOf('“'), before.lastIndexOf('‘'));
}

function insideQuotes(text: string, at: number): boolean {
  const before = text.slice(0, at);
  const straight = (before.match(/(?:^|[\s(])"|"(?=[\s.,;:)]|$)/g) ?? []).length;
  const open = (before.match(/[“‘]/g) ?? []).length;
  const close = (before.match(/[”’](?=[\s.,;:)]|$)/g) ?? []).length;
  return straight % 2 === 1 || open > close;
}
