import { styler } from '../report/colour.js';
import type { Hint } from '../report/hints.js';
import { formatValue, MISSING_SHOWN, moreMissing, wrap } from '../report/text.js';
import type { CaseVerdict } from '../verdict/verdict.js';
import type { Extraction } from './extract.js';
import { subjectName } from '../report/claims.js';

/** What `audit` adds for a write-up after the case report. Pure. */
export function formatWriteupText(x: Extraction, v: CaseVerdict, never: readonly Hint[], opts: { color: boolean; full?: boolean }): string {
  const k = styler(opts.color);
  const out: string[] = [];
  const loc = (l: number, c: number) => `${x.file}:${l}:${c}`;
  out.push(`  facts found ${k.dim(`(${x.facts.length}; ${x.kind} write-up; explicit > artifact > sentence)`)}`);
  if (x.facts.length === 0) out.push('    none');
  for (const f of x.facts) {
    out.push(`    ${loc(f.line, f.col)}  ${k.bold(f.path)} = ${formatValue(f.value)}  ${k.dim(`[${f.origin}: ${f.via}${f.otherRun ? '; another run\'s, not the case\'s' : ''}${f.otherProbe !== undefined ? `; the probe on ${f.otherProbe}'s, not the case's` : ''}]`)}`);
    out.push(k.dim(`      "${f.text.length > 90 ? `${f.text.slice(0, 89)}…` : f.text}"`));
  }
  out.push(`  claims found ${k.dim(`(${x.claims.length})`)}`);
  if (x.claims.length === 0) out.push('    none');
  x.claims.forEach((c, i) => {
    const j = v.claims[i]?.judgement ?? '?';
    const style = j === 'supported' ? k.green : j === 'overreach' ? k.red : k.yellow;
    out.push(`    ${loc(c.line, c.col)}  ${c.kind}  ${style(j)}${c.otherRun ? k.dim(`  [${subjectName('other-run')}, not the case's]`) : ''}`);
    out.push(k.dim(wrap(`"${c.text}"`, 100, '      ')));
  });
  if (x.notClaims.length) {
    out.push(`  not claims ${k.dim('(matched a claim pattern, but the author does not assert it)')}`);
    for (const n of x.notClaims) out.push(`    ${loc(n.line, n.col)}  ${n.kind}: ${n.reason}  ${k.dim(`"${n.text}"`)}`);
  }
  if (x.unknown.length) {
    out.push(`  stated unknown ${k.dim('(the write-up says these could not be known; they stay unknown)')}`);
    for (const u of x.unknown) out.push(`    ${loc(u.line, u.col)}  ${k.bold(u.path)}: ${u.reason}  ${k.dim(`"${u.text}"`)}`);
  }
  if (x.elsewhere.length) {
    out.push(`  evidence elsewhere ${k.dim('(a cause given only by reference to another thread: not a fact here)')}`);
    for (const e of x.elsewhere) out.push(`    ${loc(e.line, e.col)}  ${k.bold(e.ref)}${e.asked ? ' (asked)' : ''}  ${k.dim(`"${e.text.length > 90 ? `${e.text.slice(0, 89)}…` : e.text}"`)}`);
  }
  if (x.conflicts.length) {
    out.push(`  disagreements`);
    for (const c of x.conflicts) {
      out.push(`    ${k.bold(c.path)}: ${formatValue(c.chosen.value)} at ${c.chosen.line}:${c.chosen.col} (${c.chosen.origin}, used) vs ${c.others.map((o) => `${formatValue(o.value)} at ${o.line}:${o.col} (${o.origin})`).join(', ')}`);
    }
  }
  out.push(`  never establishes ${k.dim('(missing facts, most decisive first, with how to collect them)')}`);
  if (v.missing.length === 0) out.push('    nothing that would change the verdict');
  // Every line of each hint, whole (report/hints.ts owns them, for the write-up's interface).
  const how = new Map(never.map((h) => [h.fact, h.lines]));
  const shown = opts.full ? v.missing : v.missing.slice(0, MISSING_SHOWN);
  for (const fact of shown) {
    const [first, ...more] = how.get(fact) ?? [];
    out.push(`    ${fact}${first ? k.dim(`  <- ${first}`) : ''}`);
    for (const line of more) out.push(k.dim(`        ${line}`));
  }
  if (v.missing.length > shown.length) out.push(k.dim(`    ${moreMissing(v.missing.length - shown.length)}`));
  return `${out.join('\n')}\n`;
}

/** The verdict JSON of a write-up: the case's verdict object plus a `writeup` member. Pure. */
export function formatWriteupJson(x: Extraction, v: CaseVerdict, base: Record<string, unknown>): string {
  const at = (l: number, c: number) => `${x.file}:${l}:${c}`;
  const claims = (base.claims as Array<Record<string, unknown>>).map((c, i) => ({ ...c, ...(x.claims[i] ? { at: at(x.claims[i]!.line, x.claims[i]!.col) } : {}) }));
  return `${JSON.stringify({
    ...base,
    claims,
    writeup: {
      kind: x.kind,
      facts: x.facts.map((f) => ({ fact: f.path, value: f.value, at: at(f.line, f.col), text: f.text, origin: f.origin, via: f.via, ...(f.otherRun ? { subject: 'other-run' } : {}), ...(f.otherProbe !== undefined ? { subject: `other-probe:${f.otherProbe}` } : {}) })),
      claims: x.claims.map((c, i) => ({ kind: c.kind, at: at(c.line, c.col), text: c.text, ...(c.otherRun ? { subject: 'other-run' } : {}), judgement: v.claims[i]?.judgement })),
      not_claims: x.notClaims.map((n) => ({ kind: n.kind, at: at(n.line, n.col), reason: n.reason, text: n.text })),
      ...(x.unknown.length ? { unknown: x.unknown.map((u) => ({ fact: u.path, reason: u.reason, at: at(u.line, u.col), text: u.text })) } : {}),
      ...(x.elsewhere.length ? { elsewhere: x.elsewhere.map((e) => ({ ref: e.ref, asked: e.asked, at: at(e.line, e.col), text: e.text })) } : {}),
      disagreements: x.conflicts.map((c) => ({ fact: c.path, used: { value: c.chosen.value, at: at(c.chosen.line, c.chosen.col) }, others: c.others.map((o) => ({ value: o.value, at: at(o.line, o.col) })) })),
      never_established: v.missing,
    },
  })}\n`;
}
