import { InputError } from '../errors.js';
import type { CaseVerdict } from '../verdict/verdict.js';

/**
 * A waiver: the investigation accepts one rule's finding (or claim judgement) for a reason.
 * From a case's `accepted:` list, or from a write-up comment
 * `<!-- kretprobe-triage accept RULE: REASON -->` (the form vale and ESLint use).
 */
export interface Waiver {
  rule: string;
  reason: string;
  /** Where the waiver was written, when known (a write-up comment). */
  at?: { file: string; line: number; col: number };
}

const RULE_ID = /^[a-z0-9-]+\/[a-z0-9-]+$/;
const COMMENT = /<!--\s*kretprobe-triage\s+accept\b([\s\S]*?)-->/g;

/**
 * The waiver comments of a write-up. Pure: `file` only names positions. A comment that names
 * `kretprobe-triage accept` but not a rule id and a reason is an InputError at its position.
 */
export function parseWaiverComments(text: string, file: string): Waiver[] {
  const out: Waiver[] = [];
  for (const m of text.matchAll(COMMENT)) {
    const at = { file, ...lineCol(text, m.index) };
    const body = m[1]!.trim();
    const parsed = /^(\S+?)\s*:\s*(\S[\s\S]*)$/.exec(body);
    if (!parsed || !RULE_ID.test(parsed[1]!)) {
      throw new InputError(at, '<!-- kretprobe-triage accept RULE/ID: reason -->', `<!-- kretprobe-triage accept ${body.replace(/\s+/g, ' ').slice(0, 40)} -->`);
    }
    out.push({ rule: parsed[1]!, reason: parsed[2]!.replace(/\s+/g, ' ').trim(), at });
  }
  return out;
}

/**
 * The first waiver that names no known rule (a typo would otherwise waive nothing, silently),
 * as an InputError at the waiver (`at`, or `locate(index)` for a case's accepted: list).
 */
export function checkWaivers(waivers: readonly Waiver[], known: ReadonlySet<string>, file: string, locate: (index: number) => { line: number; col: number } | undefined): InputError | undefined {
  const i = waivers.findIndex((w) => !known.has(w.rule));
  if (i < 0) return undefined;
  const w = waivers[i]!;
  return new InputError(w.at ?? { file, ...locate(i) }, 'a waiver naming a rule of this rule set (kretprobe-triage rules list)', JSON.stringify(w.rule));
}

function lineCol(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, col: offset - start + 1 };
}

/**
 * The verdict with each finding and claim judgement a waiver names marked `accepted` (its
 * reason). Nothing is removed: accepted findings are still reported; only the exit code
 * leaves them out (see countsTowardExit).
 */
export function applyWaivers(v: CaseVerdict, waivers: readonly Waiver[] | undefined): CaseVerdict {
  if (!waivers?.length) return v;
  const reason = (rule: string) => waivers.find((w) => w.rule === rule)?.reason;
  return {
    ...v,
    findings: v.findings.map((f) => {
      const r = reason(f.rule);
      return r === undefined ? f : { ...f, accepted: r };
    }),
    claims: v.claims.map((c) => {
      const r = reason(c.rule);
      return r === undefined ? c : { ...c, accepted: r };
    }),
  };
}
