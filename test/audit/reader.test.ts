import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POOL_MIN_INPUTS, readerPays } from '../../src/audit/pool.js';
import { InputError } from '../../src/errors.js';
import type { AuditInput, InputRef } from '../../src/audit/inputs.js';
import { inputToWire } from '../../src/audit/wire.js';

// The reading thread (src/audit/reader.ts) must hand the main thread exactly what reading on
// the main thread gives: the same inputs, in the same order, the same errors in their places.
// The built modules are used: the worker runs compiled code (dist/src/audit/readWorker.js).
const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;
let refs: Array<InputRef | InputError>;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'krt-reader-'));
  const bad = path.join(dir, 'broken.yaml');
  writeFileSync(bad, 'format: kretprobe-case/v1\nid: broken\nprobe: [\n');
  const invalid = path.join(dir, 'invalid.yaml');
  writeFileSync(invalid, 'format: kretprobe-case/v1\nid: no-probe\n');
  const shipped = ['cases/kernel-notes/r2-constrained.yaml', 'cases/exact/c3-entry-events-below-counted-pool-misses.yaml', 'cases/ledger/unbalanced-counts.yaml'];
  const writeups = ['cases/writeups/bpftrace-vfs-read.md', 'cases/writeups/bcc-tcp-thread.eml'];
  refs = [];
  // Enough files for several chunks, with errors, standard input and write-ups (read on the main thread) between them.
  for (let k = 0; k < 40; k++) {
    for (const f of shipped) refs.push({ file: path.join(ROOT, f), kind: 'case' });
    if (k % 10 === 2) for (const f of writeups) refs.push({ file: path.join(ROOT, f), kind: 'writeup' });
    if (k % 9 === 3) refs.push({ file: bad, kind: 'case' });
    if (k % 13 === 5) refs.push(new InputError({ file: path.join(dir, 'gone.yaml') }, 'an existing case file', 'no such file'));
    if (k === 17) refs.push({ file: '-', kind: 'case' });
    if (k % 11 === 7) refs.push({ file: invalid, kind: 'case' });
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// By shape, not instanceof: the built modules have their own InputError class.
const shown = (x: AuditInput | InputError) => ('loaded' in x ? { input: inputToWire(x) } : { error: x.message });
const iter = (xs: Array<InputRef | InputError>): AsyncIterator<InputRef | InputError> => {
  let i = 0;
  return { next: async () => (i < xs.length ? { done: false, value: xs[i++]! } : { done: true, value: undefined }) };
};

describe('reading on a second thread', () => {
  it('gives what reading on the main thread gives, in order, errors in their places', async () => {
    const { loadInputs } = (await import(path.join(ROOT, 'dist/src/audit/inputs.js'))) as typeof import('../../src/audit/inputs.js');
    const { loadInputsOnThread, READER_STATS } = (await import(path.join(ROOT, 'dist/src/audit/reader.js'))) as typeof import('../../src/audit/reader.js');
    const { InputError: BuiltError } = (await import(path.join(ROOT, 'dist/src/errors.js'))) as typeof import('../../src/errors.js');
    const built = refs.map((r) => (r instanceof InputError ? new BuiltError({ file: r.file }, r.expected, r.got) : r));
    const stdinCase = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8').replace(/^id: .*$/m, 'id: from-stdin');
    const stdin = () => Promise.resolve(stdinCase);
    const here: unknown[] = [];
    for await (const x of loadInputs({ [Symbol.asyncIterator]: () => iter(built) }, stdin)) here.push(shown(x as AuditInput | InputError));
    const there: unknown[] = [];
    const before = { ...READER_STATS };
    for await (const x of loadInputsOnThread(iter(built), stdin)) there.push(shown(x as AuditInput | InputError));
    expect(there).toHaveLength(refs.length);
    // The worker did read (a worker that fails hands its chunks back, which would pass unseen):
    // every case file; here, only the errors of the walk, standard input and the write-ups.
    const mainOnly = refs.filter((r) => r instanceof InputError || r.file === '-' || r.kind === 'writeup').length;
    expect(READER_STATS.thread - before.thread).toBe(refs.length - mainOnly);
    expect(READER_STATS.here - before.here).toBe(mainOnly);
    expect(there).toEqual(here);
    // The batch really holds each kind of outcome.
    const kinds = new Set(here.map((h) => ('error' in (h as object) ? 'error' : (h as { input: { kind: string } }).input.kind)));
    expect([...kinds].sort()).toEqual(['case', 'error', 'writeup']);
    expect(here.filter((h) => 'input' in (h as object) && (h as { input: { file: string } }).input.file === '<stdin>')).toHaveLength(1);
  }, 60_000);

  it('decodes a case whose positioned YAML is parsed only when asked', async () => {
    const { loadInputsOnThread } = (await import(path.join(ROOT, 'dist/src/audit/reader.js'))) as typeof import('../../src/audit/reader.js');
    const file = path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml');
    const out: Array<AuditInput | InputError> = [];
    for await (const x of loadInputsOnThread(iter([{ file, kind: 'case' }]), () => Promise.reject(new Error('no stdin')))) out.push(x as AuditInput);
    const input = out[0] as AuditInput;
    expect(input.kind).toBe('case');
    expect(input.loaded.yaml.doc.get('format')).toBe('kretprobe-case/v1');
  }, 60_000);
});

describe('readerPays', () => {
  it('reads a big batch on a second thread when most of a core is idle', () => {
    expect(readerPays(POOL_MIN_INPUTS, 1, 2, 0)).toBe(true);
    expect(readerPays(10_000, 0.8, 2, 0)).toBe(true);
  });
  it('reads on the main thread for a small batch, a single core, or a busy machine', () => {
    expect(readerPays(POOL_MIN_INPUTS - 1, 1, 2, 0)).toBe(false);
    expect(readerPays(10_000, 1, 1, 0)).toBe(false);
    expect(readerPays(10_000, 0.5, 2, 0)).toBe(false);
  });
  it('reads the load average when idle time could not be measured (the main thread counted in it)', () => {
    expect(readerPays(10_000, undefined, 2, 0.1)).toBe(true);
    expect(readerPays(10_000, undefined, 2, 1.5)).toBe(false);
    expect(readerPays(10_000, undefined, 4, 2)).toBe(true);
  });
});
