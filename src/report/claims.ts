import type { ClaimSubject } from '../case/schema.js';

/** What each claim subject is called beside the claim's kind, in every report. */
const SUBJECT_NAMES: Record<ClaimSubject, string> = { 'other-run': 'about another run' };

/** "about another run" for a claim about another run. */
export function subjectName(subject: ClaimSubject): string {
  return SUBJECT_NAMES[subject];
}

/** " (about another run)" for a claim with that subject, "" for one about the case's own run. */
export function subjectNote(subject: ClaimSubject | undefined): string {
  return subject === undefined ? '' : ` (${subjectName(subject)})`;
}
