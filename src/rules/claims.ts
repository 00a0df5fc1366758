import type { ClaimKind, ClaimSubject } from '../case/schema.js';
import type { ParsedClaimRule } from './parse.js';

/**
 * The rule that judges `claim`: the one for its kind and subject (a claim about another run is
 * judged by the rule for that subject, never by the case's own evidence). Undefined when no rule
 * judges it. The one owner of that choice (the verdict and the triage selector read it); loadRules
 * allows one rule per kind and subject. Types only here: a one-case audit loads no rule parser.
 */
export function claimRuleFor(set: { claims: readonly ParsedClaimRule[] }, claim: { kind: ClaimKind; subject?: ClaimSubject }): ParsedClaimRule | undefined {
  return set.claims.find((r) => r.spec.claim === claim.kind && r.spec.subject === claim.subject);
}
