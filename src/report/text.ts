import type { ChalkInstance } from 'chalk';
import { styler } from './colour.js';
import type { VerdictId } from '../case/schema.js';
import type { FactValue } from '../facts/facts.js';
import type { Accounting, CaseVerdict, ClaimResult, Finding } from '../verdict/verdict.js';
import { subjectNote } from './claims.js';

/** Pure text rendering of verdicts. Colour is a parameter, decided at the edge. */
export interface TextOptions {
  color: boolean;
  /** Show warning findings too (default true). */
  warnings?: boolean;
  /** For a missing fact, the command that collects it on the target (from rules/questions). */
  collect?: Record<string, string>;
  /** Every missing fact (audit --verbose), not only the MISSING_SHOWN that decide most. */
  full?: boolean;
  /** Print the missing facts at all (default true; a write-up prints its own "never establishes"). */
  missing?: boolean;
}

/**
 * Missing facts a report shows by default: the ones that decide most (they come ranked), each
 * with the command that collects it. The rest are named by count, with where to get them
 * (--verbose, JSON): a list of thirty facts is not a next step (issue 21, output for a reader).
 */
export const MISSING_SHOWN = 3;

/** The line that stands for the missing facts a report leaves out. */
export function moreMissing(hidden: number): string {
  return `... and ${hidden} more that would change the verdict: --verbose lists them (so does --format json)`;
}

const VERDICT_STYLE: Record<VerdictId, (c: ChalkInstance) => ChalkInstance> = {
  'setup-failure': (c) => c.red.bold,
  'capacity-missed': (c) => c.yellow.bold,
  'observer-gap': (c) => c.yellow.bold,
  'still-in-flight': (c) => c.yellow.bold,
  'filtered-by-design': (c) => c.cyan.bold,
  'insufficient-evidence': (c) => c.magenta.bold,
  'evidence-of-stall': (c) => c.red.bold,
  'fully-observed': (c) => c.green.bold,
};

export function formatValue(v: FactValue | null | undefined): string {
  if (v === undefined || v === null) return 'unknown';
  if (Array.isArray(v)) return v.length ? `[${v.join(', ')}]` : '[]';
  return String(v);
}

/** Wrap words to `width` columns, each line starting with `indent`. */
export function wrap(text: string, width: number, indent: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && line.length + 1 + w.length > width - indent.length) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

/** `eligible 3 = returned 2 + filtered 0 + ...`, with unknown parts shown as `?`. */
export function formatAccounting(a: Accounting): string {
  const n = (x: number | null) => (x === null ? '?' : String(x));
  const eq = `eligible ${n(a.eligible)} = returned ${n(a.returned)} + filtered ${n(a.filtered)} + in flight ${n(a.in_flight_at_stop)} + capacity missed ${n(a.capacity_missed)} + not covered ${n(a.not_covered)} + unexplained ${n(a.unexplained)}`;
  const state = a.balanced === null ? 'balance unknown (some terms are unknown)' : a.balanced ? 'balanced' : 'DOES NOT BALANCE';
  return `${eq}  [${state}]`;
}

function factsLine(f: Finding): string {
  const parts = Object.entries(f.facts).map(([k, v]) => `${k}=${formatValue(v)}`);
  let line = parts.join('  ');
  if (f.provenance) {
    const from = [...new Set(Object.values(f.provenance))];
    if (from.length) line += `  (from ${from.join(', ')})`;
  }
  return line;
}

function claimLine(c: ClaimResult, k: ChalkInstance): string {
  const style = c.judgement === 'supported' ? k.green : c.judgement === 'overreach' ? k.red : k.yellow;
  const quoted = c.text ? ` "${c.text}"` : '';
  return `${style(c.judgement.padEnd(11))} ${c.kind}${subjectNote(c.subject)}${quoted}`;
}

/** One case, as the audit prints it. */
export function formatCaseText(v: CaseVerdict, opts: TextOptions): string {
  const k = styler(opts.color);
  const out: string[] = [];
  const head = `${k.bold(v.id)}${v.title ? ` — ${v.title}` : ''}${v.file ? k.dim(`  (${v.file})`) : ''}`;
  out.push(head);
  let verdictLine = `  verdict   ${VERDICT_STYLE[v.verdict](k)(v.verdict)}`;
  if (v.possible && v.possible.length > 1) verdictLine += k.dim(`  (still possible: ${v.possible.join(', ')})`);
  if (v.expected) verdictLine += v.expected.ok ? k.green('   (as expected)') : k.red(`   (NOT AS EXPECTED: ${v.expected.problems.join('; ')})`);
  out.push(verdictLine);

  const verdictFindings = v.findings.filter((f) => f.severity === 'verdict');
  const warnings = v.findings.filter((f) => f.severity === 'warning');
  if (verdictFindings.length) {
    out.push('  findings');
    verdictFindings.forEach((f, i) => {
      out.push(`    ${i + 1}. ${VERDICT_STYLE[f.verdict!](k)(f.verdict!)}  ${k.bold(f.rule)}  ${k.dim(`[${f.source}]`)}`);
      if (f.accepted !== undefined) out.push(wrap(`accepted: ${f.accepted}`, 100, '       '));
      out.push(wrap(f.explanation, 100, '       '));
      out.push(k.dim(`       facts: ${factsLine(f)}`));
    });
  }
  if (warnings.length && opts.warnings !== false) {
    out.push('  warnings');
    for (const f of warnings) {
      out.push(`    ${k.yellow('!')} ${k.bold(f.rule)}  ${k.dim(`[${f.source}]`)}`);
      if (f.accepted !== undefined) out.push(wrap(`accepted: ${f.accepted}`, 100, '      '));
      out.push(wrap(f.explanation, 100, '      '));
      out.push(k.dim(`      facts: ${factsLine(f)}`));
    }
  }
  if (v.not_applied?.length && opts.warnings !== false) {
    out.push('  not applied until known');
    for (const n of v.not_applied) out.push(wrap(`${n.rule}: ${n.until.join(', ')}`, 100, '    '));
  }
  out.push('  accounting');
  out.push(wrap(formatAccounting(v.accounting), 100, '    '));
  if (v.claims.length) {
    out.push('  claims');
    for (const c of v.claims) {
      out.push(`    ${claimLine(c, k)}  ${k.dim(c.rule)}`);
      if (c.accepted !== undefined) out.push(wrap(`accepted: ${c.accepted}`, 100, '      '));
      out.push(wrap(c.because, 100, '      '));
    }
  }
  if (v.missing.length && opts.missing !== false) {
    out.push(`  missing   ${k.dim('(unknown facts that would change the verdict, most decisive first)')}`);
    const shown = opts.full ? v.missing : v.missing.slice(0, MISSING_SHOWN);
    for (const fact of shown) {
      // Every line of the hint, whole: a multi-line recipe cut to its first line misleads.
      const [first, ...more] = (opts.collect?.[fact] ?? '').split('\n');
      out.push(`    ${fact}${first ? k.dim(`  <- ${first}`) : ''}`);
      for (const line of more) out.push(k.dim(`        ${line}`));
    }
    if (v.missing.length > shown.length) out.push(k.dim(`    ${moreMissing(v.missing.length - shown.length)}`));
  }
  out.push('  next');
  out.push(wrap(v.next, 100, '    '));
  return `${out.join('\n')}\n`;
}

/** What the closing summary needs: counters kept while the cases were printed (src/audit/summary.ts). */
export interface SummaryCounts {
  cases: number;
  skipped: number;
  byVerdict: ReadonlyMap<string, number>;
  flaggedClaims: number;
  flaggedExamples: readonly string[];
  accepted: number;
  withExpected: number;
  unmet: readonly string[];
}

/** Which cases the audit printed above the summary, and how many need attention. */
export interface ShownCounts {
  shown: 'all' | 'attention' | 'none';
  /** Cases that alone would make the audit exit non-zero. */
  attention: number;
}

/** The closing summary of a multi-case audit. */
export function formatSummaryText(s: SummaryCounts, opts: TextOptions, shown?: ShownCounts): string {
  const k = styler(opts.color);
  const parts = [...s.byVerdict.entries()].map(([id, n]) => `${n} ${id}`);
  let text = `${k.bold(`${s.cases} case(s)`)}: ${parts.join(', ')}\n`;
  if (shown) {
    const how = shown.shown === 'attention' ? (shown.attention ? ', shown above' : '') : shown.shown === 'none' ? ' (--quiet: not shown)' : '';
    const more = shown.shown === 'all' ? '' : '; --verbose prints every case with its reasons';
    text += `need attention: ${shown.attention}${how}${more}\n`;
  }
  text += `claims flagged: ${s.flaggedClaims}${s.flaggedClaims ? ` (${s.flaggedExamples.join('; ')}${s.flaggedClaims > s.flaggedExamples.length ? '; …' : ''})` : ''}\n`;
  if (s.accepted) text += `accepted (waived, not counted): ${s.accepted}\n`;
  if (s.withExpected) text += `reference expectations: ${s.withExpected - s.unmet.length}/${s.withExpected} met${s.unmet.length ? ` — not met: ${s.unmet.join(', ')}` : ''}\n`;
  if (s.skipped) text += k.red(`skipped: ${s.skipped} file(s) that could not be audited (each named on stderr)\n`);
  return text;
}
