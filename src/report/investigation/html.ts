import type { Block, Inline, InvestigationDocument } from './document.js';
import { esc, refAttrs, refText, shown } from './values.js';

/**
 * The investigation report as one self-contained HTML page: inline CSS and SVG, no script, and a
 * Content-Security-Policy that forbids every fetch, so it reads the same offline, with scripts
 * off and on paper. Pure.
 */

const CSS = `
:root { color: #1a1a1a; background: #fff; font: 15px/1.45 system-ui, sans-serif; }
body { max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #999; }
.sub { color: #444; margin-top: 0; } .cites { color: #555; font-size: 0.85rem; margin-top: -0.4rem; }
nav ol { columns: 2; font-size: 0.9rem; }
table { border-collapse: collapse; margin: 0.6rem 0; width: 100%; font-size: 0.9rem; }
th, td { border: 1px solid #bbb; padding: 0.25rem 0.45rem; text-align: left; vertical-align: top; }
th { background: #eee; }
td { overflow-wrap: anywhere; }
code { font-family: ui-monospace, monospace; font-size: 0.85em; background: #f3f3f3; padding: 0 0.2em; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { font-size: 0.85rem; color: #333; }
@media print { body { max-width: none; margin: 0; } nav { display: none; } h2 { break-after: avoid; } figure, table { break-inside: avoid; } }
`;

function inline(x: Inline): string {
  if (typeof x === 'string') return esc(x);
  if ('strong' in x) return `<strong>${x.strong.map(inline).join('')}</strong>`;
  if ('code' in x) return `<code>${esc(x.code)}</code>`;
  return `<span class="v"${refAttrs(x)}>${esc(shown(x))}</span>`;
}
const inlines = (xs: Inline[]): string => xs.map(inline).join('');

function block(b: Block): string {
  switch (b.t) {
    case 'p':
      return `<p>${inlines(b.c)}</p>`;
    case 'list':
      return `<ul>${b.items.map((i) => `<li>${inlines(i)}</li>`).join('')}</ul>`;
    case 'table':
      return `<table><thead><tr>${b.head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${b.rows.map((r) => `<tr>${r.map((cell) => `<td>${inlines(cell)}</td>`).join('')}</tr>`).join('')}</tbody></table>`;
    case 'figure':
      return `<figure id="fig-${esc(b.name)}">${b.svg}<figcaption>${esc(b.caption)}</figcaption></figure>`;
  }
}

export function formatInvestigationHtml(doc: InvestigationDocument): string {
  const title = doc.title.map((x) => (typeof x === 'string' ? x : 'v' in x ? refText(x.v) : '')).join('');
  const out: string[] = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="kretprobe-triage report">',
    `<title>${esc(title)}</title><style>${CSS}</style></head><body>`,
    `<header><h1>${inlines(doc.title)}</h1>${doc.sub.length ? `<p class="sub">${inlines(doc.sub)}</p>` : ''}</header>`,
    `<nav><ol>${doc.sections.map((s) => `<li><a href="#${s.id}">${esc(s.title)}</a></li>`).join('')}</ol></nav>`,
  ];
  for (const s of doc.sections) {
    out.push(`<section id="${s.id}"><h2>${esc(s.title)}</h2><p class="cites">seed: ${esc(s.cites)}</p>${s.blocks.map(block).join('\n')}</section>`);
  }
  out.push('<footer><p class="cites">Written by kretprobe-triage report. Every value carries its source as <code>data-k</code> (verdict, ledger or case JSON).</p></footer>');
  out.push('</body></html>');
  return `${out.join('\n')}\n`;
}
