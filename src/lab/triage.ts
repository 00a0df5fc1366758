import type { LabObservation } from './observe.js';

/** The verdict of one lab bundle, and where its case file went. */
export interface LabTriage {
  verdict: string | undefined;
  caseFile: string | undefined;
  /** Why there is no verdict, when there is none. */
  note: string | undefined;
}

/**
 * Bundle -> case -> verdict. The one place the lab meets `case from-bundle` (issue 4) and the
 * engine: until `caseFromBundle` and `evaluateCase` are in the repository this reports that
 * no verdict could be made, and the lab's table and tests say so instead of inventing one.
 */
export async function triageBundle(obs: LabObservation): Promise<LabTriage> {
  void obs;
  return { verdict: undefined, caseFile: undefined, note: 'case from-bundle / evaluateCase not available yet' };
}
