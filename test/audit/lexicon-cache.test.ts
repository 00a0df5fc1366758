import { mkdtempSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultRulesDir } from '../../src/rules/dir.js';
import { lexiconOf } from '../../src/writeup/audit.js';

// audit's write-up loader asks for the lexicon with the --rules option as given (undefined for
// the shipped rules), the judge with the rule set's resolved directory: one directory, so one
// load per process, whichever asks first and however often they alternate.
describe('the write-up lexicon cache', () => {
  it('names the shipped rules one way whether given as undefined, the resolved path or a relative one', () => {
    const shipped = defaultRulesDir();
    const first = lexiconOf(undefined);
    expect(lexiconOf(shipped)).toBe(first);
    expect(lexiconOf(undefined)).toBe(first);
    expect(lexiconOf(path.relative(process.cwd(), shipped) || '.')).toBe(first);
  });

  it('loads another rules directory anew, and then serves that one', async () => {
    const other = path.join(mkdtempSync(path.join(os.tmpdir(), 'krt-lex-')), 'rules');
    cpSync(defaultRulesDir(), other, { recursive: true });
    const shipped = lexiconOf(undefined);
    const mine = lexiconOf(other);
    expect(mine).not.toBe(shipped);
    expect(lexiconOf(other)).toBe(mine);
    expect((await mine).facts.length).toBe((await shipped).facts.length);
  });
});
