import { describe, expect, it } from 'vitest';
import { evaluateCase } from '../../src/index.js';
import { at, excerptReader, type Obj } from './excerpt.js';

// A module that prints its own kretprobe's nmissed when it is unloaded, told in prose rather than
// pasted as the kernel sample's "Missed probing N instances" line: that count is the whole
// registration's, which register_kretprobe() (rp->nmissed) and register_kprobe() (kp.nmissed)
// started at 0 (kernel-facts.md §2; issue 20, silent 3: facts fixed by construction). Before, only
// the end count was read: no start, no epoch, no interface, no source, so the rise was no delta.

const reader = excerptReader();
const read = (text: string) => reader.extract(text);
const FIELDS = ['counters.source', 'counters.start.nmissed', 'counters.start.kprobe_nmissed', 'counters.start.epoch', 'counters.end.epoch', 'probe.interface'];
const FROM_ZERO = ['module-field', 0, 0, 'reg-1', 'reg-1', 'module'];

describe('a module\'s own nmissed printed at unload', () => {
  it.each([
    ['printed on rmmod', 'The module prints rp.nmissed when it is unloaded: after the copy it printed nmissed=212 on rmmod.\n'],
    ['its exit handler logs it', 'Our kretprobe module logs its nmissed from its exit handler, which said nmissed=212.\n'],
    ['at unload, the count first', 'On unload the module printed rp->nmissed: 212.\n'],
    ['when removed', 'It reports the kretprobe.nmissed when it is removed, and the figure was 212.\n'],
  ])('%s: the registration\'s total, from 0', (_, text) => {
    const c = read(text).case as unknown as Obj;
    expect(FIELDS.map((p) => at(c, p))).toEqual(FROM_ZERO);
  });

  it.each([
    ['a tool printing at exit (no module named)', 'The tool prints nmissed on exit, which was 212.\n'],
    ['a count read while loaded', 'The module prints rp.nmissed every second; it read nmissed=212 during the copy.\n'],
    ['a plan', 'We could print rp.nmissed when the module is unloaded.\n'],
    ['a question', 'Does the module print rp.nmissed on rmmod?\n'],
  ])('%s: no start is implied', (_, text) => {
    const c = read(text).case as unknown as Obj;
    expect([at(c, 'counters.start.nmissed'), at(c, 'counters.start.epoch')]).toEqual([undefined, undefined]);
  });

  it('the module and its target named together ("our kretprobe module on nfsd_dispatch")', () => {
    const c = read('We loaded our kretprobe module on nfsd_dispatch with maxactive 16.\n').case as unknown as Obj;
    expect([at(c, 'probe.interface'), at(c, 'probe.target')]).toEqual(['module', 'nfsd_dispatch']);
  });

  it('the rise is a delta within the registration, as for the sample\'s exit message', async () => {
    const x = read('Kernel 6.1.0-18-amd64. We loaded our kretprobe module on nfsd_dispatch with maxactive 16 and ran the copy.\n\nThe module prints rp.nmissed when it is unloaded: after the copy it printed nmissed=212 on rmmod.\n');
    const v = await evaluateCase(x.case, reader.rules());
    // 212 pool misses within the registration, and a probe that counted them was registered and
    // armed; whether they hid calls of the copy needs its ledger (counters/nmissed-rose), as for
    // nfsd-module-postmortem.md.
    expect(v.accounting.capacity_missed).toBe(212);
    expect(v.possible).toContain('capacity-missed');
    expect(v.possible).not.toContain('setup-failure');
  });
});
