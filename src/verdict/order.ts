import type { VerdictId } from '../case/ids.js';
import { GENERATED_ORDER } from './order.generated.js';

/** What of rules/verdicts.yaml the order needs (src/rules/verdicts.ts parses and checks the whole file). */
export interface Order {
  order: ReadonlyArray<{ id: VerdictId }>;
  fallback: { id: VerdictId };
  holds_back: readonly VerdictId[];
}

/**
 * Verdicts from most to least severe, derived from the policy (the one owner of the order):
 * the observer explanations in order, then the fallback, then the verdicts about the function
 * that a fired insufficient-evidence check holds back. --fail-on, JUnit and the summaries read this.
 */
export function verdictRank(policy: Order): VerdictId[] {
  const ids = policy.order.map((e) => e.id);
  return [...ids.filter((v) => !policy.holds_back.includes(v)), policy.fallback.id, ...ids.filter((v) => policy.holds_back.includes(v))];
}

/** The observer explanations, in the order they are tried (the order less the held-back verdicts). */
export function observerOrder(policy: Pick<Order, 'order' | 'holds_back'>): VerdictId[] {
  return policy.order.map((e) => e.id).filter((v) => !policy.holds_back.includes(v));
}

const RANKS = new WeakMap<object, Map<VerdictId, number>>();
/** A verdict's place in verdictRank(policy), worked out once per policy. */
export function rankIn(policy: Order, v: VerdictId): number {
  let m = RANKS.get(policy);
  if (!m) RANKS.set(policy, (m = new Map(verdictRank(policy).map((x, i) => [x, i]))));
  return m.get(v) ?? m.size;
}

/**
 * The shipped order, for callers that rank verdicts without rules at hand (--fail-on, JUnit, the
 * audit summary): generated from rules/verdicts.yaml by the build (scripts/gen-sources.ts), never
 * copied by hand, so start-up parses no YAML for it. The meta-test checks it against the file.
 */
export const SHIPPED_OBSERVER_ORDER: readonly VerdictId[] = observerOrder(GENERATED_ORDER);
export const SHIPPED_VERDICT_RANK: readonly VerdictId[] = verdictRank(GENERATED_ORDER);
