import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type Case, type CaseVerdict, type Rules } from '../../src/index.js';
import { setPath } from '../../src/dotted.js';
import { domainOf } from '../../src/engine/domains.js';
import { readFileSync } from 'node:fs';
import { derive, knownFields, oracle, relevantFields, surelyBroken, worldVerdicts } from './oracle.js';

const KNOWN = new Set<string>(JSON.parse(readFileSync(new URL('./known-disagreements.json', import.meta.url), 'utf8')) as string[]);
/** A disagreement as case id and kind ("r8-adequate: unsound"), the unit the known list holds. */
const kindOf = (p: string) => p.replace(/^([^:]+: [a-z ]+?)(:| on ).*$/, '$1');
function unexpected(problems: string[], label: string): string[] {
  const kinds = new Set(problems.map(kindOf));
  console.log(`oracle (${label}): ${kinds.size} disagreement kind(s), ${[...kinds].filter((k) => KNOWN.has(k)).length} of them known${kinds.size ? `: ${[...kinds].join('; ')}` : ''}`);
  // ORACLE_VERBOSE=1 prints every disagreement, the known ones included.
  if (process.env.ORACLE_VERBOSE) for (const p of new Set(problems)) console.log(`  ${p}`);
  return [...new Set(problems)].filter((p) => !KNOWN.has(kindOf(p)));
}

// The engine against a brute-force oracle that shares none of its machinery (./oracle.ts):
//  - soundness: engine definite => oracle definite, the same verdict;
//  - decisiveness: oracle definite => engine definite;
//  - possible and decides equal (decides as a set, its order never against the oracle's ranking).
// Over every shipped case the oracle can enumerate, and over cases generated from them (a random
// completion with one to three fields forgotten again). ORACLE_CASES sets how many (10,000 unless set; ORACLE_CASES=100000 npx vitest run test/oracle for a longer run).
// Disagreements still open are listed, by case and kind, in known-disagreements.json. A
// disagreement not on the list fails the test; one on the list that no longer shows is reported,
// to be removed. None is open now. The classes found since the shipped cases' samples were filled
// field by field (so that most are consistent, and checked against `possible` whatever the verdict)
// are closed by constraints (counters-prove-registration, no-evidence-within-unentered,
// read-back-pool-matches-interface), by the empty domain of probe.maxactive.requested for bpftrace
// and perf kretprobes (src/engine/domains.ts), and by entry-events-accounted excusing only a loss on
// a channel the probe writes through (ledger.records_lost): a printk drop or a perf buffer overrun
// had let a tracefs return event's entry-probe hits go unaccounted (c4-profile-lines-named,
// c6-returned-after-stop). A generated case it surfaced (c02-entry-events-have-records-g: `decides`
// lacked the demand behind a floor) is closed by counters.split_contradiction, which is now unknown,
// not false, while what could contradict the split is.
const GENERATED = Number(process.env.ORACLE_CASES ?? 10_000);
const LIMIT = 4000;
const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
let shipped: Case[];

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  shipped = [];
  for (const f of await expandCasePaths([path.join(root, 'cases')])) shipped.push((await loadCase(f)).data);
});

let seed = 20261201;
// The high bits of the LCG: its low bits have short periods (the lowest alternates), so `seed % n`
// drew the shipped cases and field values unevenly, and how many generated cases could be
// compared swung with the number of shipped cases (1,219 of 10,000 with 173, 926 with 176).
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor((seed / 2147483648) * n);
};

interface Tally { cases: number; completions: number; definite: number; decided: number; skipped: number; undecided?: number; decidesInexact?: number }

/** Disagreements between the engine's verdict and the oracle's for one case (empty when they agree). */
function compare(c: Case, v: CaseVerdict, t: Tally, o = oracle(rules.set, c, LIMIT)): string[] {
  if (!o) {
    t.skipped++;
    return [];
  }
  if (o.worlds === 0) return []; // no consistent completion: nothing to compare
  t.cases++;
  t.completions += o.worlds;
  const problems: string[] = [];
  const possible = [...o.possible].sort();
  const oracleDefinite = o.possible.size === 1;
  const engineDefinite = v.possible.length === 1;
  if (oracleDefinite) t.definite++;
  else t.undecided = (t.undecided ?? 0) + 1;
  if (engineDefinite && v.verdict !== 'insufficient-evidence') t.decided++;
  if (engineDefinite && !(oracleDefinite && possible[0] === v.verdict)) problems.push(`unsound: engine ${v.verdict}, oracle [${possible.join(', ')}]`);
  if (oracleDefinite && !engineDefinite) problems.push(`not decisive: oracle ${possible[0]}, engine [${v.possible.join(', ')}]`);
  if (JSON.stringify([...v.possible].sort()) !== JSON.stringify(possible)) problems.push(`possible: engine [${v.possible.join(', ')}], oracle [${possible.join(', ')}]`);
  const want = [...o.splits.keys()].sort();
  if (v.decidesExact) {
    if (JSON.stringify([...v.decides].sort()) !== JSON.stringify(want)) problems.push(`decides: engine [${v.decides.join(', ')}], oracle [${want.join(', ')}]`);
  } else {
    // The engine says its ranking kept fields it could not judge within its budget: the list may
    // hold some that split nothing, but never lacks one that does.
    t.decidesInexact = (t.decidesInexact ?? 0) + 1;
    const lacking = want.filter((f) => !v.decides.includes(f));
    if (lacking.length) problems.push(`decides lacks: engine [${v.decides.join(', ')}], oracle [${want.join(', ')}]`);
  }
  for (let i = 1; i < v.decides.length; i++) {
    const a = o.splits.get(v.decides[i - 1]!);
    const b = o.splits.get(v.decides[i]!);
    if (a && b && a.narrows < b.narrows) problems.push(`decides order: ${v.decides[i - 1]} before ${v.decides[i]}`);
  }
  return problems.map((p) => `${c.id}: ${p}`);
}

/**
 * A random completion of the case's relevant unknown fields, with `forget` of them left unknown,
 * drawn from all of them, or from `among` (the fields that decide an undecided shipped case: most
 * relevant fields cannot change a given case's verdict, so forgetting any one or two of them left
 * nearly every generated case definite, and `possible` and `decides` were compared on none
 * undecided). With `among`, the values are drawn one field at a time, each from those that leave
 * no constraint surely broken (the oracle's own three-valued reading of the partial world), so the
 * completion is most often consistent: drawn all at once, nearly every one broke a constraint.
 */
function generated(c: Case, forget: number, among?: readonly string[]): Case {
  const known = knownFields(c);
  const all = derive(known);
  const open = [...relevantFields(rules.set)].filter((f) => !known.has(f));
  const out = structuredClone(c) as unknown as Record<string, unknown>;
  delete out.expected;
  delete out.claims;
  const keep = new Set<string>();
  const stepwise = among !== undefined;
  // A case that no single field splits lends its fields with a domain instead.
  const pool = among?.length ? among.filter((f) => open.includes(f)) : stepwise ? open.filter((f) => domainOf(f, all).length > 1) : open;
  while (keep.size < Math.min(forget, pool.length)) keep.add(pool[rand(pool.length)]!);
  const assign = new Map(known);
  const order = stepwise ? shuffled(open) : open;
  for (const f of order) {
    if (keep.has(f)) continue;
    const d = domainOf(f, all);
    if (!d.length) continue;
    let x = d[rand(d.length)];
    if (stepwise) {
      for (const y of shuffled(d)) {
        assign.set(f, y);
        if (!surelyBroken(rules.set, derive(assign))) {
          x = y;
          break;
        }
      }
      assign.set(f, x!);
    }
    setPath(out, f, x);
  }
  out.id = `${c.id}-g`;
  return out as unknown as Case;
}

function shuffled<T>(xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rand(i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('the engine agrees with the oracle', () => {
  it('on every shipped case the oracle can enumerate; the others are sampled for soundness', async () => {
    const t: Tally = { cases: 0, completions: 0, definite: 0, decided: 0, skipped: 0 };
    const problems: string[] = [];
    let sampled = 0;
    let consistent = 0;
    for (const c of shipped) {
      const v = await evaluateCase(c, rules);
      if (v.contradictions.length) continue;
      const before = t.skipped;
      problems.push(...compare(c, v, t));
      if (t.skipped > before) {
        // Too many completions to enumerate: random ones must each get a verdict of the engine's
        // `possible` (its one verdict when definite). Completions are filled field by field so
        // that most are consistent; an inconsistent one (no world) proves nothing.
        for (let i = 0; i < 30; i++) {
          const g = generated(c, 0, []);
          const w = worldVerdicts(rules.set, derive(knownFields(g)));
          sampled++;
          if (!w) continue;
          consistent++;
          const outside = [...w].filter((x) => !v.possible.includes(x));
          // ORACLE_SAMPLES=FILE: each such completion as one JSON line, to read it back as a case.
          if (process.env.ORACLE_SAMPLES && outside.length) appendFileSync(process.env.ORACLE_SAMPLES, `${JSON.stringify(g)}\n`);
          if (outside.length) problems.push(`${c.id}: unsound on a sampled completion: engine ${v.verdict} (possible ${v.possible.join(', ')}), world [${[...w].join(', ')}]`);
        }
      }
    }
    console.log(`oracle (shipped): cases ${t.cases}, completions ${t.completions}, definite ${t.definite}, decided ${t.decided}; too many to enumerate ${t.skipped} (${sampled} sampled completions, ${consistent} consistent, each checked against the engine's possible verdicts)`);
    expect(unexpected(problems, 'shipped').slice(0, 200)).toEqual([]);
  }, 1_800_000); // about 100 s idle, 3x that on a 2-core machine under load

  it(`on ${GENERATED} generated cases`, async () => {
    const t: Tally = { cases: 0, completions: 0, definite: 0, decided: 0, skipped: 0 };
    const undecided: Array<{ c: Case; decides: string[] }> = [];
    for (const c of shipped) {
      const v = await evaluateCase(c, rules);
      if (v.possible.length > 1 && !v.contradictions.length) undecided.push({ c, decides: v.decides });
    }
    const problems: string[] = [];
    for (let i = 0; i < GENERATED; i++) {
      // One case in four: an undecided shipped case with one to three of the fields that decide it
      // left unknown (which fields to forget is all the engine's answer is used for here; the
      // expectation is the oracle's).
      // The others: a completion of a shipped case filled field by field as well (drawn all at
      // once, five in six broke a constraint and were compared on nothing: 1,476 of 10,000
      // compared, against about half filled this way, for a third more time).
      const open = i % 4 === 1 ? undecided[rand(undecided.length)] : undefined;
      const c = open ? generated(open.c, 1 + rand(3), open.decides) : generated(shipped[rand(shipped.length)]!, 1 + rand(2), []);
      // The oracle first: a case with no consistent completion or too many to enumerate has nothing to compare, so the engine is not asked.
      const o = oracle(rules.set, c, LIMIT);
      if (!o) t.skipped++;
      if (!o || o.worlds === 0) continue;
      const v = await evaluateCase(c, rules);
      if (v.contradictions.length) continue;
      const got = compare(c, v, t, o);
      if (got.length && process.env.ORACLE_VERBOSE) console.log(`CASE ${JSON.stringify(c)}`);
      problems.push(...got);
    }
    console.log(`oracle (generated): cases ${t.cases}, completions ${t.completions}, definite ${t.definite}, decided ${t.decided}, undecided by the oracle ${t.undecided ?? 0} (decides marked inexact by the engine ${t.decidesInexact ?? 0}); too many to enumerate ${t.skipped}`);
    expect(unexpected(problems, 'generated').slice(0, 200)).toEqual([]);
    expect(t.cases).toBeGreaterThanOrEqual(GENERATED / 4); // filled field by field, most are consistent
  }, 1_800_000); // about 110 s idle, 340 s on a 2-core machine under load
});
