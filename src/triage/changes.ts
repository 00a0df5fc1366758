import { Chalk } from 'chalk';
import type { CaseVerdict } from '../verdict/verdict.js';

/** What one answer changed, as data (tests assert these) and as short lines for the terminal. */
export type Change =
  | { kind: 'verdict'; from: string; to: string }
  | { kind: 'fired'; rule: string; verdict: string | null }
  | { kind: 'excluded'; rule: string; verdict: string | null }
  | { kind: 'withdrawn'; rule: string; verdict: string | null }
  | { kind: 'claim'; index: number; claim: string; from: string; to: string };

/** Compare the verdicts before and after an answer. Pure. */
export function diffVerdicts(before: CaseVerdict, after: CaseVerdict): Change[] {
  const out: Change[] = [];
  if (before.verdict !== after.verdict) out.push({ kind: 'verdict', from: before.verdict, to: after.verdict });
  const firedBefore = new Set(before.findings.map((f) => f.rule));
  const firedAfter = new Set(after.findings.map((f) => f.rule));
  const openAfter = new Set(after.undecided.map((u) => u.rule));
  for (const f of after.findings) if (!firedBefore.has(f.rule)) out.push({ kind: 'fired', rule: f.rule, verdict: f.verdict });
  for (const f of before.findings) if (!firedAfter.has(f.rule)) out.push({ kind: 'withdrawn', rule: f.rule, verdict: f.verdict });
  for (const u of before.undecided) {
    if (!firedAfter.has(u.rule) && !openAfter.has(u.rule)) out.push({ kind: 'excluded', rule: u.rule, verdict: u.verdict });
  }
  after.claims.forEach((c, i) => {
    const was = before.claims[i];
    if (was && was.judgement !== c.judgement) out.push({ kind: 'claim', index: i, claim: c.kind, from: was.judgement, to: c.judgement });
  });
  return out;
}

/** One line per change; the verdict first. Excluded warnings are left out unless `all`. */
export function formatChanges(changes: Change[], opts: { color: boolean; all?: boolean }): string {
  const k = new Chalk({ level: opts.color ? 1 : 0 });
  const label = (v: string | null) => v ?? 'warning';
  const lines: string[] = [];
  for (const c of changes) {
    switch (c.kind) {
      case 'verdict':
        lines.push(`  ${k.bold('verdict')} ${c.from} -> ${k.bold(c.to)}`);
        break;
      case 'fired':
        lines.push(`  ${k.yellow('+ finding')} ${c.rule} (${label(c.verdict)})`);
        break;
      case 'withdrawn':
        lines.push(`  ${k.dim('- finding withdrawn')} ${c.rule} (${label(c.verdict)})`);
        break;
      case 'excluded':
        if (c.verdict !== null || opts.all) lines.push(`  ${k.green('- excluded')} ${c.rule} (${label(c.verdict)})`);
        break;
      case 'claim':
        lines.push(`  ${k.bold('claim')} ${c.claim}: ${c.from} -> ${c.to}`);
        break;
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : `  ${k.dim('(no change)')}\n`;
}
