import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

// One set of flags on every command: -o/--output (alias --output-file), --force, -f/--format.
const LEAVES = [['audit'], ['rules', 'list'], ['rules', 'explain'], ['collect'], ['lab'], ['case', 'from-bundle'], ['ledger'], ['capacity'], ['writeup', 'extract'], ['report']];

describe('flag conventions', () => {
  it.each(LEAVES)('%s %s: -o is --output, with --force; a --format has -f', (...command) => {
    const help = cli([...command.filter(Boolean), '--help']).stdout;
    expect(help).toMatch(/^ {2}-o, --output <file> /m);
    expect(help).toMatch(/^ {2}--force /m);
    expect(help).not.toMatch(/--output-file/);
    if (/--format/.test(help)) expect(help).toMatch(/^ {2}-f, --format <format> /m);
  });

  it.each([['-o'], ['--output'], ['--output-file']])('%s writes the report of a report command and of a command writing its own file', (flag) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'krt-conv-'));
    const report = path.join(dir, 'capacity.json');
    const r = cli(['capacity', '--workers', '4', '--possible-cpus', '4', '--interface', 'tracefs', '-f', 'json', flag, report]);
    expect([r.code, r.stdout]).toEqual([0, '']);
    expect(JSON.parse(readFileSync(report, 'utf8'))).toBeTypeOf('object');
    const written = path.join(dir, 'case.yaml');
    const w = cli(['writeup', 'extract', 'cases/writeups/careful-stall-7x.md', flag, written]);
    expect(w.code).toBe(0);
    expect(readFileSync(written, 'utf8')).toMatch(/^format: kretprobe-case\/v1$/m);
  });
});
