import { readFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expandCasePaths } from '../../src/case/load.js';
import { fastPathDeclines, nullKey, quotedToLineEnd } from '../../src/yamlfile.js';

// The reference: the fast path's declines as they were written first, one pattern each, tested
// in turn. fastPathDeclines (trigger characters before patterns, two hand-written scans) must
// decline exactly the texts this list matches.
const QUOTED_TO_LINE_END = /(?:^|[:\-,[{][ \t]+)'(?:[^'\n]|'')*$/m;
const NULL_KEY = /(?:^|[\s{,\-[])(?:~|[Nn]ull|NULL)?[ \t]*:(?:[ \t,\]}]|$)/m;
const REFERENCE: RegExp[] = [
  /(^|[\s[{,:-])[&*!][^\s]/m,
  /^%/m,
  /(?:^|[\s\-[{,])\?(?:\s|$)/m,
  /[{,][ \t]*[{[]/m,
  /[}\]][ \t]*:(?:[ \t]|$)/m,
  QUOTED_TO_LINE_END,
  NULL_KEY,
  /["'\]}[{,]#/m,
  /\r(?!\n)/m,
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029\ud800-\udfff]/m,
];
const reference = (text: string) => REFERENCE.some((re) => re.test(text));

const root = path.resolve(import.meta.dirname, '../..');

// Pieces that make the patterns match or nearly match: every character one of them names, the
// null words, line terminators (including those a multiline ^/$ also honours) and \s beyond ASCII.
const PIECES = [
  "'", "''", ':', ': ', ' ', '\t', '\n', '\r\n', '\r', '\u2028', '\u2029', '\u00a0', '\u3000', '\ufeff', '~', 'null', 'Null', 'NULL', 'nul',
  '-', '- ', ',', '[', ']', '{', '}', '#', '"', '?', '%', '&', '*', '!', 'a', 'key', 'x: ', '\x01', '\ud800', 'é',
];
const piece = fc.constantFrom(...PIECES);
const text = fc.array(piece, { maxLength: 40 }).map((xs) => xs.join(''));

describe('the fast path declines', () => {
  it.each([
    ['a value quoted past its line', "a: 'b\nc'\n", true],
    ['a quoted value closed on its line', "a: 'b'' c'\n", false],
    ['a quoted value whose line ends in a doubled quote', "a: 'b''\n", true],
    ['a quote not after a value start', "a: b'c\n", false],
    ['a quoted list item at a CRLF line end', "- 'x\r\n", true],
    ['an empty key', ': 1\n', true],
    ['a null key', 'null: 1\n', true],
    ['a tilde key after a flow brace', '{~: 1}\n', true],
    ['a key glued to a word ending in null', 'anull: 1\n', false],
    ['a blank before the colon', 'a : 1\n', true],
    ['a colon inside a word', 'a:b\n', false],
    ['a plain case line', 'ledger:\n  eligible: 3\n', false],
  ])('%s', (_, t, declined) => {
    expect([fastPathDeclines(t), reference(t)]).toEqual([declined, declined]);
  });

  it('each hand-written scan matches exactly what its pattern matches, on generated text', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect([t, quotedToLineEnd(t)]).toEqual([t, QUOTED_TO_LINE_END.test(t)]);
        expect([t, nullKey(t)]).toEqual([t, NULL_KEY.test(t)]);
        expect([t, fastPathDeclines(t)]).toEqual([t, reference(t)]);
      }),
      { numRuns: 20_000, seed: 24 },
    );
  });

  it('declines exactly what the reference list matches, on shipped cases and rules with pieces inserted', async () => {
    const files = [...(await expandCasePaths([path.join(root, 'cases')])), ...(await expandCasePaths([path.join(root, 'rules')]))];
    const texts = await Promise.all(files.map((f) => readFile(f, 'utf8')));
    let declined = 0;
    let accepted = 0;
    for (const t of texts) {
      expect([t.slice(0, 80), fastPathDeclines(t)]).toEqual([t.slice(0, 80), reference(t)]);
      if (reference(t)) declined++;
      else accepted++;
    }
    expect(declined).toBeGreaterThan(0);
    expect(accepted).toBeGreaterThan(0);
    fc.assert(
      fc.property(fc.nat(texts.length - 1), fc.array(fc.tuple(fc.nat(), fc.array(piece, { minLength: 1, maxLength: 4 })), { minLength: 1, maxLength: 3 }), (which, edits) => {
        let t = texts[which]!;
        for (const [at, ins] of edits) {
          const i = at % (t.length + 1);
          t = t.slice(0, i) + ins.join('') + t.slice(i);
        }
        expect(fastPathDeclines(t)).toBe(reference(t));
        expect(quotedToLineEnd(t)).toBe(QUOTED_TO_LINE_END.test(t));
        expect(nullKey(t)).toBe(NULL_KEY.test(t));
      }),
      { numRuns: 5_000, seed: 2024 },
    );
  });
});
