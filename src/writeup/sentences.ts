import type { ClaimKind } from '../case/schema.js';
import type { SourceLine } from './document.js';
import { convert, isCaseField, type WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';

/** A sentence of prose with a map back to source positions. */
export interface Sentence {
  text: string;
  /** Position of character `i` of `text`. */
  at(i: number): { line: number; col: number };
}

/** A claim the author makes, at the position of the words that make it. */
export interface WriteupClaim {
  kind: ClaimKind;
  text: string;
  line: number;
  col: number;
  origin: 'sentence' | 'explicit';
}

/** Words that matched a claim pattern but are not the author's claim, and why. */
export interface NotAClaim {
  kind: ClaimKind;
  line: number;
  col: number;
  reason: 'question' | 'hedged' | 'attributed' | 'quoted' | 'negated';
  text: string;
}

const ABBREV = /(?:\be\.g|\bi\.e|\betc|\bvs|\bcf|\bapprox|\bca|\bFig|\bal|\bno)$/i;

/** Split prose lines into sentences; markup characters become spaces so columns stay true. */
export function sentencesOf(lines: SourceLine[]): Sentence[] {
  const starts: number[] = [];
  let joined = '';
  for (const l of lines) {
    if (joined !== '') joined += ' ';
    starts.push(joined.length);
    joined += l.text;
  }
  const clean = joined.replace(/[`*]/g, ' ');
  const locate = (offset: number): { line: number; col: number } => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    const l = lines[lo]!;
    return { line: l.line, col: l.col + Math.max(0, offset - starts[lo]!) };
  };
  const out: Sentence[] = [];
  let begin = 0;
  const push = (end: number) => {
    const raw = clean.slice(begin, end);
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    if (text !== '') {
      const base = begin + lead;
      out.push({ text, at: (i) => locate(base + i) });
    }
  };
  for (let i = 0; i < clean.length; i++) {
    const c = clean.charCodeAt(i);
    if (c !== 46 && c !== 33 && c !== 63) continue; // . ! ?
    const next = clean.charCodeAt(i + 1);
    if (!(Number.isNaN(next) || next === 32 || next === 9)) continue;
    if (c === 46 && ABBREV.test(clean.slice(Math.max(begin, i - 8), i))) continue;
    push(i + 1);
    begin = i + 1;
  }
  push(clean.length);
  return out;
}

function fill(template: string, groups: Record<string, string | undefined>): string {
  return template.replace(/\{([a-z_]+)\}/g, (_, g: string) => groups[g] ?? '');
}

/** Facts stated in one sentence, per the fact lexicon. Questions and hedged clauses state none. */
export function sentenceFacts(s: Sentence, lex: Lexicon): WriteupFact[] {
  const out: WriteupFact[] = [];
  if (isQuestion(s.text, lex)) return out;
  const used = new Map<string, Array<[number, number]>>();
  const overlaps = (path: string, a: number, b: number) => (used.get(path) ?? []).some(([x, y]) => a < y && x < b);
  const record = (f: WriteupFact, start: number, end: number) => {
    out.push(f);
    const list = used.get(f.path) ?? [];
    list.push([start, end]);
    used.set(f.path, list);
  };
  for (const p of lex.facts) {
    p.re.lastIndex = 0;
    for (const m of s.text.matchAll(p.re)) {
      const start = m.index ?? 0;
      const end = start + m[0].length;
      if (lex.notAClaim.hedge.test(clauseAround(s.text, start, end))) continue;
      const groups = m.groups ?? {};
      const indices = (m as RegExpMatchArray & { indices?: { groups?: Record<string, [number, number] | undefined> } }).indices;
      const entries: Array<[string, string | number | boolean, 'set' | 'implies']> = [
        ...Object.entries(p.set).map(([k, v]) => [k, v, 'set'] as [string, string | number | boolean, 'set']),
        ...Object.entries(p.implies).map(([k, v]) => [k, v, 'implies'] as [string, string | number | boolean, 'implies']),
      ];
      for (const [pathT, valT, kind] of entries) {
        const path = fill(pathT, groups);
        if (!isCaseField(path) || overlaps(path, start, end)) continue;
        let value: string | number | boolean | undefined;
        let where = start;
        if (typeof valT === 'string') {
          const ref = /^\{([a-z_]+)(?::([a-z]+))?\}$/.exec(valT);
          if (ref) {
            const g = ref[1] ?? '';
            const v = convert(groups[g] ?? '', ref[2], path);
            if (v === undefined || v === null || Array.isArray(v)) continue;
            value = v;
            where = indices?.groups?.[g]?.[0] ?? start;
          } else value = convert(valT, undefined, path) as string | number | boolean | undefined;
        } else value = valT;
        if (value === undefined) continue;
        const pos = s.at(where);
        record({ path, value, line: pos.line, col: pos.col, text: m[0], origin: kind === 'implies' ? 'implied' : 'sentence', via: p.id }, start, end);
      }
    }
  }
  // One interface per sentence: the first one named ("with fexit through bpftrace" is fexit).
  let first: { m: RegExpExecArray; value: string } | undefined;
  for (const i of lex.interfaces) {
    i.re.lastIndex = 0;
    const m = i.re.exec(s.text);
    if (m && (!first || m.index < first.m.index)) first = { m, value: i.value };
  }
  for (const i of first ? [{ value: first.value }] : []) {
    const m = first!.m;
    const start = m.index;
    if (overlaps('probe.interface', start, start + m[0].length) || lex.notAClaim.hedge.test(clauseAround(s.text, start, start + m[0].length))) continue;
    const vAt = (m as RegExpExecArray & { indices?: { groups?: Record<string, [number, number] | undefined> } }).indices?.groups?.v?.[0] ?? start;
    const pos = s.at(vAt);
    record({ path: 'probe.interface', value: i.value, line: pos.line, col: pos.col, text: m[0].trim(), origin: 'sentence', via: 'interface' }, start, start + m[0].length);
  }
  return out;
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

function insideQuotes(text: string, at: number): boolean {
  const before = text.slice(0, at);
  const straight = (before.match(/(?:^|[\s(])"|"(?=[\s.,;:)]|$)/g) ?? []).length;
  const open = (before.match(/[“‘]/g) ?? []).length;
  const close = (before.match(/[”’](?=[\s.,;:)]|$)/g) ?? []).length;
  return straight % 2 === 1 || open > close;
}

/** Claims the author makes in one sentence, and the matches that are not claims (with the reason). */
export function sentenceClaims(s: Sentence, lex: Lexicon): { claims: WriteupClaim[]; rejected: NotAClaim[] } {
  const claims: WriteupClaim[] = [];
  const rejected: NotAClaim[] = [];
  const n = lex.notAClaim;
  for (const c of lex.claims) {
    let found: WriteupClaim | undefined;
    let refused: NotAClaim | undefined;
    for (const re of c.res) {
      re.lastIndex = 0;
      for (const m of s.text.matchAll(re)) {
        const start = m.index ?? 0;
        const end = start + m[0].length;
        const clauseStart = (() => { let a = start; while (a > 0 && !/[,;:(—]/.test(s.text[a - 1]!)) a--; return a; })();
        const reason: NotAClaim['reason'] | undefined =
          isQuestion(s.text, lex) ? 'question'
          : n.hedge.test(s.text) ? 'hedged'
          : insideQuotes(s.text, start) ? 'quoted'
          : n.attribution.test(s.text.slice(0, start)) ? 'attributed'
          : n.negationBefore.test(s.text.slice(clauseStart, start)) || n.negationAfter.test(s.text.slice(end)) ? 'negated'
          : undefined;
        const pos = s.at(start);
        if (reason === undefined) {
          if (!found || pos.line < found.line || (pos.line === found.line && pos.col < found.col)) found = { kind: c.kind, text: s.text.length > 240 ? `${s.text.slice(0, 239)}…` : s.text, line: pos.line, col: pos.col, origin: 'sentence' };
          break;
        }
        refused ??= { kind: c.kind, line: pos.line, col: pos.col, reason, text: m[0] };
      }
    }
    if (found) claims.push(found);
    else if (refused) rejected.push(refused);
  }
  return { claims, rejected };
}
