// The public corpus of real investigation threads (cases/writeups/real/): each thread NNN-slug.md
// has an expert's expectations beside it, NNN-slug.md.expert (YAML), decided from the article and
// the kernel history, never from this tool's output. This module reads them and scores the
// write-up audit against them; `npm run bench:writeups` prints the figures and
// test/writeup/corpus.test.ts holds the line that must not be crossed (no wrong definite verdict).
//
// The expectations are not a `.expect` sidecar on purpose: `audit --expect` checks a sidecar
// exactly (every fact, at its line), which is the contract of the hand-made write-ups. A real
// thread is scored by how much of it is read, so its expectations are a set of acceptable
// verdicts, the facts by field and value, and the claims by kind and judgement.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { CLAIM_KINDS, JUDGEMENTS, VERDICTS, type VerdictId } from '../src/case/schema.js';
import type { Rules } from '../src/index.js';
import { judgeWriteup, loadWriteup, type Extraction, type Lexicon } from '../src/writeup/index.js';
import { parseYaml, validateYaml } from '../src/yamlfile.js';

export const EXPERT_SUFFIX = '.expert';

const factValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.null()]);

/** An expert's expectations for one real thread. */
export const expertSchema = z
  .object({
    source: z.string().regex(/^https?:\/\//, 'a URL'),
    /** Whether an expert decides the thread (a definite verdict) from what it contains. */
    decided: z.boolean(),
    /** Every verdict an expert accepts; insufficient-evidence only where an expert cannot decide. */
    verdicts: z.array(z.enum(VERDICTS)).min(1),
    why: z.string().min(1),
    facts: z.array(z.object({ fact: z.string().regex(/^[a-z_]+(?:\.[a-z_]+)+$/), value: factValue }).strict()),
    claims: z.array(z.object({ kind: z.enum(CLAIM_KINDS), judgement: z.enum(JUDGEMENTS) }).strict()),
    /** Where experts could disagree, and why. */
    disagree: z.string().min(1),
  })
  .strict()
  .superRefine((e, ctx) => {
    const undecided = e.verdicts.includes('insufficient-evidence');
    if (e.decided === undecided) {
      ctx.addIssue({ code: 'custom', path: ['verdicts'], message: e.decided ? 'a decided thread without insufficient-evidence among its verdicts' : 'an undecided thread with only insufficient-evidence' });
    }
    if (!e.decided && e.verdicts.length !== 1) ctx.addIssue({ code: 'custom', path: ['verdicts'], message: 'only insufficient-evidence for an undecided thread' });
  });
export type Expert = z.infer<typeof expertSchema>;

export interface Thread {
  file: string;
  name: string;
  text: string;
  expert: Expert;
}

/** The thread files of the corpus (README.md is its table, not a thread), in name order. */
export async function threadFiles(dir: string): Promise<string[]> {
  return (await fs.readdir(dir)).filter((n) => /^\d{3}-[a-z0-9-]+\.md$/.test(n)).sort().map((n) => path.join(dir, n));
}

/** Read every thread and its expectations; a thread without them is an input error. */
export async function loadCorpus(dir: string): Promise<Thread[]> {
  const out: Thread[] = [];
  for (const file of await threadFiles(dir)) {
    const expertFile = `${file}${EXPERT_SUFFIX}`;
    const [text, expertText] = await Promise.all([fs.readFile(file, 'utf8'), fs.readFile(expertFile, 'utf8')]);
    out.push({ file, name: path.basename(file), text, expert: validateYaml(expertSchema, parseYaml(expertText, expertFile, 'thread expectations')) });
  }
  return out;
}

/** The source URL a thread file names on its `- Source:` line. */
export function sourceOf(text: string): string | undefined {
  return /^- Source: (https?:\/\/\S+)$/m.exec(text)?.[1];
}

const key = (fact: string, value: unknown) => `${fact}=${JSON.stringify(value)}`;

export interface ThreadScore {
  name: string;
  decided: boolean;
  acceptable: readonly VerdictId[];
  verdict: VerdictId;
  definite: boolean;
  /** A definite verdict an expert does not accept. */
  wrongDefinite: boolean;
  /** Distinct (field, value) pairs extracted, expected, and both. */
  factsFound: number;
  factsExpected: number;
  factsMatched: number;
  /** Extracted facts no expert takes from the thread, and expected facts not extracted. */
  extraFacts: string[];
  missedFacts: string[];
  claimsFound: number;
  claimsExpected: number;
  /** Expected claims found with their kind; and of those, with the expected judgement. */
  claimsMatched: number;
  claimsJudgedRight: number;
}

/** Score one extraction and its verdict against the expert's expectations. Pure. */
export function scoreThread(name: string, x: Extraction, verdict: VerdictId, judgements: ReadonlyArray<string | undefined>, e: Expert): ThreadScore {
  const found = new Set(x.facts.map((f) => key(f.path, f.value)));
  const expected = new Set(e.facts.map((f) => key(f.fact, f.value)));
  const matched = [...found].filter((k) => expected.has(k));
  const left = [...e.claims];
  let claimsMatched = 0;
  let claimsJudgedRight = 0;
  x.claims.forEach((c, i) => {
    const exact = left.findIndex((w) => w.kind === c.kind && w.judgement === judgements[i]);
    const at = exact >= 0 ? exact : left.findIndex((w) => w.kind === c.kind);
    if (at < 0) return;
    claimsMatched++;
    if (exact >= 0) claimsJudgedRight++;
    left.splice(at, 1);
  });
  const definite = verdict !== 'insufficient-evidence';
  return {
    name,
    decided: e.decided,
    acceptable: e.verdicts,
    verdict,
    definite,
    wrongDefinite: definite && !e.verdicts.includes(verdict),
    factsFound: found.size,
    factsExpected: expected.size,
    factsMatched: matched.length,
    extraFacts: [...found].filter((k) => !expected.has(k)),
    missedFacts: [...expected].filter((k) => !found.has(k)),
    claimsFound: x.claims.length,
    claimsExpected: e.claims.length,
    claimsMatched,
    claimsJudgedRight,
  };
}

/** Audit every thread as `audit` does (read, extract, judge) and score it. */
export async function auditCorpus(threads: readonly Thread[], rules: Rules, lex: Lexicon): Promise<ThreadScore[]> {
  const out: ThreadScore[] = [];
  for (const t of threads) {
    const { extraction } = await loadWriteup(t.file, lex);
    const v = await judgeWriteup(extraction, rules, lex);
    out.push(scoreThread(t.name, extraction, v.verdict, v.claims.map((c) => c.judgement), t.expert));
  }
  return out;
}

export interface CorpusFigures {
  threads: number;
  expertDecided: number;
  factsFound: number;
  factsExpected: number;
  factsMatched: number;
  /** matched / found, matched / expected (micro-averaged over the corpus); NaN when nothing was found. */
  precision: number;
  recall: number;
  threadsWithoutFacts: number;
  claimsFound: number;
  claimsExpected: number;
  claimsMatched: number;
  claimsJudgedRight: number;
  definite: number;
  definiteRight: number;
  acceptable: number;
  /** Threads an expert decides that the audit decided, and decided right. */
  decidedOfExpertDecided: number;
  rightOfExpertDecided: number;
  wrongDefinite: ThreadScore[];
}

/** The corpus totals of per-thread scores. Pure. */
export function corpusFigures(scores: readonly ThreadScore[]): CorpusFigures {
  const sum = (f: (s: ThreadScore) => number) => scores.reduce((n, s) => n + f(s), 0);
  const factsFound = sum((s) => s.factsFound);
  const factsExpected = sum((s) => s.factsExpected);
  const factsMatched = sum((s) => s.factsMatched);
  const decided = scores.filter((s) => s.decided);
  return {
    threads: scores.length,
    expertDecided: decided.length,
    factsFound,
    factsExpected,
    factsMatched,
    precision: factsMatched / factsFound,
    recall: factsMatched / factsExpected,
    threadsWithoutFacts: scores.filter((s) => s.factsFound === 0).length,
    claimsFound: sum((s) => s.claimsFound),
    claimsExpected: sum((s) => s.claimsExpected),
    claimsMatched: sum((s) => s.claimsMatched),
    claimsJudgedRight: sum((s) => s.claimsJudgedRight),
    definite: scores.filter((s) => s.definite).length,
    definiteRight: scores.filter((s) => s.definite && !s.wrongDefinite).length,
    acceptable: scores.filter((s) => s.acceptable.includes(s.verdict)).length,
    decidedOfExpertDecided: decided.filter((s) => s.definite).length,
    rightOfExpertDecided: decided.filter((s) => s.definite && !s.wrongDefinite).length,
    wrongDefinite: scores.filter((s) => s.wrongDefinite),
  };
}

const pct = (n: number, d: number) => (d === 0 ? 'n/a' : `${((100 * n) / d).toFixed(0)}%`);

/** The figures as the lines `bench:writeups` prints. Pure. */
export function formatCorpusFigures(f: CorpusFigures): string[] {
  return [
    `real threads: ${f.threads} (an expert decides ${f.expertDecided})`,
    `  facts: found ${f.factsFound}, expected ${f.factsExpected}, matched ${f.factsMatched} (field and value): precision ${pct(f.factsMatched, f.factsFound)}, recall ${pct(f.factsMatched, f.factsExpected)}; threads with no fact extracted: ${f.threadsWithoutFacts}`,
    `  claims: found ${f.claimsFound}, expected ${f.claimsExpected}; expected ones found ${f.claimsMatched}, with the expected judgement ${f.claimsJudgedRight}`,
    `  verdicts: definite ${f.definite}/${f.threads} (${pct(f.definite, f.threads)}), of them right ${f.definiteRight}; acceptable ${f.acceptable}/${f.threads}`,
    `  threads an expert decides: decided ${f.decidedOfExpertDecided}/${f.expertDecided} (${pct(f.decidedOfExpertDecided, f.expertDecided)}), right ${f.rightOfExpertDecided}`,
    `  wrong definite verdicts: ${f.wrongDefinite.length}${f.wrongDefinite.map((s) => `\n    ${s.name}: ${s.verdict} (an expert accepts ${s.acceptable.join(' | ')})`).join('')}`,
  ];
}
