import { factsOf } from '../engine/evaluate.js';
import { FACT_CATALOGUE } from '../facts/facts.js';
import type { AnyRule } from './parse.js';
import type { Condition, Leaf } from './schema.js';

const WORDS: Record<Leaf['operator'], string> = {
  equal: 'is',
  notEqual: 'is not',
  lessThan: 'is less than',
  lessThanInclusive: 'is at most',
  greaterThan: 'is greater than',
  greaterThanInclusive: 'is at least',
  in: 'is one of',
  notIn: 'is none of',
  contains: 'contains',
  doesNotContain: 'does not contain',
};

function value(v: Leaf['value']): string {
  if (Array.isArray(v)) return v.join(', ');
  if (v !== null && typeof v === 'object') return `the value of ${v.fact}`;
  return String(v);
}

/** A condition tree in words, one line per leaf, indented by nesting. Pure. */
export function conditionInWords(c: Condition, depth = 0): string[] {
  const pad = '  '.repeat(depth);
  if ('all' in c) return [`${pad}all of:`, ...c.all.flatMap((x) => conditionInWords(x, depth + 1))];
  if ('any' in c) return [`${pad}any of:`, ...c.any.flatMap((x) => conditionInWords(x, depth + 1))];
  if ('not' in c) return [`${pad}not:`, ...conditionInWords(c.not, depth + 1)];
  return [`${pad}- ${c.fact} ${WORDS[c.operator]} ${value(c.value)}`];
}

/** `rules explain <id>`: what the rule checks, where it comes from, the facts it reads. */
export function explainRule(rule: AnyRule): string {
  const s = rule.spec;
  const out = [`${s.id} — ${s.title}`, `source: ${s.source}`];
  const facts = new Set<string>();
  if (rule.kind === 'rule') {
    const r = rule.spec;
    out.push(`concludes: ${r.verdict === 'warning' ? 'a warning (does not change the verdict)' : r.verdict} (weight ${r.weight})`);
    if (r.requires?.length) out.push(`applies only when known: ${r.requires.join(', ')}`);
    out.push('fires when:', ...conditionInWords(r.when, 1));
    out.push('explains:', `  ${r.explains.replace(/\s+/g, ' ')}`, 'next step:', `  ${r.next.replace(/\s+/g, ' ')}`);
    factsOf(r.when, facts);
  } else if (rule.kind === 'constraint') {
    const c = rule.spec;
    out.push('a consistency constraint: a case for which this holds contradicts itself', 'broken when:', ...conditionInWords(c.broken_when, 1));
    out.push('explains:', `  ${c.explains.replace(/\s+/g, ' ')}`, 'next step:', `  ${c.next.replace(/\s+/g, ' ')}`);
    factsOf(c.broken_when, facts);
  } else {
    const c = rule.spec;
    out.push(`judges claims of kind: ${c.claim}`);
    c.judge.forEach((j) => {
      out.push(`${j.judgement} when:`, ...conditionInWords(j.when, 1), `  because: ${j.because.replace(/\s+/g, ' ')}`);
      factsOf(j.when, facts);
    });
    out.push(`otherwise ${c.otherwise.judgement}:`, `  ${c.otherwise.because.replace(/\s+/g, ' ')}`);
  }
  out.push('facts read:');
  for (const f of facts) {
    const e = FACT_CATALOGUE.get(f);
    out.push(`  ${f}${e ? ` — ${e.description}${e.derived ? ' (derived)' : ''}` : ''}`);
  }
  return `${out.join('\n')}\n`;
}
