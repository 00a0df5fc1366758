import type { VerdictId } from '../case/schema.js';
import type { VerdictPolicy } from '../rules/verdicts.js';

/** What the chooser needs of a finding and of an undecided check. */
export interface Fired {
  verdict: VerdictId | null;
}
export interface Open {
  verdict: VerdictId | null;
  weight: number;
  needs: string[];
}

export interface Choice {
  verdict: VerdictId;
  /** Verdicts still possible, in precedence order (most severe first); one when definite. */
  possible: VerdictId[];
  /** The unknown case fields that decide between them, most decisive first. */
  decides: string[];
}

/** Each verdict's place in a policy's order, worked out once per policy. */
const RANKS = new WeakMap<VerdictPolicy, Map<VerdictId, number>>();
function rankOf(policy: VerdictPolicy): Map<VerdictId, number> {
  let ranks = RANKS.get(policy);
  if (!ranks) {
    ranks = new Map();
    // The first entry of an id, as findIndex gives.
    policy.order.forEach((e, i) => { if (!ranks!.has(e.id)) ranks!.set(e.id, i); });
    RANKS.set(policy, ranks);
  }
  return ranks;
}

/**
 * Verdict precedence as data (rules/verdicts.yaml). Walk the order: the first verdict established
 * wins only when no verdict above it is still possible; otherwise every verdict still possible up
 * to it is listed and the case is the fallback, insufficient-evidence. A definite verdict is thus
 * one that no completion of the unknown facts could displace from above.
 */
export function choose(policy: VerdictPolicy, findings: readonly Fired[], undecided: readonly Open[]): Choice {
  const { possible, established } = possibleOf(policy, (v) => findings.some((f) => f.verdict === v), (v) => undecided.some((u) => u.verdict === v));
  if (established !== undefined && possible.length === 1) {
    return { verdict: established, possible, decides: [] };
  }
  const ranks = rankOf(policy);
  const rank = (v: VerdictId) => ranks.get(v) ?? -1;
  // Most decisive first: the facts of the checks whose verdict ranks highest, heaviest first.
  const open = undecided
    .filter((u) => u.verdict !== null && possible.includes(u.verdict))
    .sort((a, b) => rank(a.verdict!) - rank(b.verdict!) || b.weight - a.weight);
  const decides = new Set<string>();
  for (const u of open) for (const n of u.needs) decides.add(n);
  return { verdict: policy.fallback.id, possible, decides: [...decides] };
}

/**
 * choose's `possible`, and the verdict established if any, from which verdicts have a check that
 * fired and which one still undecided: all the verdict's search over completions asks of it (it
 * never reads `decides`).
 */
export function possibleOf(policy: VerdictPolicy, fired: (v: VerdictId) => boolean, anyOpen: (v: VerdictId) => boolean): { possible: VerdictId[]; established: VerdictId | undefined } {
  const blocked = fired(policy.fallback.id);
  const possible: VerdictId[] = [];
  let established: VerdictId | undefined;
  for (const { id } of policy.order) {
    const heldBack = blocked && policy.holds_back.includes(id);
    if (fired(id) && !heldBack) {
      possible.push(id);
      established = id;
      break;
    }
    if (anyOpen(id) || (heldBack && fired(id))) possible.push(id);
  }
  if (blocked && established === undefined) for (const v of policy.holds_back) if (!possible.includes(v) && policy.order.some((e) => e.id === v)) possible.push(v);
  const ranks = rankOf(policy);
  const rank = (v: VerdictId) => ranks.get(v) ?? -1;
  possible.sort((a, b) => rank(a) - rank(b));
  return { possible, established };
}
