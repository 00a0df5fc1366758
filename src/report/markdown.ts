import type { CaseVerdict } from '../verdict/verdict.js';
import type { Hint } from './hints.js';
import { formatAccounting, formatValue } from './text.js';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** A Markdown audit report: a summary table, then one section per case. Pure. */
export function formatMarkdown(verdicts: CaseVerdict[], hints: ReadonlyMap<CaseVerdict, readonly Hint[]> = new Map()): string {
  const out: string[] = ['# kretprobe-triage audit', '', '| case | verdict | claims | missing |', '|---|---|---|---|'];
  for (const v of verdicts) {
    const claims = v.claims.map((c) => `${c.kind}: ${c.judgement}`).join(', ') || '—';
    out.push(`| ${cell(v.id)} | \`${v.verdict}\` | ${cell(claims)} | ${cell(v.missing.join(', ') || '—')} |`);
  }
  for (const v of verdicts) {
    out.push('', `## ${v.id}${v.title ? ` — ${cell(v.title)}` : ''}`, '', `**Verdict:** \`${v.verdict}\``, '');
    if (v.findings.length) {
      out.push('| rule | impact | source | facts |', '|---|---|---|---|');
      for (const f of v.findings) {
        const facts = Object.entries(f.facts).map(([k, x]) => `${k}=${formatValue(x)}`).join(', ');
        out.push(`| \`${f.rule}\` | ${f.verdict ?? 'warning'} | ${cell(f.source)} | ${cell(facts)} |`);
      }
      out.push('');
      for (const f of v.findings) out.push(`- **${f.rule}**: ${f.explanation}`);
      out.push('');
    }
    if (v.not_applied?.length) out.push(`**Not applied until known:** ${v.not_applied.map((n) => `\`${n.rule}\` (${n.until.join(', ')})`).join('; ')}`, '');
    out.push(`**Accounting:** ${formatAccounting(v.accounting)}`, '');
    for (const c of v.claims) out.push(`- Claim \`${c.kind}\`${c.text ? ` ("${cell(c.text)}")` : ''}: **${c.judgement}** — ${c.because}`);
    if (v.missing.length) out.push('', `**Missing:** ${v.missing.join(', ')}`);
    if (v.possible.length > 1) out.push('', `**Still possible:** ${v.possible.map((p) => `\`${p}\``).join(', ')}`);
    const how = hints.get(v) ?? [];
    if (how.length) {
      out.push('', '**Collect:**', '');
      for (const h of how) out.push(`- \`${h.fact}\``, '', '  ```sh', ...h.lines.map((l) => `  ${l}`), '  ```');
    }
    out.push('', `**Next:** ${v.next}`);
  }
  return `${out.join('\n')}\n`;
}
