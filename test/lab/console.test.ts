import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { splitConsole } from '../../src/lab/console.js';
import { newcArchive } from '../../src/lab/cpio.js';
import { planBoots, selectScenarios } from '../../src/lab/scenarios.js';

describe('splitConsole', () => {
  const payload = gzipSync(Buffer.from('hello bundle'));
  const b64 = payload.toString('base64');
  const lines = [b64.slice(0, 8), b64.slice(8)];

  it.each([
    ['CRLF lines with kernel noise around', ['[    1.0] Linux', '@@KRT-LOG up', '@@KRT-BUNDLE-BEGIN a', ...lines, '@@KRT-BUNDLE-END a', '@@KRT-DONE', '[ 9.0] reboot'].join('\r\n')],
    ['a terminal escape before a marker', ['\x1b[?7l@@KRT-BUNDLE-BEGIN a', ...lines, '@@KRT-BUNDLE-END a', '@@KRT-DONE'].join('\n')],
  ])('recovers the bundle: %s', (_name, text) => {
    const c = splitConsole(text);
    expect(c.problems).toEqual([]);
    expect(c.done).toBe(true);
    expect(gunzipSync(c.bundles.get('a')!).toString()).toBe('hello bundle');
  });

  it.each([
    ['a bundle cut off by a crash', `@@KRT-BUNDLE-BEGIN a\n${b64}\n`, /never ended/],
    ['a kernel message torn into the base64', `@@KRT-BUNDLE-BEGIN a\n${b64}\n[ 3.1] oops: something\n@@KRT-BUNDLE-END a\n`, /not base64/],
    ['an end without a beginning', '@@KRT-BUNDLE-END a\n', /without its beginning/],
  ])('reports %s', (_name, text, problem) => {
    const c = splitConsole(text);
    expect(c.done).toBe(false);
    expect(c.problems.join('\n')).toMatch(problem);
  });
});

describe('newcArchive', () => {
  it('writes 4-byte aligned newc records ending in the trailer', () => {
    const a = newcArchive([
      { kind: 'dir', path: 'dev' },
      { kind: 'chardev', path: 'dev/console', major: 5, minor: 1 },
      { kind: 'file', path: '/init', data: '#!/bin/sh\n', mode: 0o755 },
      { kind: 'symlink', path: 'bin/sh', target: 'busybox' },
    ]);
    expect(a.length % 4).toBe(0);
    const text = a.toString('latin1');
    expect(text.startsWith('070701')).toBe(true);
    expect(text).toContain('dev/console\0');
    expect(text).toContain('init\0');
    expect(text).not.toContain('/init\0');
    expect(text).toContain('TRAILER!!!\0');
    // dev/console: mode S_IFCHR|0600, rdev 5:1 (fields 2, 10 and 11 of the header).
    const at = text.indexOf('dev/console\0') - 110;
    const field = (i: number): number => parseInt(text.slice(at + 6 + 8 * i, at + 14 + 8 * i), 16);
    expect(field(1)).toBe(0o020600);
    expect([field(9), field(10)]).toEqual([5, 1]);
  });
});

describe('scenario plan', () => {
  it('puts every 2-CPU scenario (tracefs, fprobe and module) in one boot, default-smp8 in another, bpftrace in a third', () => {
    const { selected } = selectScenarios(undefined);
    expect(planBoots(selected).map((b) => [b.smp, b.tools, b.scenarios.map((s) => s.name)])).toEqual([
      [
        2,
        false,
        [
          'constrained', 'adequate', 'stopped', 'default-smp2', 'failures', 'fprobe',
          'mod-constrained', 'mod-adequate', 'mod-default', 'mod-filtering', 'mod-filter-overflow',
          'mod-recursion', 'mod-reenter', 'mod-stopped', 'mod-reload',
          'mod-maxactive-4097', 'mod-data-size-4097', 'mod-blacklisted', 'mod-missing-symbol',
        ],
      ],
      [8, false, ['default-smp8']],
      [2, true, ['bt-kretprobe', 'bt-fexit', 'bt-multi']],
    ]);
  });

  it('reports unknown scenario names', () => {
    expect(selectScenarios(['adequate', 'nope']).unknown).toEqual(['nope']);
  });
});
