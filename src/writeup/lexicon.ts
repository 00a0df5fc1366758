import path from 'node:path';
import { z } from 'zod';
import { readSmallFile } from '../case/load.js';
import { CLAIM_KINDS, type ClaimKind } from '../case/schema.js';
import { InputError } from '../errors.js';
import { recordInput } from '../fsutil.js';
import { defaultRulesDir } from '../rules/load.js';
import { nodeAt, parseYaml, positionOf, rangeStart, validateYaml, type YamlFile } from '../yamlfile.js';

/**
 * The declared lexicons of rules/lexicon/: sentence fact patterns, claim patterns and the
 * collection commands per interface. Parsed once, regular expressions compiled once.
 */

const regex = z.string().min(1).refine((s) => { try { new RegExp(s, 'i'); return true; } catch { return false; } }, { message: 'a valid regular expression' });
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const factsFile = z.object({
  // Named pieces of patterns, written once and used as {{name}} in `facts` patterns (withFragments).
  fragments: z.record(z.string().regex(/^[a-z_]+$/, 'a fragment name of lower-case letters and _'), regex).optional(),
  facts: z.array(z.object({ id: z.string().min(1), needs: z.array(z.string().min(1)).optional(), pattern: regex, set: z.record(z.string(), scalar), implies: z.record(z.string(), scalar).optional(), quoted: z.boolean().optional(), names: z.boolean().optional(), probe: z.string().min(1).optional(), after: regex.optional(), other_run_pool: z.string().min(1).optional() }).strict()),
  unknown: z.array(z.object({ id: z.string().min(1), needs: z.array(z.string().min(1)).optional(), pattern: regex, fact: z.string().min(1), reason: z.string().min(1) }).strict()).optional(),
  elsewhere: z.array(z.object({ id: z.string().min(1), needs: z.array(z.string().min(1)).optional(), pattern: regex }).strict()).optional(),
  interfaces: z.object({ needs: z.array(z.string().min(1)).optional(), lead: regex, names: z.array(z.object({ pattern: regex, value: z.string().min(1) }).strict()) }).strict(),
  bpftrace_maps: z.array(z.object({ pattern: regex, fact: z.string().min(1) }).strict()),
  correction: regex.optional(),
  working_kernel: z.object({ before: regex, after: regex }).strict().optional(),
  records_scope: z.object({ predicate: regex, workload: regex }).strict().optional(),
  disagreement: z.object({ id: z.string().min(1), title: z.string().min(1), source: z.string().min(1), explains: z.string().min(1), next: z.string().min(1) }).strict(),
}).strict();

const claimsFile = z.object({
  claims: z.array(z.object({ kind: z.enum(CLAIM_KINDS), needs: z.array(z.string().min(1)).optional(), patterns: z.array(regex).min(1) }).strict()),
  not_a_claim: z.object({ question: regex, hedge: regex, conditional: regex, attribution: regex, negation_before: regex, negation_after: regex }).strict(),
}).strict();


export interface FactPattern {
  id: string;
  /** Lower-case words of which the text must hold one for the pattern to be tried; empty: always. */
  needs: string[];
  re: RegExp;
  set: Record<string, string | number | boolean>;
  implies: Record<string, string | number | boolean>;
  /** `set` then `implies` as [field template, value template, implied]. */
  entries: Array<[string, string | number | boolean, boolean]>;
  /** The words are a tool's message, which authors quote: a match inside quotation marks counts. */
  quoted: boolean;
  /** The pattern names what is probed rather than stating a finding: a condition or hedge around it does not unsay it. */
  names: boolean;
  /** Which probe the message is about (`{group}` filled: `kprobe` is an entry probe), when it says. */
  probe?: string;
  /** The sentence just before it, in the same paragraph, must match this (the run the match compares with). */
  after?: RegExp;
  /**
   * The match names the pool of another run than the case's (`{group}` filled: the adequate run of
   * an A/B with a larger pool): a pool setting of that value is that run's, not the case's.
   */
  otherRunPool?: string;
}

export interface Lexicon {
  facts: FactPattern[];
  /** Sentences that say a fact could not be known, with the reason shown for it. */
  unknown: Array<{ id: string; needs: string[]; re: RegExp; fact: string; reason: string }>;
  /** Sentences that give a cause only by reference to another thread (a `ref` group names it). */
  elsewhere: Array<{ id: string; needs: string[]; re: RegExp }>;
  /** Lead + name, anchored where it is tried (sticky). */
  interfaces: Array<{ re: RegExp; value: string }>;
  interfaceNeeds: string[];
  /** The interface names alone (global): which tool a sentence names before a setting it states. */
  tools: Array<{ re: RegExp; value: string }>;
  /** The `lead` every interface pattern starts with, alone (global): an interface is named only where it matches. */
  interfaceLead: RegExp;
  bpftraceMaps: Array<{ re: RegExp; fact: string }>;
  /** A sentence that corrects what was said before ("Correction: ...", "EDIT: ..."): its facts replace earlier ones. */
  correction?: RegExp;
  /** Words that say a kernel named just after (`before`) or just before (`after`) them works: another subject. */
  workingKernel?: { before: RegExp; after: RegExp };
  /** A one-liner whose one probe keeps one command (`predicate`), and the prose running that command as the test (`workload`). */
  recordsScope?: { predicate: RegExp; workload: RegExp };
  /** The finding for two disagreeing values of one field. */
  disagreement: { id: string; title: string; source: string; explains: string; next: string };
  claims: Array<{ kind: ClaimKind; needs: string[]; res: RegExp[] }>;
  notAClaim: { question: RegExp; hedge: RegExp; conditional: RegExp; attribution: RegExp; negationBefore: RegExp; negationAfter: RegExp };
}

export interface LexiconTexts {
  facts: { text: string; file: string };
  claims: { text: string; file: string };
}

const re = (s: string, flags = 'gid') => new RegExp(s, flags);

/** The two lexicon files as validated data, before any pattern is compiled: what the rules snapshot keeps. */
export interface LexiconData {
  f: z.infer<typeof factsFile>;
  c: z.infer<typeof claimsFile>;
}

/** Parse the two lexicon files. Pure: the texts come in. */
export function parseLexicon(t: LexiconTexts): Lexicon {
  return buildLexicon(lexiconData(t));
}

/** Parse and validate the two lexicon files (positioned errors), without compiling them. Pure. */
export function lexiconData(t: LexiconTexts): LexiconData {
  return {
    f: validateYaml(factsFile, withFragments(parseYaml(t.facts.text, t.facts.file, 'fact lexicon'))),
    c: validateYaml(claimsFile, parseYaml(t.claims.text, t.claims.file, 'claim lexicon')),
  };
}

/**
 * The fact lexicon with each `{{name}}` in a pattern of `facts` (its `pattern` and `after`)
 * replaced by the fragment of that name (`fragments:`), so a list written once, such as the
 * tracers that keep buffers of their own, is the same list in every pattern that reads it. A name
 * no fragment has is an InputError at that pattern. Pure: a new value, the file's text unchanged.
 */
function withFragments(yaml: YamlFile): YamlFile {
  const v = yaml.value as { fragments?: unknown; facts?: unknown } | null;
  if (v === null || typeof v !== 'object' || !Array.isArray(v.facts)) return yaml;
  const fragments = v.fragments !== null && typeof v.fragments === 'object' ? (v.fragments as Record<string, unknown>) : {};
  const facts = v.facts.map((p: unknown, i: number) => {
    if (p === null || typeof p !== 'object') return p;
    const out = { ...(p as Record<string, unknown>) };
    for (const key of ['pattern', 'after']) {
      const text = out[key];
      if (typeof text !== 'string' || !text.includes('{{')) continue;
      out[key] = text.replace(/\{\{([^{}]*)\}\}/g, (_, name: string) => {
        const f = fragments[name];
        if (typeof f !== 'string') {
          const { node } = nodeAt(yaml.doc, ['facts', i, key]);
          throw new InputError({ file: yaml.file, ...positionOf(yaml.lines, rangeStart(node)) }, `a fragment declared under fragments: (${Object.keys(fragments).join(', ') || 'none'})`, `{{${name}}}`);
        }
        return f;
      });
    }
    return out;
  });
  return { ...yaml, value: { ...v, facts } };
}

/** The lexicon of validated data: its patterns compiled. Pure. */
export function buildLexicon({ f, c }: LexiconData): Lexicon {
  const lead = f.interfaces.lead;
  return {
    facts: f.facts.map((p) => ({
      id: p.id,
      needs: p.needs ?? [],
      re: re(p.pattern),
      set: p.set,
      implies: p.implies ?? {},
      quoted: p.quoted ?? false,
      names: p.names ?? false,
      ...(p.probe !== undefined ? { probe: p.probe } : {}),
      ...(p.after !== undefined ? { after: re(p.after, 'i') } : {}),
      ...(p.other_run_pool !== undefined ? { otherRunPool: p.other_run_pool } : {}),
      entries: [
        ...Object.entries(p.set).map(([k, v]) => [k, v, false] as [string, string | number | boolean, boolean]),
        ...Object.entries(p.implies ?? {}).map(([k, v]) => [k, v, true] as [string, string | number | boolean, boolean]),
      ],
    })),
    unknown: (f.unknown ?? []).map((u) => ({ id: u.id, needs: u.needs ?? [], re: re(u.pattern, 'gi'), fact: u.fact, reason: u.reason })),
    elsewhere: (f.elsewhere ?? []).map((e) => ({ id: e.id, needs: e.needs ?? [], re: re(e.pattern, 'gi') })),
    interfaces: f.interfaces.names.map((n) => ({ re: re(`${lead}(?<v>${n.pattern})`, 'yid'), value: n.value })),
    interfaceNeeds: f.interfaces.needs ?? [],
    tools: f.interfaces.names.map((n) => ({ re: re(`\\b${n.pattern}`, 'gi'), value: n.value })),
    interfaceLead: re(lead, 'gi'),
    bpftraceMaps: f.bpftrace_maps.map((m) => ({ re: re(m.pattern, 'i'), fact: m.fact })),
    disagreement: f.disagreement,
    ...(f.correction !== undefined ? { correction: re(f.correction, 'i') } : {}),
    ...(f.working_kernel !== undefined ? { workingKernel: { before: re(f.working_kernel.before, 'i'), after: re(f.working_kernel.after, 'i') } } : {}),
    ...(f.records_scope !== undefined ? { recordsScope: { predicate: re(f.records_scope.predicate, 'g'), workload: re(f.records_scope.workload, 'gi') } } : {}),
    // Claims need no match indices ('d' costs time on every match).
    claims: c.claims.map((x) => ({ kind: x.kind, needs: x.needs ?? [], res: x.patterns.map((p) => re(p, 'gi')) })),
    notAClaim: {
      question: re(c.not_a_claim.question, 'i'),
      hedge: re(c.not_a_claim.hedge, 'i'),
      conditional: re(c.not_a_claim.conditional, 'i'),
      attribution: re(c.not_a_claim.attribution, 'i'),
      negationBefore: re(c.not_a_claim.negation_before, 'i'),
      negationAfter: re(c.not_a_claim.negation_after, 'i'),
    },
  };
}

/**
 * Read rules/lexicon/ (of `rulesDir`, default the shipped rules): from the rules snapshot the
 * build writes when it was made from the same files by the same parser (src/audit/rules-snapshot.ts),
 * else parsed. Parsing the 36 KB of patterns through the positioned YAML parser and zod took
 * ~130 ms, a cost every write-up audit paid at start-up.
 */
export async function loadLexicon(rulesDir: string = defaultRulesDir()): Promise<Lexicon> {
  const snap = await (await import('../audit/rules-snapshot.js')).lexiconSnapshot(rulesDir);
  if (!snap) return buildLexicon(await readLexiconData(rulesDir));
  // Not read, yet inputs of this run all the same: no output may replace them.
  for (const name of ['facts.yaml', 'claims.yaml']) recordInput(path.join(rulesDir, 'lexicon', name));
  return buildLexicon(snap as LexiconData);
}

/** rules/lexicon/ of `rulesDir`, parsed and validated (every problem an InputError). */
export async function readLexiconData(rulesDir: string): Promise<LexiconData> {
  const dir = path.join(rulesDir, 'lexicon');
  const read = async (name: string) => {
    const file = path.join(dir, name);
    return { text: await readSmallFile(file, 'lexicon file'), file };
  };
  try {
    return lexiconData({ facts: await read('facts.yaml'), claims: await read('claims.yaml') });
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError({ file: dir }, 'rules/lexicon/ with facts.yaml and claims.yaml', String(err), { cause: err });
  }
}
