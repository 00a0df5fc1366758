import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_CPU_ID, MAX_CPULIST_CHARS, MAX_CPUS, parseCpuCount, parseCpuList } from '../../src/kernel/cpus.js';
import { InputError } from '../../src/errors.js';
import { firstInvalidUtf8, readInputFile, writeFileAtomic } from '../../src/fsutil.js';
import { isUtf8 } from 'node:buffer';

describe('the one cpulist parser is bounded', () => {
  it.each([
    ['0-9007199254740993', /CPU ids at most 65535/],
    ['9007199254740992', /CPU ids at most 65535/],
    ['0-65536', /CPU ids at most 65535/],
    [`${'0-1000000,'.repeat(8000)}1`, new RegExp(`at most ${MAX_CPULIST_CHARS} characters`)],
    ['3-1', /ranges low-high/],
    ['', /cpulist/],
  ])('refuses %s, saying what it expected', (text, pattern) => {
    const r = parseCpuList(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.expected).toMatch(pattern);
  });
  it('counts up to the bound', () => {
    expect(parseCpuList(`0-${MAX_CPU_ID}`)).toEqual({ ok: true, count: MAX_CPUS });
    expect(parseCpuList('0-3,8-11,2')).toEqual({ ok: true, count: 8 });
    expect(parseCpuCount(String(MAX_CPUS))).toEqual({ ok: true, count: MAX_CPUS });
    expect(parseCpuCount(String(MAX_CPUS + 1)).ok).toBe(false);
    expect(parseCpuCount('99999999999999999999').ok).toBe(false);
    expect(parseCpuCount('0').ok).toBe(false);
  });
});

describe('firstInvalidUtf8 agrees with isUtf8', () => {
  it('on every 1- to 3-byte sequence of interesting bytes', () => {
    const bytes = [0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xa0, 0xed, 0xef, 0xf0, 0x90, 0xf4, 0x8f, 0xf5, 0xff];
    for (const a of bytes) for (const b of bytes) for (const c of bytes) {
      const buf = Buffer.from([a, b, c]);
      expect(firstInvalidUtf8(buf) === buf.length, buf.toString('hex')).toBe(isUtf8(buf));
    }
  });
});

describe('readInputFile and writeFileAtomic', () => {
  it('counts the limit while reading, whatever stat says', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-units-'));
    await fs.writeFile(path.join(dir, 'x'), 'a'.repeat(2000));
    await expect(readInputFile(path.join(dir, 'x'), 'case file', 1000)).rejects.toThrow(/at most 1000 bytes; got 2000 bytes/);
    await expect(readInputFile('/dev/zero', 'case file', 1000)).rejects.toBeInstanceOf(InputError);
    await fs.rm(dir, { recursive: true });
  });
  it('keeps the old signature: a new file is written, an existing one refused without force', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-units-'));
    const f = path.join(dir, 'out.yaml');
    await writeFileAtomic(f, 'one\n');
    await expect(writeFileAtomic(f, 'two\n')).rejects.toThrow(/--force/);
    await writeFileAtomic(f, 'two\n', { force: true });
    expect(await fs.readFile(f, 'utf8')).toBe('two\n');
    await writeFileAtomic(f, 'three\n', { backup: true });
    expect(await fs.readFile(`${f}.bak`, 'utf8')).toBe('two\n');
    await expect(writeFileAtomic(f, 'x'.repeat(100), { force: true, maxBytes: 10 })).rejects.toThrow(/at most 10 bytes/);
    expect(await fs.readFile(f, 'utf8')).toBe('three\n');
    expect((await fs.readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    await fs.rm(dir, { recursive: true });
  });
});
