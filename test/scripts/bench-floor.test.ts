import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { expandInputs } from '../../src/audit/inputs.js';
import { expandCasePaths } from '../../src/case/load.js';
import { parseYamlFast } from '../../src/yamlfile.js';
import { FLOORS, floorFiles, runFloor } from '../../scripts/bench-floor.js';

// The floors of npm run bench:cli do the least a user's audit must do, and nothing more: the
// same files, the same parser, no validation. Otherwise a ratio against them says nothing.
const ROOT = path.resolve(import.meta.dirname, '../..');
const FLOOR = path.join(ROOT, 'dist/scripts/bench-floor.js');
const HOOK = path.join(ROOT, 'test/fixtures/startup/record-modules.mjs');

function tree(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-floor-'));
  mkdirSync(path.join(dir, 'b', 'c'), { recursive: true });
  const c = readFileSync(path.join(ROOT, 'cases/kernel-notes/r2-constrained.yaml'), 'utf8');
  writeFileSync(path.join(dir, 'a.yaml'), c);
  writeFileSync(path.join(dir, 'b', 'x.yml'), c);
  writeFileSync(path.join(dir, 'b', 'c', 'y.yaml'), c);
  writeFileSync(path.join(dir, 'b', 'notes.md'), '# Notes\n\nnmissed stayed at 0.\n');
  writeFileSync(path.join(dir, 'b', 'c', 'readme.txt'), 'not read by either\n');
  return dir;
}

async function auditFiles(dir: string, kind: 'case' | 'writeup'): Promise<string[]> {
  const out: string[] = [];
  for await (const ref of expandInputs([dir], { cwd: dir })) if (!(ref instanceof Error) && ref.kind === kind) out.push(ref.file);
  return out;
}

function modulesOf(args: string[]): string[] {
  const out = path.join(mkdtempSync(path.join(os.tmpdir(), 'krt-floor-mods-')), 'modules.txt');
  const r = spawnSync(process.execPath, ['--import', HOOK, FLOOR, ...args], { encoding: 'utf8', env: { ...process.env, KRT_MODULES_OUT: out } });
  expect(r.status).toBe(0);
  return readFileSync(out, 'utf8').split('\n').filter(Boolean);
}

describe('the floors of bench:cli', () => {
  it('read the files audit reads from the same tree, in the same order', async () => {
    const dir = tree();
    expect(floorFiles(dir, 'cases')).toEqual(await auditFiles(dir, 'case'));
    expect(floorFiles(dir, 'writeups')).toEqual((await auditFiles(dir, 'writeup')).filter((f) => f.endsWith('.md')));
    expect(runFloor('cases', dir)).toMatchObject({ files: 3 });
    expect(runFloor('writeups', dir)).toMatchObject({ files: 1 });
  });

  it('parse cases with the parser the audit reads them with (js-yaml): the same values', async () => {
    for (const file of await expandCasePaths([path.join(ROOT, 'cases')])) {
      const text = readFileSync(file, 'utf8');
      const fast = parseYamlFast(text, 'case file', file);
      if (fast !== undefined) expect(yaml.load(text)).toEqual(fast);
    }
  });

  it.each(Object.keys(FLOORS))('%s: loads its parser and no validation (no zod, no case or write-up code)', (kind) => {
    const mods = modulesOf([kind, tree()]);
    expect(mods.some((m) => m.includes(kind === 'cases' ? '/js-yaml/' : '/markdown-it/'))).toBe(true);
    expect(mods.filter((m) => /\/zod\/|\/dist\/src\//.test(m))).toEqual([]);
  });
});
