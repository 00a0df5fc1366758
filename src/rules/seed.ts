/**
 * The section headings of the source article (../shared/seed/000_1a222e3ffd7780f8.txt), each
 * with the folder of rules/ that encodes it. A rule's `source` is one of these headings, or a
 * kernel fact (`kernel-facts.md §N …` / `kernel-notes.md …`).
 */
export const SEED_SECTIONS = {
  scope: 'Establish the probe’s actual scope',
  capacity: 'Separate in-flight calls from CPUs',
  counters: 'Read missed and filtered cases separately',
  ledger: 'Build an independent operation ledger',
  fixture: 'Propose a controlled overlap fixture',
  interpret: 'Interpret the missing-return evidence',
  reporting: 'Report coverage alongside latency',
} as const;

export type SeedFolder = keyof typeof SEED_SECTIONS;

const HEADINGS = new Set<string>(Object.values(SEED_SECTIONS));

/** True when `source` names a seed heading (straight or curly apostrophe) or a kernel fact. */
export function isKnownSource(source: string): boolean {
  return HEADINGS.has(source.replace(/'/g, '’')) || /^kernel-(facts|notes|history)\.md\b/.test(source);
}

export function normaliseSource(source: string): string {
  return HEADINGS.has(source.replace(/'/g, '’')) ? source.replace(/'/g, '’') : source;
}
