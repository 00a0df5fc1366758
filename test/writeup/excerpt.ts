import path from 'node:path';
import { beforeAll } from 'vitest';
import { loadRules, type Rules } from '../../src/index.js';
import { extractWriteup, loadLexicon, type Extraction, type Lexicon } from '../../src/writeup/index.js';

// What the reader tests of real-thread excerpts share: the shipped lexicon and rules, loaded once
// per file, and an excerpt read as the body of a write-up.

export type Obj = Record<string, unknown>;
/** The value at a dotted path of a case object. */
export const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

export interface ExcerptReader {
  extract(text: string): Extraction;
  /** The case the excerpt states. */
  read(text: string): Obj;
  rules(): Rules;
}

/** Load the shipped lexicon and rules before the file's tests (call at module level). */
export function excerptReader(): ExcerptReader {
  let lex: Lexicon;
  let rules: Rules;
  beforeAll(async () => {
    lex = await loadLexicon();
    rules = await loadRules(path.resolve(import.meta.dirname, '../../rules'));
  });
  const extract = (text: string) => extractWriteup(`# excerpt\n\n${text}`, 'thread.md', lex);
  return { extract, read: (text) => extract(text).case as unknown as Obj, rules: () => rules };
}
