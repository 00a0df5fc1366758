import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { updateCaseFile } from '../../src/case/load.js';
import { InputError } from '../../src/errors.js';

const ORIGINAL = 'format: kretprobe-case/v1\nid: x\n# the engineer\'s note\nledger:\n  eligible: 3\n';

describe('updateCaseFile', () => {
  it('keeps comments, validates, keeps the first version as .bak', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-upd-'));
    const file = path.join(dir, 'c.yaml');
    await fs.writeFile(file, ORIGINAL);
    await updateCaseFile(file, { 'ledger.returns': 2 });
    await updateCaseFile(file, { 'ledger.filtered': 0 });
    const text = await fs.readFile(file, 'utf8');
    expect(text).toMatch(/# the engineer's note/);
    expect(text).toMatch(/returns: 2/);
    expect(text).toMatch(/filtered: 0/);
    expect(await fs.readFile(`${file}.bak`, 'utf8')).toBe(ORIGINAL);
  });

  it('refuses an update that makes the case invalid and leaves the file as it was', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-upd-'));
    const file = path.join(dir, 'c.yaml');
    await fs.writeFile(file, ORIGINAL);
    await expect(updateCaseFile(file, { 'ledger.returns': -1 })).rejects.toBeInstanceOf(InputError);
    expect(await fs.readFile(file, 'utf8')).toBe(ORIGINAL);
    expect(await fs.readdir(dir)).toEqual(['c.yaml']);
  });

  it('creates a new file from an initial text', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-upd-'));
    const file = path.join(dir, 'new.yaml');
    await updateCaseFile(file, { 'probe.target': 'pipe_read' }, { initial: 'format: kretprobe-case/v1\nid: new\n' });
    expect(await fs.readFile(file, 'utf8')).toMatch(/target: pipe_read/);
  });
});
