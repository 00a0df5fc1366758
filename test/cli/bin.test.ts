import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT } from './helpers.js';

// The README's first command runs the tool as `npx kretprobe-triage`, which executes the bin
// file itself: it must be executable once `npm ci` has built it (tsc writes it 0644).
describe('the installed command', () => {
  it('is an executable file that runs with its shebang', () => {
    expect(statSync(BIN).mode & 0o111).not.toBe(0);
    const r = spawnSync(BIN, ['--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: kretprobe-triage/);
  });
});
