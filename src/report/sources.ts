import { SEED_SECTIONS } from '../rules/seed.js';

/** A heading as a Markdown anchor, the way GitHub and most renderers make one. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[’']/g, '')
    .replace(/[^a-z0-9 _-]/g, '')
    .trim()
    .replace(/ /g, '-');
}

const HEADINGS = new Set<string>(Object.values(SEED_SECTIONS));

/**
 * Where a rule's `source` is explained in the shipped docs/: an article section →
 * docs/article.md#its-heading; `kernel-facts.md §N …` → docs/kernel-facts.md#fact-N;
 * `kernel-notes.md (topic)` → docs/kernel-notes.md#topic; `kernel-history.md §N …` →
 * docs/kernel-history.md#history-N (the first section named). Undefined for anything else
 * (test/docs.test.ts requires every shipped rule to resolve to an anchor that exists).
 */
export function sourceLink(source: string): string | undefined {
  // Sources come from the rules, a fixed set: each is worked out once (bounded for any other).
  if (LINKS.has(source)) return LINKS.get(source);
  const link = linkOf(source);
  if (LINKS.size < 4096) LINKS.set(source, link);
  return link;
}

const LINKS = new Map<string, string | undefined>();

function linkOf(source: string): string | undefined {
  const s = source.replace(/\s+#.*$/, '').trim().replace(/'/g, '’');
  if (HEADINGS.has(s)) return `docs/article.md#${slug(s)}`;
  const fact = /^kernel-facts\.md\s+§(\d+)\b/.exec(s);
  if (fact) return `docs/kernel-facts.md#fact-${fact[1]}`;
  const history = /^kernel-history\.md\s+§(\d+)\b/.exec(s);
  if (history) return `docs/kernel-history.md#history-${history[1]}`;
  const note = /^kernel-notes\.md\s+\((.+)\)\s*$/.exec(s);
  if (note) return `docs/kernel-notes.md#${slug(note[1]!)}`;
  return undefined;
}
