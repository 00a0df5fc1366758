import { countCpuList } from '../kernel/cpus.js';
import { CHANGES, defaultPool, hasChangeBy, parseRelease, releasePostdates, type ChangeName } from '../kernel/history.js';
import { num, str, type Derivation } from './derive.js';

/** A fact of the release from the kernel model: true, false, or unknown where it cannot place it. */
function releaseHas(name: string, change: ChangeName, section: string, description: string): Derivation {
  return {
    name, type: 'boolean', description, basis: `kernel-history.md ${section}, ${CHANGES[change].commit}`,
    // kernel.version is listed so that a release the model cannot place names what would place it;
    // kernel.observed_by, because a kernel seen running before the change cannot have it.
    inputs: ['kernel.upstream_release', 'kernel.version', 'kernel.observed_by'],
    derive: (i) => hasChangeBy(str(i, 'kernel.upstream_release'), change, str(i, 'kernel.observed_by')),
  };
}

/** What the kernel is: possible CPUs, and what its release says about counters and pools. */
export const KERNEL: readonly Derivation[] = [
  {
    name: 'kernel.possible_cpu_count', type: 'number', basis: 'kernel-facts.md §11',
    description: 'possible CPUs as a count (a cpulist is a population count: "0-3,8-11" is 8)',
    inputs: ['kernel.possible_cpus'],
    derive: (i) => {
      const pc = i['kernel.possible_cpus'];
      return typeof pc === 'number' ? pc : typeof pc === 'string' ? countCpuList(pc) : undefined;
    },
  },
  {
    name: 'kernel.upstream_release', type: 'string', basis: 'kernel-history.md §0, §6 (stable point releases)',
    description: 'the release the kernel model places: uname -r when it pins an upstream point release, else the upstream version a distribution names (kernel.version)',
    inputs: ['kernel.release', 'kernel.version'],
    derive: (i) => {
      const release = str(i, 'kernel.release');
      // 6.12.95+deb12-amd64 pins 6.12.95; 5.10.0-32-amd64 names an ABI, and only the version says which 5.10.y.
      if (release !== undefined && parseRelease(release)?.patch !== undefined) return release;
      return str(i, 'kernel.version') ?? release;
    },
  },
  releaseHas('kernel.profile_sums_pool_misses', 'profileSumsPoolMisses', '§0',
    "kprobe_profile's miss column of a return event includes pool misses (5.17, stable 5.4.174/5.10.94/5.15.17/5.16.3); unknown for a release the model cannot place"),
  releaseHas('kernel.bpf_link_reports_missed', 'bpfLinkMissed', '§3', 'a kprobe perf link or kprobe_multi link reports missed (6.7 and later)'),
  releaseHas('kernel.fprobe_without_pool', 'fprobeWithoutPool', '§4', 'fprobe exits run on the function-graph shadow stack, with no instance pool (6.14 and later)'),
  {
    name: 'capacity.default_maxactive', type: 'number', basis: `kernel-history.md §2, ${CHANGES.defaultPoolUnconditional.commit}`,
    description: 'the pool a nonpositive maxactive gets on this kernel: max(10, 2 x possible CPUs) from 6.2 (6.1.3, 6.0.17) or with CONFIG_PREEMPTION, the CPU count before that without it',
    inputs: ['kernel.upstream_release', 'kernel.version', 'kernel.preemption', 'kernel.possible_cpu_count', 'kernel.observed_by'],
    derive: (i) => defaultPool(str(i, 'kernel.upstream_release'), i['kernel.preemption'] as boolean | undefined, num(i, 'kernel.possible_cpu_count'), str(i, 'kernel.observed_by')),
  },
  {
    name: 'kernel.release_postdates_observation', type: 'boolean', basis: 'kernel-history.md §0 (each change with its commit and the date no kernel can carry it before)',
    description: 'the release places a change that no kernel seen running by kernel.observed_by can have: the release and the date contradict each other (false without a date)',
    inputs: ['kernel.upstream_release', 'kernel.version', 'kernel.observed_by'],
    derive: (i) => {
      // No date, no contradiction: the fact is about two stated facts disagreeing, so a case
      // without a date is consistent with every release (and no completion needs one).
      const by = str(i, 'kernel.observed_by');
      if (by === undefined) return false;
      const release = str(i, 'kernel.upstream_release');
      if (release === undefined) return undefined;
      return releasePostdates(release, by) !== undefined;
    },
  },
];
