import type { CaseVerdict } from '../verdict/verdict.js';
import type { Hint } from './hints.js';
import { formatAccounting, formatValue } from './text.js';
import { sourceLink } from './sources.js';
import { subjectNote } from './claims.js';

/** Text from a case as Markdown text: its HTML shown, never rendered (as the HTML report escapes it). */
export const markdownText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const text = markdownText;
const cell = (s: string) => text(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown audit report: a summary table, then one section per case. Pure. */
export function formatMarkdown(verdicts: CaseVerdict[], hints: ReadonlyMap<CaseVerdict, readonly Hint[]> = new Map()): string {
  return markdownDocument(verdicts.map(markdownRow), verdicts.map((v) => markdownSection(v, hints.get(v) ?? [])));
}

/** The report from its parts, so a long audit can keep only the rendered rows and sections. */
export function markdownDocument(rows: readonly string[], sections: readonly string[], footer = ''): string {
  const out: string[] = ['# kretprobe-triage audit', '', '| case | verdict | claims | missing |', '|---|---|---|---|', ...rows];
  for (const s of sections) out.push(s);
  return `${out.join('\n')}\n${footer}`;
}

/** The summary-table row of one case. */
export function markdownRow(v: CaseVerdict): string {
  const claims = v.claims.map((c) => `${c.kind}: ${c.judgement}`).join(', ') || '—';
  return `| ${cell(v.id)} | \`${v.verdict}\` | ${cell(claims)} | ${cell(v.missing.join(', ') || '—')} |`;
}

/** The section of one case (starting with the blank line before its heading). */
export function markdownSection(v: CaseVerdict, hints: readonly Hint[] = []): string {
  const out: string[] = ['', `## ${v.id}${v.title ? ` — ${cell(v.title)}` : ''}`, '', `**Verdict:** \`${v.verdict}\``, ''];
  if (v.findings.length) {
    out.push('| rule | impact | source | facts |', '|---|---|---|---|');
    for (const f of v.findings) {
      const facts = Object.entries(f.facts).map(([k, x]) => `${k}=${formatValue(x)}`).join(', ');
      const link = sourceLink(f.source);
      out.push(`| \`${f.rule}\` | ${f.verdict ?? 'warning'} | ${link ? `[${cell(f.source)}](${link})` : cell(f.source)} | ${cell(facts)} |`);
    }
    out.push('');
    for (const f of v.findings) out.push(`- **${f.rule}**: ${text(f.explanation)}${f.accepted !== undefined ? ` *Accepted: ${cell(f.accepted)}*` : ''}`);
    out.push('');
  }
  if (v.not_applied?.length) out.push(`**Not applied until known:** ${v.not_applied.map((n) => `\`${n.rule}\` (${n.until.join(', ')})`).join('; ')}`, '');
  out.push(`**Accounting:** ${formatAccounting(v.accounting)}`, '');
  for (const c of v.claims) out.push(`- Claim \`${c.kind}\`${subjectNote(c.subject)}${c.text ? ` ("${cell(c.text)}")` : ''}: **${c.judgement}** — ${text(c.because)}${c.accepted !== undefined ? ` *Accepted: ${cell(c.accepted)}*` : ''}`);
  if (v.missing.length) out.push('', `**Missing:** ${text(v.missing.join(', '))}`);
  if (v.possible.length > 1) out.push('', `**Still possible:** ${v.possible.map((p) => `\`${p}\``).join(', ')}`);
  if (hints.length) {
    out.push('', '**Collect:**', '');
    for (const h of hints) out.push(`- \`${h.fact}\``, '', '  ```sh', ...h.lines.map((l) => `  ${l}`), '  ```');
  }
  out.push('', `**Next:** ${text(v.next)}`);
  return out.join('\n');
}

/**
 * A Markdown report of a command's JSON result (ledger, capacity): the same content as
 * `--format json`, so the two cannot drift. Scalars go into a field/value table (nested objects
 * flattened to dotted names), arrays of objects become tables of their own. Pure.
 */
export function formatJsonMarkdown(title: string, data: Record<string, unknown>): string {
  const rows: Array<[string, string]> = [];
  const tables: string[] = [];
  const show = (v: unknown) => (v === null || v === undefined ? 'unknown' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const walk = (prefix: string, v: unknown) => {
    if (Array.isArray(v) && v.length && v.every((x) => x !== null && typeof x === 'object' && !Array.isArray(x))) {
      const cols = [...new Set(v.flatMap((x) => Object.keys(x as object)))];
      tables.push(`## ${prefix}`, '', `| ${cols.map(cell).join(' | ')} |`, `|${cols.map(() => '---|').join('')}`);
      for (const x of v as Array<Record<string, unknown>>) tables.push(`| ${cols.map((c) => cell(show(x[c]))).join(' | ')} |`);
      tables.push('');
    } else if (Array.isArray(v)) rows.push([prefix, v.length ? v.map(show).join(', ') : '—']);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(prefix ? `${prefix}.${k}` : k, x);
    else rows.push([prefix, show(v)]);
  };
  walk('', data);
  const out = [`# ${title}`, '', '| field | value |', '|---|---|', ...rows.map(([k, v]) => `| \`${cell(k)}\` | ${cell(v)} |`), ''];
  return `${[...out, ...tables].join('\n').trimEnd()}\n`;
}
