import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
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
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  const where = (offset: number) => {
    const p = counter.linePos(offset);
    const l = lines[p.line - 1] ?? lines[0]!;
    return { line: l.line, col: l.col + p.col - 1 };
  };
  const err = doc.errors[0];
  if (err) throw new InputError({ file, ...where(err.pos[0]) }, `valid YAML in the ${origin === 'fenced' ? 'kretprobe-case block' : 'front matter'}`, err.message.split('\n')[0]);
  let root: Node | null = doc.contents as Node | null;
  if (!isMap(root)) return out;
  // Front matter may nest the case under `kretprobe-case:`.
  const nested = root.items.find((p) => isScalar(p.key) && p.key.value === 'kretprobe-case');
  if (nested && isMap(nested.value)) root = nested.value as Node;
  if (!isMap(root)) return out;
  const lineText = (offset: number) => (lines[counter.linePos(offset).line - 1]?.text ?? '').trim();
  const walk = (node: Node, path: string[]): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        const value = pair.value as Node | null;
        if (path.length === 0 && (key === 'id' || key === 'title') && isScalar(value)) {
          out[key] = String(value.value);
          continue;
        }
        if (path.length === 0 && !CASE_SECTIONS.has(key)) continue;
        if (path.length === 0 && key === 'claims') { claimsOf(value); continue; }
        if (value === null) continue;
        walk(value, [...path, key]);
      }
      return;
    }
    const name = path.join('.');
    const offset = node.range?.[0] ?? 0;
    let value: WriteupFact['value'];
    if (isScalar(node)) value = node.value as WriteupFact['value'];
    else if (isSeq(node)) value = node.items.map((x) => String(isScalar(x) ? x.value : x));
    else return;
    if (!isCaseField(name)) throw new InputError({ file, ...where(offset) }, 'a case field of kretprobe-case/v1 (case-format.md)', name);
    out.facts.push({ path: name, value, ...where(offset), text: lineText(offset), origin: 'explicit', via: origin });
  };
  const claimsOf = (node: Node | null): void => {
    if (!isSeq(node)) return;
    for (const item of node.items) {
      if (!isMap(item)) continue;
      const kind = item.get('kind');
      const said = item.get('text');
      const offset = (item as Node).range?.[0] ?? 0;
      if (typeof kind !== 'string' || !(CLAIM_KINDS as readonly string[]).includes(kind)) throw new InputError({ file, ...where(offset) }, `a claim kind (${CLAIM_KINDS.join(' | ')})`, String(kind));
      out.claims.push({ kind: kind as ClaimKind, text: typeof said === 'string' ? said : '', ...where(offset), origin: 'explicit' });
    }
  };
  walk(root, []);
  return out;
}
