import { promises as fs } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeWriteup, extractWriteup, parseLexicon, sniffKind, type Lexicon } from '../../src/writeup/index.js';

const root = path.resolve(import.meta.dirname, '../..');
const lexDir = path.join(root, 'rules', 'lexicon');
const read = async (name: string) => ({ text: await fs.readFile(path.join(lexDir, name), 'utf8'), file: name });
const texts = async () => ({ facts: await read('facts.yaml'), claims: await read('claims.yaml') });

/** The same lexicon with every `needs` filter removed: each pattern runs on every sentence. */
function unfiltered(lex: Lexicon): Lexicon {
  return { ...lex, facts: lex.facts.map((f) => ({ ...f, needs: [] })), interfaceNeeds: [], claims: lex.claims.map((c) => ({ ...c, needs: [] })) };
}

describe('the lexicon', () => {
  it('needs filters never change what is extracted (shipped write-ups)', async () => {
    const lex = parseLexicon(await texts());
    const all = unfiltered(lex);
    const dir = path.join(root, 'cases', 'writeups');
    for (const name of (await fs.readdir(dir)).filter((n) => !n.endsWith('.expect') && n !== 'real')) {
      const text = decodeWriteup(await fs.readFile(path.join(dir, name)), name);
      const a = extractWriteup(text, name, lex);
      const b = extractWriteup(text, name, all);
      expect([name, a.facts, a.claims, a.notClaims]).toEqual([name, b.facts, b.claims, b.notClaims]);
    }
  });

  it('refuses an invalid pattern at its location', async () => {
    const t = await texts();
    t.facts.text = t.facts.text.replace("pattern: '\\bmaxactive\\b(?:", "pattern: '\\bmaxactive\\b((?:");
    expect(() => parseLexicon(t)).toThrow(/facts\.yaml:\d+:\d+: expected facts\.1\.pattern: .*a valid regular expression/);
  });

  // A list written once in `fragments:` is the same list in every pattern that reads it.
  it('fills each {{name}} from fragments: the tracers list reaches every pattern that names it', async () => {
    const t = await texts();
    t.facts.text = t.facts.text.replace(/^(  tracers: ')/m, '$1strace|');
    const lex = parseLexicon(t);
    const readers = lex.facts.filter((f) => /\bstrace\|bpftrace\|/.test(f.re.source)).map((f) => f.id);
    expect(readers).toEqual(['lost-events', 'lost-events-count', 'lost-records-tool']);
    expect(lex.facts.some((f) => f.re.source.includes('{{'))).toBe(false);
    // A new tracer in the list: its lost records are its own buffer's, in prose and in counts.
    const c = extractWriteup('# t\n\nstrace printed that it lost 12 events.\n', 't.md', lex).case as unknown as { ledger?: Record<string, unknown> };
    expect([c.ledger?.buffer_overruns, c.ledger?.lost_events]).toEqual([12, undefined]);
  });

  it('refuses a fragment no one declared, at the pattern that names it', async () => {
    const t = await texts();
    t.facts.text = t.facts.text.replace('(?:{{tracers}})\\b[^.;]{0,60})lost (?<v>', '(?:{{tracer}})\\b[^.;]{0,60})lost (?<v>');
    expect(() => parseLexicon(t)).toThrow(/^facts\.yaml:\d+:\d+: expected a fragment declared under fragments: \(tracers, [a-z_, ]+\); got \{\{tracer\}\}$/);
  });
});

describe('content sniffing', () => {
  it.each([
    ['mail headers in a .txt', 'From: a@b\nSubject: x\nDate: today\n\nbody\n', 'thread.txt', 'mail'],
    ['an mbox', 'From a@b Mon Oct  5 09:00:00 2026\nFrom: a@b\n\nbody\n', 'x.txt', 'mail'],
    ['markdown marks in a .txt', '# Title\n\n```\nx\n```\n', 'notes.txt', 'markdown'],
    ['a root prompt is not a heading', '# cat /sys/kernel/tracing/kprobe_profile\n  gate 2 1\n', 'notes.txt', 'text'],
    ['plain prose in a .md', 'just words\n', 'page.md', 'markdown'],
    ['plain prose in a .txt', 'just words\n', 'page.txt', 'text'],
  ])('%s', (_, text, file, kind) => {
    expect(sniffKind(text, file)).toBe(kind);
  });
});
