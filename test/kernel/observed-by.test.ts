import { describe, expect, it } from 'vitest';
import { CHANGES, defaultPool, hasChange, hasChangeBy, releasePostdates } from '../../src/kernel/history.js';
import { observedBy } from '../../src/writeup/extract.js';

// A kernel seen running on a date carries no change first posted after it (issue 21: a thread's
// date is evidence about its kernel). The floors are written in src/kernel/history.ts; the
// expectations below are the kernel history's, written out by hand.
describe('the date a kernel was seen running by', () => {
  it('decides a change for a release the model cannot place, only when the date is before the floor', () => {
    // RHEL 8's 4.18.0-147.el8 is a vendor build: the release alone says nothing.
    expect(hasChange('4.18.0-147.el8.x86_64', 'profileSumsPoolMisses')).toBeUndefined();
    expect(hasChangeBy('4.18.0-147.el8.x86_64', 'profileSumsPoolMisses', '2020-06-01')).toBe(false);
    // Seen running in 2023: the vendor may have backported the 2022 fix.
    expect(hasChangeBy('4.18.0-147.el8.x86_64', 'profileSumsPoolMisses', '2023-06-01')).toBeUndefined();
    // No release at all, a 2017 post: none of the four changes.
    for (const c of Object.keys(CHANGES) as Array<keyof typeof CHANGES>) expect(hasChangeBy(undefined, c, '2017-03-23')).toBe(false);
    expect(hasChangeBy(undefined, 'bpfLinkMissed', '2024-01-01')).toBeUndefined();
    // Not a date: no bound.
    expect(hasChangeBy(undefined, 'bpfLinkMissed', 'other')).toBeUndefined();
  });

  it('never overrides what a placed release says', () => {
    expect(hasChangeBy('5.10.20', 'profileSumsPoolMisses', '2030-01-01')).toBe(false);
    expect(hasChangeBy('6.12.95', 'profileSumsPoolMisses', '2017-03-23')).toBe(true);
  });

  it('names the contradiction of a release that carries a change posted after the date', () => {
    expect(releasePostdates('6.12.95', '2017-03-23')).toBe('profileSumsPoolMisses');
    expect(releasePostdates('5.10.20', '2017-03-23')).toBeUndefined();
    expect(releasePostdates('6.1.90', '2021-06-01')).toBe('defaultPoolUnconditional');
    expect(releasePostdates('6.1.90', '2022-06-01')).toBeUndefined();
    expect(releasePostdates('6.12.95', undefined)).toBeUndefined();
    expect(releasePostdates(undefined, '2017-03-23')).toBeUndefined();
  });

  it('gives the pre-6.2 default pool to an unplaced kernel seen running before the 6.2 fix', () => {
    // Without CONFIG_PREEMPTION before 3b7ddab8a19a: the possible-CPU count.
    expect(defaultPool(undefined, false, 4, '2019-12-26')).toBe(4);
    expect(defaultPool('4.18.0-147.el8.x86_64', false, 4, '2019-12-26')).toBe(4);
    expect(defaultPool(undefined, false, 4)).toBeUndefined();
    expect(defaultPool(undefined, false, 4, '2024-01-01')).toBeUndefined();
    // With preemption the date changes nothing.
    expect(defaultPool(undefined, true, 4, '2019-12-26')).toBe(10);
  });
});

describe('observedBy: the latest date a write-up gives itself', () => {
  it('reads post headings and Date lines, and keeps the latest (weaveworks/tcptracer-bpf#24)', () => {
    // https://github.com/weaveworks/tcptracer-bpf/issues/24, as the corpus keeps it.
    const text = [
      '# kretprobe on tcp_v4_connect has non-zero nmissed field',
      '',
      '- Date: 2017-02-23',
      '',
      '## alban · description · 2017-02-23',
      'Every time I start tcptracer-bpf, it misses 28 kretprobes on tcp_v4_connect.',
      '## schu · comment · 2017-02-24',
      '## alban · comment · 2017-03-23',
      'Fixed in 4.12 (released 2017-07-02), see the 2018-01-01 plan.',
    ].join('\n');
    const f = observedBy(text);
    expect(f?.value).toBe('2017-03-23');
    expect(f?.line).toBe(8);
    expect(f?.path).toBe('kernel.observed_by');
  });

  it('reads a mail Date header and GitHub\'s "commented on"', () => {
    expect(observedBy('From: a@b\nDate: Tue, 10 Nov 2026 14:02:11 +0000\nSubject: x\n')?.value).toBe('2026-11-10');
    expect(observedBy('brendangregg commented on Feb 3, 2017\nsome text\nyonghong-song commented on Mar 15, 2019')?.value).toBe('2019-03-15');
  });

  it('reads no date from prose, and none that is not a calendar date', () => {
    expect(observedBy('We upgraded on 2024-05-01 and the returns came back.')).toBeUndefined();
    expect(observedBy('- Date: 2017-02-30')).toBeUndefined();
    expect(observedBy('## alban · comment · 2017-13-01')).toBeUndefined();
  });
});
