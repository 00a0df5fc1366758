/**
 * The ids of what the ledger finds the records contradict (issue 25), shared by the ledger and the
 * case schema (`ledger.contradictions`): a module of its own so the schema does not load the ledger.
 */
export const CONTRADICTIONS = ['admitted-above-maxactive', 'nmissed-exceeds-unreturned', 'records-out-of-order', 'duplicate-operation-ids'] as const;
export type ContradictionId = (typeof CONTRADICTIONS)[number];
