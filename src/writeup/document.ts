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

/** The block parser's state after a parse: the tokens, and where each source line starts and ends. */
interface Blocks {
  tokens: Token[];
  /** Offset in the parsed text of each line's first character, and of its end (its newline or the text's end). */
  bMarks: number[];
  eMarks: number[];
}

function blocksOf(text: string, kind: WriteupKind): Blocks {
  const md = kind === 'markdown' ? markdown : plain;
  // Block rules only: md.parse would also run the inline rules over every paragraph. This is
  // md.block.parse(text, md, env, tokens) with its state kept: the line marks it computes anyway
  // (restored after blockquotes) locate each content line without cutting the source in lines.
  if (!text) return { tokens: [], bMarks: [0], eMarks: [0] };
  const state = new md.block.State(text, md, {}, []);
  md.block.tokenize(state, state.line, state.lineMax);
  return { tokens: state.tokens, bMarks: state.bMarks, eMarks: state.eMarks };
}

/** Parse only the block structure (what the bench measures as "only parsing"). */
export function parseBlocks(text: string, kind: WriteupKind): Token[] {
  return blocksOf(text, kind).tokens;
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

/**
 * Locate each content line inside its source line (content lines lose markers and indentation).
 * The source line is read in place in the parsed text `src`, between the parser's marks, so no
 * line is cut out of it; the content is walked line by line without an array of its lines.
 */
function located(src: string, blocks: Blocks, firstLine: number, content: string): SourceLine[] {
  const out: SourceLine[] = [];
  const { bMarks, eMarks } = blocks;
  const last = bMarks.length - 1; // the parser's extra mark past the last line
  // The lines of content.split('\n'), less a final empty one (content ends with a newline).
  for (let p = 0, line = firstLine; p < content.length; line++) {
    let q = content.indexOf('\n', p);
    if (q < 0) q = content.length;
    const text = content.slice(p, q);
    p = q + 1;
    let at = -1;
    if (text !== '' && line - 1 < last) {
      const b = bMarks[line - 1]!;
      const from = eMarks[line - 1]! - text.length;
      // Usually the content line is its source line less leading markers: then it ends the line.
      // Otherwise (rarely: a trimmed or re-indented line) its last occurrence in the line.
      // (A slice compared, not startsWith(text, from), which V8 makes several times slower.)
      if (from >= b) at = src.slice(from, eMarks[line - 1]) === text ? from - b : src.slice(b, eMarks[line - 1]).lastIndexOf(text);
    }
    out.push({ line, col: at >= 0 ? at + 1 : 1, text });
  }
  return out;
}

const INDENTED = /^(?:\s*>)*(?: {2,}|\t)\S/;

/** A document whose source lines are cut only when read (a mail's headers and the front matter read them). */
class Document implements WriteupDocument {
  declare title?: string;
  readonly pieces: Piece[] = [];
  readonly #text: string;
  #source: string[] | undefined;
  constructor(
    text: string,
    readonly kind: WriteupKind,
  ) {
    this.#text = text;
  }

  get source(): string[] {
    if (!this.#source) {
      const lines = this.#text.split('\n');
      if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
      this.#source = lines;
    }
    return this.#source;
  }
}

/** Split a write-up into positioned pieces. Pure. */
export function readDocument(text: string, kind: WriteupKind): WriteupDocument {
  const doc = new Document(text, kind);
  let body: string[] | undefined;
  if (kind === 'mail') {
    const m = blankMailHeaders(doc.source);
    body = m.lines;
    if (m.subject) doc.title = m.subject;
  }
  // YAML front matter: the author's explicit facts.
  if (body ? body[0] === '---' : text.startsWith('---') && (text.length === 3 || text.charCodeAt(3) === 10)) {
    const lines = body ?? doc.source;
    const end = lines.findIndex((l, i) => i > 0 && (l === '---' || l === '...'));
    if (end > 0) {
      doc.pieces.push({ type: 'explicit', origin: 'front-matter', lines: lines.slice(1, end).map((t, i) => ({ line: i + 2, col: 1, text: t })) });
      body = lines.map((l, i) => (i <= end ? '' : l));
    }
  }
  const parsed = body ? body.join('\n') : text;
  const blocks = blocksOf(parsed, kind);
  const { tokens } = blocks;
  const lineText = (line: number) => (line - 1 < blocks.bMarks.length - 1 ? parsed.slice(blocks.bMarks[line - 1], blocks.eMarks[line - 1]) : '');
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
      const lines = located(parsed, blocks, t.map[0] + 2, t.content);
      if (info === 'kretprobe-case') doc.pieces.push({ type: 'explicit', origin: 'fenced', lines });
      else doc.pieces.push({ type: 'block', info, lines, quoted });
    } else if (t.type === 'code_block') {
      doc.pieces.push({ type: 'block', info: '', lines: located(parsed, blocks, t.map[0] + 1, t.content), quoted });
    } else if (t.type === 'inline') {
      const parent = tokens[i - 1];
      const heading = parent?.type === 'heading_open';
      const lines = located(parsed, blocks, t.map[0] + 1, t.content);
      // In text and mail, a paragraph whose every line is indented is pasted output, and a quoted
      // paragraph is someone else's: both are offered to the artifact parsers, never read as prose.
      const indented = kind !== 'markdown' && lines.every((l) => INDENTED.test(lineText(l.line)));
      if (indented || quoted) doc.pieces.push({ type: 'block', info: '', lines, quoted });
      else doc.pieces.push({ type: 'prose', lines, quoted, heading });
    }
  }
  return doc;
}
