import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLOOR_DEFINITION, floorFiles, floorRead } from '../../scripts/ledger-floor.js';

/** The ledger bench's floor does the minimum it claims: the same files, every byte, lines split, nothing validated. */
let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-floor-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('the ledger bench floor', () => {
  it('reads the same two files the ledger reads', () => {
    expect(floorFiles('t.txt', 'ops.jsonl')).toEqual(['t.txt', 'ops.jsonl']);
  });

  it('reads every byte and counts every line, across chunk edges and without a final newline', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    // 3 MiB and more of lines of varied length, so that lines cross the 1 MiB reads.
    const lines = Array.from({ length: 200_000 }, (_, i) => 'x'.repeat(i % 37));
    await fs.writeFile(a, `${lines.join('\n')}\n`);
    await fs.writeFile(b, 'one\ntwo\nthree');
    const sizes = (await fs.stat(a)).size + (await fs.stat(b)).size;
    expect(floorRead([a, b])).toEqual({ lines: 200_003, bytes: sizes });
  });

  it('validates nothing: garbage and valid records of the same lengths count alike', async () => {
    const good = path.join(dir, 'good.jsonl');
    const bad = path.join(dir, 'bad.jsonl');
    await fs.writeFile(good, '{"ev":"entry","ts_ns":1}\n'.repeat(1000));
    await fs.writeFile(bad, '\u0000\u00ff{{{not json at all}\n'.repeat(1000));
    expect(floorRead([bad]).lines).toBe(floorRead([good]).lines);
    expect(FLOOR_DEFINITION).toMatch(/no decoding, no parsing, no validation/);
  });
});
