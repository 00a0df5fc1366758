import { promises as fs } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, expandCasePaths, loadCase, loadRules, type CaseVerdict, type Rules } from '../../src/index.js';
import { INFORMATIONAL } from '../../src/case/schema.js';
import { factsOf } from '../../src/engine/evaluate.js';
import { BASE_FACTS, DERIVATIONS } from '../../src/facts/facts.js';
import { toVerdictJson } from '../../src/report/json.js';
import { OBSERVER_ORDER, VERDICT_RANK } from '../../src/verdict/verdict.js';

const root = path.resolve(import.meta.dirname, '../..');
let rules: Rules;
let verdicts: CaseVerdict[];

beforeAll(async () => {
  rules = await loadRules(path.join(root, 'rules'));
  verdicts = [];
  for (const f of await expandCasePaths([path.join(root, 'cases')])) verdicts.push(await evaluateCase(await loadCase(f), rules));
}, 300_000);

describe('every case field has a reader', () => {
  it('is read by a rule, a claim judgement or a derivation, or is marked informational in the schema', () => {
    const read = new Set<string>();
    for (const r of rules.set.rules) for (const f of [...factsOf(r.spec.when), ...(r.spec.requires ?? [])]) read.add(f);
    for (const k of rules.set.constraints) for (const f of factsOf(k.spec.broken_when)) read.add(f);
    for (const r of rules.set.claims) for (const j of r.spec.judge) for (const f of factsOf(j.when)) read.add(f);
    for (const d of DERIVATIONS) for (const i of d.inputs) read.add(i);
    const unread = BASE_FACTS.map((b) => b.name).filter((n) => !read.has(n) && !(n in INFORMATIONAL));
    expect(unread).toEqual([]);
    // And nothing marked informational is in fact read (the mark would hide a dependency).
    expect(Object.keys(INFORMATIONAL).filter((n) => read.has(n))).toEqual([]);
  });

  it('every derived fact is read by a rule, a claim, a rendered sentence or another derivation', () => {
    const read = new Set<string>();
    for (const r of rules.set.rules) for (const f of factsOf(r.spec.when)) read.add(f);
    for (const r of rules.set.rules) for (const m of `${r.spec.explains} ${r.spec.next}`.matchAll(/\{([a-z_.]+)\}/g)) read.add(m[1]!);
    for (const r of rules.set.claims) for (const m of [...r.spec.judge.map((j) => j.because), r.spec.otherwise.because].join(' ').matchAll(/\{([a-z_.]+)\}/g)) read.add(m[1]!);
    for (const k of rules.set.constraints) for (const f of [...factsOf(k.spec.broken_when), ...[...`${k.spec.explains} ${k.spec.next}`.matchAll(/\{([a-z_.]+)\}/g)].map((m) => m[1]!)]) read.add(f);
    for (const r of rules.set.claims) for (const j of r.spec.judge) for (const f of factsOf(j.when)) read.add(f);
    for (const d of DERIVATIONS) for (const i of d.inputs) read.add(i);
    const accountingJson = ['accounting.eligible', 'accounting.returned', 'accounting.filtered', 'accounting.in_flight_at_stop', 'accounting.capacity_missed', 'accounting.not_covered', 'accounting.unexplained', 'accounting.balanced'];
    expect(DERIVATIONS.map((d) => d.name).filter((n) => !read.has(n) && !accountingJson.includes(n))).toEqual([]);
  });
});

describe('verdict precedence is one piece of data', () => {
  it('rules/verdicts.yaml, the README and the exported constants agree', async () => {
    const order = rules.set.verdicts.order.map((e) => e.id);
    // Observer explanations first, in the README's numbered list.
    const readme = await fs.readFile(path.join(root, 'rules', 'README.md'), 'utf8');
    const numbered = [...readme.matchAll(/^\d+\. `([a-z-]+)`/gm)].map((m) => m[1]);
    expect(numbered).toEqual(order);
    expect(order.slice(0, OBSERVER_ORDER.length)).toEqual([...OBSERVER_ORDER]);
    expect([...VERDICT_RANK].filter((v) => v !== rules.set.verdicts.fallback.id)).toEqual(order);
    // The constants come from src/verdict/order.generated.ts, which the build writes from the file:
    // an edit of rules/verdicts.yaml without a build fails here.
    const { GENERATED_ORDER } = await import('../../src/verdict/order.generated.js');
    expect(GENERATED_ORDER.order.map((e) => e.id)).toEqual(order);
    expect(GENERATED_ORDER.fallback.id).toBe(rules.set.verdicts.fallback.id);
    expect([...GENERATED_ORDER.holds_back]).toEqual([...rules.set.verdicts.holds_back]);
    // The README's evidence table names only verdicts the file knows, with the rule that gives them.
    const rows = [...readme.matchAll(/^\| [^|]+ \| `([a-z-]+\/[a-z-]+)` \| ([a-z-]+) \|$/gm)];
    expect(rows.length).toBeGreaterThan(4);
    for (const [, rule, verdict] of rows) {
      const r = rules.set.rules.find((x) => x.spec.id === rule);
      expect([rule, r?.spec.verdict]).toEqual([rule, verdict]);
    }
  });

  it('no verdict check waits silently: only warnings may carry requires:', () => {
    expect(rules.set.rules.filter((r) => r.spec.verdict !== 'warning' && r.spec.requires).map((r) => r.spec.id)).toEqual([]);
  });
});

describe('a finding never contradicts its own numbers', () => {
  it('each number a finding quotes equals the verdict JSON value of that fact, for every shipped case', () => {
    let checked = 0;
    for (const v of verdicts) {
      const json = toVerdictJson(v) as { findings: Array<{ rule: string; facts: Record<string, unknown>; explanation: string }>; accounting: Record<string, unknown> };
      for (const f of json.findings) {
        const template = [...rules.set.rules, ...rules.set.constraints].find((r) => r.spec.id === f.rule)!.spec.explains.replace(/\s+/g, ' ').trim();
        const names: string[] = [];
        // `[[ ... ]]` parts are shown only when their facts are known: optional in the pattern.
        const literal = (piece: string) => piece.split(/(\{[a-z_.]+\})/).map((part) => {
          const m = /^\{([a-z_.]+)\}$/.exec(part);
          if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
          names.push(m[1]!);
          return '(.+?)';
        }).join('');
        const pattern = template.split(/\[\[|\]\]/).map((piece, k) => (k % 2 === 1 ? `(?:${literal(piece)})?` : literal(piece))).join('');
        const match = new RegExp(`^${pattern}$`).exec(f.explanation);
        expect([v.id, f.rule, match !== null]).toEqual([v.id, f.rule, true]);
        names.forEach((name, i) => {
          // A contradiction sets facts aside for the verdict, not for the warnings that quote them.
          const known = name in f.facts ? f.facts[name] : v.contradictions.length ? undefined : name.startsWith('accounting.') && name.slice(11) in json.accounting ? json.accounting[name.slice(11)] : undefined;
          if (known === undefined || known === null || match![i + 1] === undefined) return;
          checked++;
          expect([v.id, f.rule, name, match![i + 1]]).toEqual([v.id, f.rule, name, Array.isArray(known) ? (known.length ? known.join(', ') : 'none') : String(known)]);
        });
      }
    }
    expect(checked).toBeGreaterThan(50);
  });
});
