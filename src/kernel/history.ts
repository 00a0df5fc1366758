import type { BPF_ATTACH } from '../case/schema.js';
/**
 * What a release tells about the return-probe machinery, from ../shared/kernel-history.md.
 * Each entry names the release (and the stable point releases that got the change) and the
 * upstream commit. A release the model cannot place — a vendor build whose ABI number hides the
 * upstream point release, or a point release inside a backport range the page does not pin —
 * answers `undefined`: unknown, never a guess.
 */

/** An upstream release as far as `uname -r` pins it. `patch` is undefined for vendor builds. */
export interface Release {
  major: number;
  minor: number;
  /** The upstream point release; undefined when the string cannot say (vendor ABI numbers). */
  patch: number | undefined;
}

/**
 * `6.12.95+deb12-amd64` pins 6.12.95; `5.15.0-91-generic`, `6.1.0-50-amd64` and
 * `4.18.0-348.el8.x86_64` are vendor builds: the `.0-N` form names an ABI, not a point release,
 * and such kernels carry backports the upstream number does not show.
 */
export function parseRelease(text: string): Release | undefined {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?(.*)$/.exec(text.trim());
  if (!m) return undefined;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const rest = m[4] ?? '';
  const vendor = /^-\d/.test(rest);
  const patch = m[3] === undefined || vendor ? undefined : Number(m[3]);
  return { major, minor, patch };
}

/**
 * A change that landed upstream in `since` and was backported to the listed stable lines
 * (`[major, minor, first patch]`). Lines listed without a patch got it at an unknown point.
 */
export interface Change {
  since: [number, number];
  stable: Array<[number, number, number | undefined]>;
  commit: string;
  effect: string;
  /**
   * A date before which no kernel can carry the change: earlier than the patch's first posting,
   * so a vendor that picked it off the list early is covered too. Kernels seen running before it
   * (a post's date, a collection date: `kernel.observed_by`) lack the change whatever their release.
   */
  notBefore: string;
}

export const CHANGES = {
  /** kprobe_profile's miss column for a return event adds rp->nmissed (before: kp.nmissed only). */
  profileSumsPoolMisses: {
    since: [5, 17],
    // Each pin is the stable review series that carried the backport (stable@vger.kernel.org,
    // 2022-01-24, "commit dfea08a2116fe327f79d8f4d4b2cf6e0c88be11f upstream"):
    //   5.4.174  "[PATCH 5.4 253/320] tracing/kprobes: nmissed not showed correctly for kretprobe",
    //            series "[PATCH 5.4 000/320] 5.4.174-rc1 review" (<20220124183953.750177707@linuxfoundation.org>)
    //   5.10.94  "[PATCH 5.10 451/563] ...", series "[PATCH 5.10 000/563] 5.10.94-rc1 review"
    //   5.15.17  "[PATCH 5.15 684/846] ...", series "[PATCH 5.15 000/846] 5.15.17-rc1 review"
    //   5.16.3   "[PATCH 5.16 0853/1039] ...", series "[PATCH 5.16 0000/1039] 5.16.3-rc1 review"
    // No 4.19, 4.14 or 4.9 review series carries it: those lines keep the kp.nmissed-only column.
    stable: [[5, 4, 174], [5, 10, 94], [5, 15, 17], [5, 16, 3]],
    commit: 'dfea08a2116f "tracing/kprobes: nmissed not showed correctly for kretprobe"',
    effect: 'kprobe_profile miss column of a return event = kp.nmissed + rp.nmissed',
    // The patch is from the 5.17 cycle (merged for 5.17-rc1, January 2022; the stable series above
    // are of 2022-01-24). A floor a year before that.
    notBefore: '2021-01-01',
  },
  /** Default maxactive is max(10, 2 x possible CPUs) whatever the preemption model. */
  defaultPoolUnconditional: {
    since: [6, 2],
    // "[PATCH 6.1 39/71] kprobes: kretprobe events missing on 2-core KVM guest" in "[PATCH 6.1
    // 00/71] 6.1.3-rc1 review", and "[PATCH 6.0 44/74] ..." in "[PATCH 6.0 00/74] 6.0.17-rc1
    // review" (stable@vger.kernel.org, 2023-01-02). No 5.15, 5.10 or 5.4 series carries it.
    stable: [[6, 1, 3], [6, 0, 17]],
    commit: '3b7ddab8a19a "kprobes: kretprobe events missing on 2-core KVM guest"',
    effect: 'default maxactive max(10, 2 x num_possible_cpus()) on every kernel',
    // A 6.2-cycle fix (merged December 2022, stable series of 2023-01-02). A floor a year before.
    notBefore: '2022-01-01',
  },
  /** A kprobe BPF perf link and a kprobe_multi link report `missed`. */
  bpfLinkMissed: {
    since: [6, 7],
    stable: [],
    commit: '3acf8ace6823 "bpf: Add missed value to kprobe perf link info", e2b2cd592adb (kprobe_multi)',
    effect: 'bpf_link_info ... missed (bpftool link show: missed N)',
    // bpf-next for 6.7 (September 2023, "Networking for 6.7"). A floor months before the series.
    notBefore: '2023-01-01',
  },
  /** fprobe exits run on the function-graph shadow stack: no instance pool at all. */
  fprobeWithoutPool: {
    since: [6, 14],
    stable: [],
    commit: '4346ba160409, a2224559cbba "tracing/fprobe: Remove nr_maxactive from fprobe"',
    effect: 'fprobe exit handlers have no rethook pool; fN: is rejected',
    // Merged for 6.14 (January 2025); the fprobe-on-fgraph series was first posted in 2023. A
    // floor before its first version.
    notBefore: '2023-01-01',
  },
} as const satisfies Record<string, Change>;

export type ChangeName = keyof typeof CHANGES;

const atLeast = (r: Release, major: number, minor: number) => r.major > major || (r.major === major && r.minor >= minor);

/** Whether the kernel `release` has `change`: true, false, or undefined when it cannot be placed. */
export function hasChange(release: string, change: ChangeName): boolean | undefined {
  const r = parseRelease(release);
  if (!r) return undefined;
  const c: Change = CHANGES[change];
  if (atLeast(r, c.since[0], c.since[1])) return true;
  // Below the upstream release: only a stable line that got the backport can have it, and a
  // vendor build may carry it whatever its line.
  const line = c.stable.find(([ma, mi]) => ma === r.major && mi === r.minor);
  if (r.patch === undefined) return undefined;
  if (!line) return false;
  return line[2] === undefined ? undefined : r.patch >= line[2];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * `hasChange`, also knowing a date the kernel was seen running by (`kernel.observed_by`): a
 * kernel running before a change's `notBefore` lacks it whatever its release, so a release the
 * model cannot place (a vendor build, or none given) still has an answer. The release decides
 * first; where it says the change is there and the date says it cannot be, the evidence
 * contradicts itself (releasePostdates) and the release's answer stands for the rule that reads it.
 */
export function hasChangeBy(release: string | undefined, change: ChangeName, observedBy: string | undefined): boolean | undefined {
  const byRelease = release === undefined ? undefined : hasChange(release, change);
  if (byRelease !== undefined) return byRelease;
  return observedBy !== undefined && DATE.test(observedBy) && observedBy < CHANGES[change].notBefore ? false : undefined;
}

/**
 * The first change the release places as present that no kernel seen running by `observedBy`
 * can have: the release and the date cannot both be right. Undefined when they agree, or when
 * either is unknown.
 */
export function releasePostdates(release: string | undefined, observedBy: string | undefined): ChangeName | undefined {
  if (release === undefined || observedBy === undefined || !DATE.test(observedBy)) return undefined;
  return (Object.keys(CHANGES) as ChangeName[]).find((c) => observedBy < CHANGES[c].notBefore && hasChange(release, c) === true);
}

/**
 * The default pool a nonpositive maxactive gets (kernel-history.md §2): on kernels with
 * 3b7ddab8a19a, max(10, 2 x possible CPUs); before it, that only with CONFIG_PREEMPTION and
 * num_possible_cpus() without it.
 */
export function defaultPool(release: string | undefined, preemption: boolean | undefined, possibleCpus: number | undefined, observedBy?: string): number | undefined {
  if (possibleCpus === undefined) return undefined;
  const modern = Math.max(10, 2 * possibleCpus);
  if (preemption === true) return modern;
  const unconditional = hasChangeBy(release, 'defaultPoolUnconditional', observedBy);
  if (unconditional === true) return modern;
  if (unconditional === false && preemption === false) return possibleCpus;
  return undefined;
}

/** How a BPF tool puts a program on a function's return (issue 22). */
export type BpfReturnAttach = (typeof BPF_ATTACH)[number];

/**
 * The instance pool a BPF program on a function's return gets, per release (issue 22; tied to
 * the lab's cells by test/lab-cases/bpf-return-model.test.ts):
 * - `perf-kretprobe` (perf_event_open of a kretprobe PMU, or a tracefs `r:` event a BPF program
 *   attaches to): a kretprobe whose maxactive is 0, so the default pool (defaultPool above).
 * - `kprobe-multi` (BPF_LINK_TYPE_KPROBE_MULTI, built on fprobe): fprobe_init_rethook sizes one
 *   rethook pool for the whole link as functions x 2 x num_possible_cpus() (kprobe_multi never
 *   sets nr_maxactive), until fprobe moved onto the function-graph shadow stack in 6.14
 *   (`fprobeWithoutPool`): from then on there is no pool, `null`.
 * - `fexit` (a BPF trampoline): the trampoline calls the function and runs the program after it
 *   returns, with no instance to take: `null` on every release.
 * `undefined`: the release (or the CPU count a pool needs) cannot be placed.
 */
export function bpfReturnPool(
  how: BpfReturnAttach,
  release: string | undefined,
  opts: { preemption?: boolean | undefined; possibleCpus?: number | undefined; functions?: number },
): number | null | undefined {
  return bpfReturnPoolOf(how, {
    defaultPool: how === 'perf-kretprobe' ? defaultPool(release, opts.preemption, opts.possibleCpus) : undefined,
    fprobeWithoutPool: release === undefined ? undefined : hasChange(release, 'fprobeWithoutPool'),
    possibleCpus: opts.possibleCpus,
    functions: opts.functions ?? 1,
  });
}

/**
 * The same from what is known of the kernel rather than its release: the default pool, whether
 * fprobe exits run without a pool (6.14+), the possible CPUs and the functions on the link. The
 * facts stage (src/facts/capacity.ts, capacity.effective_maxactive) and the lab's model both read
 * this one rule. `undefined` when a needed figure is unknown.
 */
export function bpfReturnPoolOf(
  how: BpfReturnAttach,
  known: { defaultPool: number | undefined; fprobeWithoutPool: boolean | undefined; possibleCpus: number | undefined; functions: number | undefined },
): number | null | undefined {
  if (how === 'fexit') return null;
  if (how === 'perf-kretprobe') return known.defaultPool;
  if (known.fprobeWithoutPool === true) return null;
  if (known.fprobeWithoutPool === undefined || known.possibleCpus === undefined || known.functions === undefined) return undefined;
  return known.functions * 2 * known.possibleCpus;
}
