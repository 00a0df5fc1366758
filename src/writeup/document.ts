import MarkdownIt from 'markdown-it';
import type Token from 'markdown-it/lib/token.mjs';
import type { WriteupKind } from './text.js';

/**
 * A write-up as positioned pieces: prose (the author's sentences), pasted blocks (offered to
 * the artifact parsers), and the author's explicit case block. The block structure comes from
 * markdown-it (block tokens carry their source line span); columns are recovered by finding
 * each content line in its source line, so every fact can be cited as file:line:col.
 */

/** One line of a piece: 1-based line, 1-based column where `text` starts in the source line. */
export interface SourceLine {
  line: number;
  col: number;
  text: string;
}

export type Piece =
  | { type: 'prose'; lines: SourceLine[]; quoted: boolean; heading: boolean }
  | { type: 'block'; info: string; lines: SourceLine[]; quoted: boolean }
  | { type: 'explicit'; origin: 'front-matter' | 'fenced'; lines: SourceLine[] };

export interface WriteupDocument {
  kind: WriteupKind;
  /** Source lines after decoding (index 0 is line 1). */
  source: string[];
  title?: string;
  pieces: Piece[];
}

// Block structure only: inline parsing (links, emphasis) is never needed, so it is switched off,
// which is most of markdown-it's cost. Plain text and mail keep fences, indented code, lists and
// quotes, but a line such as "# cat kprobe_profile" is a root prompt there, not a heading.
const markdown = new MarkdownIt('default', { html: false, linkify: false });
markdown.disable(['html_block']);
const plain = new MarkdownIt('default', { html: false, linkify: false });
plain.disable(['heading', 'lheading', 'html_block', 'hr', 'reference']);

/** Parse only the block structure (what the bench measures as "only parsing"). */
export function parseBlocks(text: string, kind: WriteupKind): Token[] {
  const md = kind === 'markdown' ? markdown : plain;
  // Block rules only: md.parse would also run the inline rules over every paragraph.
  const state = new md.core.State(text, md, {});
  md.block.parse(state.src, md, state.env, state.tokens);
  return state.tokens;
}

/** Lines of a mail that are not the body (headers of every message, signatures), blanked so lines keep their numbers. */
function blankMailHeaders(lines: string[]): { lines: string[]; subject?: string } {
  const out = [...lines];
  let subject: string | undefined;
  let inHeaders = true;
  let inSignature = false;
  for (let i = 0; i < out.length; i++) {
    const l = out[i]!;
    if (/^From \S+ /.test(l) && (i === 0 || out[i - 1]!.trim() === '')) {
      inHeaders = true;
      inSignature = false;
      out[i] = '';
      continue;
    }
    if (inHeaders) {
      if (l.trim() === '') { inHeaders = false; continue; }
      const s = /^Subject:\s*(.*)$/i.exec(l);
      if (s && subject === undefined) subject = (s[1] ?? '').trim();
      out[i] = '';
      continue;
    }
    if (l === '-- ') inSignature = true;
    if (inSignature) out[i] = '';
  }
  return subject !== undefined ? { lines: out, subject } : { lines: out };
}

/** Locate each content line inside its source line (content lines lose markers and indentation). */
function located(source: string[], firstLine: number, content: string): SourceLine[] {
  const parts = content.split('\n');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.map((text, i) => {
    const line = firstLine + i;
    const src = source[line - 1] ?? '';
    // Usually the content line is its source line less leading markers: then it ends the line.
    const at = text === '' ? -1 : src.endsWith(text) ? src.length - text.length : src.lastIndexOf(text);
    return { line, col: at >= 0 ? at + 1 : 1, text };
  });
}

const INDENTED = /^(?:\s*>)*(?: {2,}|\t)\S/;

/** Split a write-up into positioned pieces. Pure. */
export function readDocument(text: string, kind: WriteupKind): WriteupDocument {
  let source = text.split('\n');
  if (source.length > 1 && source[source.length - 1] === '') source.pop();
  const doc: WriteupDocument = { kind, source, pieces: [] };
  let body = source;
  if (kind === 'mail') {
    const m = blankMailHeaders(source);
    body = m.lines;
    if (m.subject) doc.title = m.subject;
  }
  // YAML front matter: the author's explicit facts.
  if (body[0] === '---') {
    const end = body.findIndex((l, i) => i > 0 && (l === '---' || l === '...'));
    if (end > 0) {
      doc.pieces.push({ type: 'explicit', origin: 'front-matter', lines: body.slice(1, end).map((t, i) => ({ line: i + 2, col: 1, text: t })) });
      body = body.map((l, i) => (i <= end ? '' : l));
    }
  }
  const tokens = parseBlocks(body === source ? text : body.join('\n'), kind);
  let quoteDepth = 0;
  let inTable = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.type === 'blockquote_open') quoteDepth++;
    else if (t.type === 'blockquote_close') quoteDepth--;
    else if (t.type === 'table_open') inTable++;
    else if (t.type === 'table_close') inTable--;
    if (inTable > 0 || !t.map) continue;
    const quoted = quoteDepth > 0;
    if (t.type === 'fence') {
      const info = t.info.trim().split(/\s+/)[0] ?? '';
      const lines = located(body, t.map[0] + 2, t.content);
      if (info === 'kretprobe-case') doc.pieces.push({ type: 'explicit', origin: 'fenced', lines });
      else doc.pieces.push({ type: 'block', info, lines, quoted });
    } else if (t.type === 'code_block') {
      doc.pieces.push({ type: 'block', info: '', lines: located(body, t.map[0] + 1, t.content), quoted });
    } else if (t.type === 'inline') {
      const parent = tokens[i - 1];
      const heading = parent?.type === 'heading_open';
      const lines = located(body, t.map[0] + 1, t.content);
      // In text and mail, a paragraph whose every line is indented is pasted output, and a quoted
      // paragraph is someone else's: both are offered to the artifact parsers, never read as prose.
      const indented = kind !== 'markdown' && lines.every((l) => INDENTED.test(body[l.line - 1] ?? ''));
      if (indented || quoted) doc.pieces.push({ type: 'block', info: '', lines, quoted });
      else doc.pieces.push({ type: 'prose', lines, quoted, heading });
    }
  }
  return doc;
}
