import jsYaml from 'js-yaml';
import { LineCounter, parseDocument } from 'yaml';
import { CLAIM_KINDS, type ClaimKind } from '../case/schema.js';
import { InputError } from '../errors.js';
import type { SourceLine } from './document.js';
import { isCaseField, type WriteupFact } from './facts.js';
import type { WriteupClaim } from './sentences.js';

/** Top-level keys of an explicit block that are case content (others, such as author or date, are the page's own). */
const CASE_SECTIONS = new Set(['kernel', 'probe', 'coverage', 'concurrency', 'counters', 'ledger', 'latency', 'fixture', 'claims']);

export interface ExplicitResult {
  facts: WriteupFact[];
  claims: WriteupClaim[];
  id?: string;
  title?: string;
}

/**
 * The author's explicit facts: YAML front matter, or a fenced `kretprobe-case` block. Every leaf
 * is a fact cited at its own line and column. A YAML error is the user's, at its location.
 */
export function explicitFacts(lines: SourceLine[], origin: 'front-matter' | 'fenced', file: string): ExplicitResult {
  const out: ExplicitResult = { facts: [], claims: [] };
  if (lines.length === 0) return out;
  const text = lines.map((l) => l.text).join('\n');
  // js-yaml (core schema) reads the values fast; only a YAML error takes the positioned parser,
  // for its line and column.
  let root: unknown;
  try {
    root = jsYaml.load(text, { schema: jsYaml.CORE_SCHEMA, json: false });
  } catch {
    const counter = new LineCounter();
    const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
    const err = doc.errors[0];
    const p = err ? counter.linePos(err.pos[0]) : { line: 1, col: 1 };
    const l = lines[p.line - 1] ?? lines[0]!;
    throw new InputError({ file, line: l.line, col: l.col + p.col - 1 }, `valid YAML in the ${origin === 'fenced' ? 'kretprobe-case block' : 'front matter'}`, err?.message.split('\n')[0] ?? 'a YAML error');
  }
  if (!isObject(root)) return out;
  // Front matter may nest the case under `kretprobe-case:`.
  const cursor = { line: 0, col: 0 };
  const nested = root['kretprobe-case'];
  if (isObject(nested)) {
    seek(lines, cursor, 'kretprobe-case');
    root = nested;
  }
  const where = () => {
    const l = lines[cursor.line]!;
    return { line: l.line, col: l.col + cursor.col };
  };
  const walk = (node: Record<string, unknown>, path: string[]): void => {
    for (const [key, value] of Object.entries(node)) {
      if (path.length === 0 && (key === 'id' || key === 'title') && (typeof value === 'string' || typeof value === 'number')) {
        out[key] = String(value);
        continue;
      }
      if (path.length === 0 && !CASE_SECTIONS.has(key)) continue;
      if (!seek(lines, cursor, key)) continue;
      if (path.length === 0 && key === 'claims') {
        claimsOf(value);
        continue;
      }
      // null is unknown, except for target_module, where it says "built into vmlinux".
      if (value === undefined || (value === null && [...path, key].join('.') !== 'probe.target_module')) continue;
      if (isObject(value)) {
        walk(value, [...path, key]);
        continue;
      }
      const name = [...path, key].join('.');
      if (!isCaseField(name)) throw new InputError({ file, ...where() }, 'a case field of kretprobe-case/v1 (case-format.md)', name);
      const v: WriteupFact['value'] = Array.isArray(value) ? value.map((x) => String(x)) : (value as string | number | boolean | null);
      out.facts.push({ path: name, value: v, ...where(), text: lines[cursor.line]!.text.trim(), origin: 'explicit', via: origin });
    }
  };
  const claimsOf = (list: unknown): void => {
    if (!Array.isArray(list)) return;
    for (const item of list) {
      if (!isObject(item)) continue;
      seek(lines, cursor, 'kind');
      const kind = item.kind;
      if (typeof kind !== 'string' || !(CLAIM_KINDS as readonly string[]).includes(kind)) throw new InputError({ file, ...where() }, `a claim kind (${CLAIM_KINDS.join(' | ')})`, String(kind));
      out.claims.push({ kind: kind as ClaimKind, text: typeof item.text === 'string' ? item.text : '', ...where(), origin: 'explicit' });
    }
  };
  walk(root as Record<string, unknown>, []);
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Move the cursor to the value of the next `key:` at or after it. Keys come in document order
 * (YAML mappings keep it), so a forward search finds each one, in block and in flow style.
 */
const KEY_PATTERNS = new Map<string, RegExp>();

function keyPattern(key: string): RegExp {
  let re = KEY_PATTERNS.get(key);
  if (!re) {
    re = new RegExp(`(?:^|[\\s{,'"-])${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"]?\\s*:(?:\\s|$)`, 'g');
    // Case keys are few; an author's own keys are not kept past a bound.
    if (KEY_PATTERNS.size < 1024) KEY_PATTERNS.set(key, re);
  }
  return re;
}

function seek(lines: SourceLine[], cursor: { line: number; col: number }, key: string): boolean {
  const re = keyPattern(key);
  for (let i = cursor.line; i < lines.length; i++) {
    const t = lines[i]!.text;
    re.lastIndex = i === cursor.line ? cursor.col : 0;
    const m = re.exec(t);
    if (!m) continue;
    let col = m.index + m[0].length;
    while (col < t.length && t[col] === ' ') col++;
    cursor.line = i;
    cursor.col = col < t.length ? col : m.index + (m[0].length - m[0].trimStart().length);
    return true;
  }
  return false;
}
