import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readArtifact, sniffArtifact } from '../../src/evidence/artifacts.js';
import { caseFromBundle } from '../../src/evidence/bundle.js';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

// Whether CONFIG_PREEMPTION is set decides the default pool before 6.2 (kernel-history.md §1),
// and kernels say it in three places people paste: the version string of uname -a and
// /proc/version (scripts/mkcompile_h writes PREEMPT, PREEMPT_RT or PREEMPT_DYNAMIC, and nothing
// when none of them is set), the config, and prose (issue 21, class 8). Before this, only a
// `PREEMPT` token in uname -a was read: no token, /proc/version, PREEMPT_DYNAMIC and config lines
// all left it unknown.

const preemptionOf = (kind: Parameters<typeof readArtifact>[0], text: string, ctx = {}) =>
  readArtifact(kind, text, ctx).facts.find((f) => f.path === 'kernel.preemption')?.value;

describe('the preemption model from a kernel version string', () => {
  it.each([
    // https://github.com/lkrg-org/lkrg/issues/45 (Ubuntu's generic 5.8: PREEMPT_VOLUNTARY, no token)
    { line: 'Linux grimhilde 5.8.0-38-generic #43-Ubuntu SMP Tue Jan 12 12:42:13 UTC 2021 x86_64 x86_64 x86_64 GNU/Linux', want: false },
    // https://github.com/chipsec/chipsec/issues/1154
    { line: 'Linux 5.10.23-1-MANJARO #1 SMP PREEMPT Thu Mar 11 18:47:18 UTC 2021 x86_64 GNU/Linux', want: true },
    // Debian 6.1 (the lab's guest): PREEMPT_VOLUNTARY=y with PREEMPT_DYNAMIC=y, so PREEMPTION=y
    { line: 'Linux lab 6.1.0-50-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02) x86_64 GNU/Linux', want: true },
    { line: 'Linux lab 5.10.0-32-amd64 #1 SMP Debian 5.10.223-1 (2024-08-10) x86_64 GNU/Linux', want: false },
    // Cut short before the build date and the machine: the build words cannot be told apart.
    { line: 'Linux host 5.15.0-91-generic #101-Ubuntu SMP', want: undefined },
    { line: 'Linux rt 6.12.0-rt5 #1 SMP PREEMPT_RT Mon Nov 18 10:00:00 UTC 2024 x86_64 GNU/Linux', want: true },
    { line: 'Linux dyn 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 x86_64 GNU/Linux', want: true },
  ])('uname -a: $line', ({ line, want }) => {
    expect(preemptionOf('uname', `${line}\n`, { command: 'uname -a' })).toBe(want);
  });

  it.each([
    // The lab's Debian 5.10 guest, where the default pool was observed to be the CPU count.
    { text: 'Linux version 5.10.0-32-amd64 (debian-kernel@lists.debian.org) (gcc-10 (Debian 10.2.1-6) 10.2.1 20210110, GNU ld (GNU Binutils for Debian) 2.35.2) #1 SMP Debian 5.10.223-1 (2024-08-10)', want: false },
    { text: 'Linux version 6.1.0-50-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2026-07-02)', want: true },
  ])('/proc/version: $want', ({ text, want }) => {
    expect(preemptionOf('proc_version', `${text}\n`)).toBe(want);
  });
});

describe('the preemption model from config lines', () => {
  const debian61 = '# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\nCONFIG_SMP=y\n';
  const debian510 = '# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n# CONFIG_PREEMPT is not set\nCONFIG_SMP=y\n';
  it('a symbol that selects CONFIG_PREEMPTION sets it, whatever model the kernel boots', () => {
    expect(preemptionOf('kernel-config', debian61)).toBe(true);
    expect(preemptionOf('kernel-config', 'CONFIG_PREEMPT_RT=y\n')).toBe(true);
    expect(preemptionOf('kernel-config', 'CONFIG_PREEMPT=y\n')).toBe(true);
  });
  it('VOLUNTARY with PREEMPT_DYNAMIC not set is not PREEMPTION; without the DYNAMIC line only the collector\'s own grep says so', () => {
    expect(preemptionOf('kernel-config', `${debian510}# CONFIG_PREEMPT_DYNAMIC is not set\n`)).toBe(false);
    // A pasted grep may have left the PREEMPT_DYNAMIC line out: unknown, never "no".
    expect(preemptionOf('kernel-config', debian510)).toBeUndefined();
    // The collector greps PREEMPT_DYNAMIC wherever the kernel has it (collector/collect.sh CONFIG_RE).
    expect(preemptionOf('kernel-config', debian510, { collected: true })).toBe(false);
  });
  // Our own examples of what users paste: a grep whose pattern matches CONFIG_PREEMPT_DYNAMIC would
  // have printed it, had the kernel set it, as the collector's own grep would.
  it.each([
    { command: 'grep PREEMPT /boot/config-$(uname -r)', want: false },
    { command: 'zcat /proc/config.gz | grep -i preempt', want: false },
    { command: "grep -n 'CONFIG_PREEMPT' /boot/config-5.10.0-32-amd64", want: false },
    // The pattern cannot match the DYNAMIC line, or the output may be cut: unknown.
    { command: 'grep CONFIG_PREEMPT_VOLUNTARY /boot/config-$(uname -r)', want: undefined },
    { command: 'grep -w PREEMPT /boot/config-$(uname -r)', want: undefined },
    { command: 'grep PREEMPT /boot/config-$(uname -r) | head -3', want: undefined },
    { command: "grep -E 'PREEMPT_(NONE|VOLUNTARY)' /boot/config-$(uname -r)", want: undefined },
  ])('VOLUNTARY without a DYNAMIC line, printed by $command', ({ command, want }) => {
    expect(preemptionOf('kernel-config', debian510, { command })).toBe(want);
  });

  it('pasted config lines are recognised without their command, and by the command', () => {
    expect(sniffArtifact(debian61)).toBe('kernel-config');
  });

  it('a collector bundle (the lab\'s 5.10 and 6.1 default-smp2) gets it from its config, cited', async () => {
    for (const [series, want] of [['5.10', false], ['6.1', true]] as const) {
      const work = mkdtempSync(path.join(os.tmpdir(), 'krt-preempt-'));
      execFileSync('tar', ['-xzf', path.resolve(`cases/lab/${series}/bundles.tar.gz`), '-C', work, 'default-smp2']);
      const r = await caseFromBundle(path.join(work, 'default-smp2'));
      expect((r.case as { kernel?: { preemption?: boolean } }).kernel?.preemption).toBe(want);
      expect((r.case as { provenance?: Record<string, string> }).provenance?.['kernel.preemption']).toMatch(/^end\/config:\d+$/);
      // And the shipped reference case agrees (re-derived by `lab --rederive`).
      expect(readFileSync(`cases/lab/${series}/default-smp2.yaml`, 'utf8')).toContain(`preemption: ${want}`);
    }
  });
});

describe('the preemption model stated in prose', () => {
  let lex: Lexicon;
  beforeAll(async () => {
    lex = await loadLexicon();
  });
  const read = (text: string) => (extractWriteup(`# excerpt\n\n${text}\n`, 'thread.md', lex).case as { kernel?: { preemption?: boolean } }).kernel?.preemption;
  it.each([
    { text: 'Our kernel is built with `CONFIG_PREEMPT_RT=y` and has 16 cores.', want: true },
    { text: 'This is a PREEMPT_DYNAMIC kernel booted with preempt=voluntary.', want: true },
    // A negation says the opposite, and "voluntary" alone settles nothing (PREEMPT_DYNAMIC may boot it).
    { text: 'It is not a PREEMPT_RT kernel.', want: undefined },
    { text: 'The box runs without CONFIG_PREEMPT=y.', want: undefined },
    { text: 'The other host has a voluntary preemption kernel (CONFIG_PREEMPT_VOLUNTARY=y).', want: undefined },
    { text: 'Is this a PREEMPT_DYNAMIC kernel?', want: undefined },
  ])('$text', ({ text, want }) => {
    expect(read(text)).toBe(want);
  });
});
