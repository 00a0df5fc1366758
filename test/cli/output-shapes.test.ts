import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

const LEDGER = ['ledger', '--ops', 'test/fixtures/ledger/fixture-r2.ops.jsonl', '--trace', 'test/fixtures/ledger/fixture-r2.trace.txt'];
const CAPACITY = ['capacity', '--workers', '3', '--target-sleeps', 'yes', '--possible-cpus', '0-1', '--requested', '2', '--interface', 'tracefs'];

/** Every key of a JSON value, at any depth, except the keys of maps keyed by data (dotted fact paths). */
function keys(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) keys(x, out);
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) { out.push(k); keys(x, out); }
  return out;
}

describe('one shape of output across commands', () => {
  it.each([
    ['audit', ['audit', 'cases/kernel-notes/r2-constrained.yaml', '--format', 'json']],
    ['ledger', [...LEDGER, '--format', 'json']],
    ['capacity', [...CAPACITY, '--format', 'json']],
  ])('%s --format json uses snake_case keys only', (_, argv) => {
    const r = cli(argv);
    expect(r.code === 0 || r.code === 1).toBe(true);
    const all = r.stdout.trim().split('\n').length > 1 && argv[0] === 'audit' ? r.stdout.trim().split('\n').map((l) => JSON.parse(l)) : JSON.parse(r.stdout);
    const camel = keys(all).filter((k) => /^[a-z]+[A-Z]/.test(k));
    expect(camel).toEqual([]);
    for (const obj of Array.isArray(all) ? all : [all]) expect(obj).toMatchObject({ tool_version: expect.any(String), rules_version: expect.stringMatching(/^sha256:/) });
  });

  it.each([
    ['ledger', LEDGER, 'kretprobe-triage ledger', 'high_water.value'],
    ['capacity', CAPACITY, 'kretprobe-triage capacity', 'recommended.value'],
  ])('%s --format markdown carries the JSON figures', (_, argv, title, field) => {
    const json = JSON.parse(cli([...argv, '--format', 'json']).stdout) as Record<string, Record<string, unknown>>;
    const md = cli([...argv, '--format', 'markdown']).stdout;
    expect(md.split('\n')[0]).toBe(`# ${title}`);
    const [a, b] = field.split('.') as [string, string];
    expect(md).toContain(`| \`${field}\` | ${String(json[a]![b])} |`);
  });

  it.each([
    ['ledger', LEDGER],
    ['capacity', CAPACITY],
    ['rules list', ['rules', 'list']],
  ])('%s -o FILE writes the report to the file instead of stdout', (_, argv) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-out-'));
    const file = path.join(dir, 'out.txt');
    const direct = cli(argv).stdout;
    const r = cli([...argv, '-o', file]);
    expect(r.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe(direct);
  });
});
