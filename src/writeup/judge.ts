import { z } from 'zod';
import { CLAIM_KINDS, JUDGEMENTS, VERDICTS, type Case } from '../case/schema.js';
import { evaluateCase, type Rules } from '../evaluate.js';
import type { CaseVerdict, Finding } from '../verdict/verdict.js';
import { render } from '../verdict/verdict.js';
import type { Extraction } from './extract.js';
import type { FactValue, WriteupFact } from './facts.js';
import type { Lexicon } from './lexicon.js';

/** The expectations file next to a shipped write-up (`NAME.expect`, YAML). */
export const sidecarSchema = z
  .object({
    verdict: z.enum(VERDICTS),
    rules: z.array(z.string()).optional(),
    facts: z.array(z.object({ fact: z.string(), value: z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.null()]), line: z.number().int().min(1) }).strict()),
    claims: z.array(z.object({ kind: z.enum(CLAIM_KINDS), line: z.number().int().min(1), judgement: z.enum(JUDGEMENTS) }).strict()),
    conflicts: z.array(z.string()).optional(),
  })
  .strict();
export type Sidecar = z.infer<typeof sidecarSchema>;

const same = (a: FactValue, b: FactValue) => JSON.stringify(a) === JSON.stringify(b);

/** Per-fact comparison: every extracted fact must be expected (no invented facts), every expected one extracted. */
export function compareFacts(found: WriteupFact[], expected: Sidecar['facts']): string[] {
  const problems: string[] = [];
  const left = [...expected];
  for (const f of found) {
    const i = left.findIndex((e) => e.fact === f.path && e.line === f.line && same(e.value, f.value));
    if (i >= 0) left.splice(i, 1);
    else problems.push(`extracted a fact the sidecar does not list: ${f.path}=${JSON.stringify(f.value)} at line ${f.line} (${f.via})`);
  }
  for (const e of left) problems.push(`missed ${e.fact}=${JSON.stringify(e.value)} at line ${e.line}`);
  return problems;
}

/** Claims by kind and line; judgements come from the verdict's claims (same order as the case's). */
export function compareClaims(x: Extraction, v: CaseVerdict, expected: Sidecar['claims']): string[] {
  const got = x.claims.map((c, i) => `${c.kind}@${c.line}:${v.claims[i]?.judgement ?? '?'}`);
  const want = expected.map((c) => `${c.kind}@${c.line}:${c.judgement}`);
  return got.join(', ') === want.join(', ') ? [] : [`expected claims [${want.join(', ')}], got [${got.join(', ')}]`];
}

/** The finding of one disagreement between stated values. */
function disagreementFinding(x: Extraction, lex: Lexicon, c: Extraction['conflicts'][number]): Finding {
  const at = (f: WriteupFact) => `${JSON.stringify(f.value)} (line ${f.line}, ${f.origin})`;
  const values = new Map<string, FactValue>([['field', c.path], ['chosen', at(c.chosen)], ['others', c.others.map(at).join(', ')]] as Array<[string, string]>);
  const fill = (t: string) => render(t, { values: values as Map<string, string>, needs: new Map(), inputs: new Map() });
  const facts: Record<string, string | number | boolean | string[]> = {};
  for (const f of [c.chosen, ...c.others]) {
    const key = `${c.path}@${f.line}:${f.col}`;
    if (f.value !== null) facts[key] = f.value;
  }
  return {
    rule: lex.disagreement.id,
    title: lex.disagreement.title,
    verdict: null,
    severity: 'warning',
    weight: 50,
    source: lex.disagreement.source,
    facts,
    explanation: fill(lex.disagreement.explains),
    next: fill(lex.disagreement.next),
    provenance: Object.fromEntries([c.chosen, ...c.others].map((f) => [`${c.path}@${f.line}:${f.col}`, `${x.file}:${f.line}:${f.col}`])),
  };
}

/** Judge a write-up: the engine's verdict of its case, its disagreements as findings, and the sidecar's expectations. */
export async function judgeWriteup(x: Extraction, rules: Rules, lex: Lexicon, sidecar?: Sidecar): Promise<CaseVerdict> {
  const c: Case = sidecar
    ? { ...x.case, expected: { verdict: sidecar.verdict, ...(sidecar.rules ? { rules: sidecar.rules } : {}), claims: sidecar.claims.map((s) => s.judgement) } }
    : x.case;
  const v = await evaluateCase(c, rules);
  v.file = x.file;
  for (const conflict of x.conflicts) v.findings.push(disagreementFinding(x, lex, conflict));
  if (sidecar && v.expected) {
    const problems = [
      ...compareFacts(x.facts, sidecar.facts),
      ...compareClaims(x, v, sidecar.claims),
    ];
    const wantConflicts = [...(sidecar.conflicts ?? [])].sort().join(', ');
    const gotConflicts = x.conflicts.map((k) => k.path).sort().join(', ');
    if (wantConflicts !== gotConflicts) problems.push(`expected disagreements [${wantConflicts}], got [${gotConflicts}]`);
    v.expected.problems.push(...problems);
    v.expected.ok = v.expected.problems.length === 0;
  }
  return v;
}
