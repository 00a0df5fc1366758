import type { Block, Inline, InvestigationDocument } from './document.js';
import { shown } from './values.js';
import { markdownText } from '../markdown.js';

/**
 * The investigation report as Markdown: the same sections as the HTML, tables as tables and the
 * pictures as SVG files written beside it (returned with their names). Pure.
 */

export interface MarkdownReport {
  markdown: string;
  /** SVG files to write beside the Markdown, by file name. */
  files: Array<{ name: string; svg: string }>;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function inline(x: Inline): string {
  if (typeof x === 'string') return x;
  if ('strong' in x) return `**${x.strong.map(inline).join('')}**`;
  if ('code' in x) return `\`${x.code}\``;
  // A value from the case: its HTML shown as text, as the HTML report does.
  return markdownText(shown(x));
}
const inlines = (xs: Inline[]): string => xs.map(inline).join('');

/** `stem`: the SVG files are named `<stem>.<figure>.svg` (e.g. report.inflight.svg). */
export function formatInvestigationMarkdown(doc: InvestigationDocument, stem: string): MarkdownReport {
  const files: MarkdownReport['files'] = [];
  const out: string[] = [`# ${inlines(doc.title)}`, ''];
  if (doc.sub.length) out.push(`_${inlines(doc.sub)}_`, '');
  for (const s of doc.sections) {
    out.push(`## ${s.title}`, '', `_seed: ${s.cites}_`, '');
    for (const b of s.blocks) out.push(block(b, stem, files), '');
  }
  return { markdown: `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`, files };
}

function block(b: Block, stem: string, files: MarkdownReport['files']): string {
  switch (b.t) {
    case 'p':
      return inlines(b.c);
    case 'list':
      return b.items.map((i) => `- ${inlines(i)}`).join('\n');
    case 'table':
      return [`| ${b.head.map(cell).join(' | ')} |`, `|${b.head.map(() => '---').join('|')}|`, ...b.rows.map((r) => `| ${r.map((c) => cell(inlines(c))).join(' | ')} |`)].join('\n');
    case 'figure': {
      const name = `${stem}.${b.name}.svg`;
      files.push({ name, svg: b.svg });
      return `![${b.caption}](${encodeURI(name)})\n\n_${b.caption}_`;
    }
  }
}
