import { parseRelease } from '../kernel/history.js';
import { str, type Derivation } from './derive.js';

/** The symbol family the probe does or does not cover. */
export const COVERAGE: readonly Derivation[] = [
  {
    name: 'coverage.clone_count', type: 'number', basis: 'Establish the probe’s actual scope',
    description: 'compiler clones of the target found in kallsyms',
    inputs: ['coverage.clones'],
    derive: (i) => (Array.isArray(i['coverage.clones']) ? (i['coverage.clones'] as string[]).length : undefined),
  },
  {
    name: 'coverage.target_is_fragment', type: 'boolean', basis: 'kernel-facts.md §10',
    description: 'the target is a .cold fragment (entered by a jump, not a call)',
    inputs: ['probe.target'],
    derive: (i) => (str(i, 'probe.target') === undefined ? undefined : /\.cold(\.\d+)?$/.test(str(i, 'probe.target')!)),
  },
  {
    name: 'coverage.target_removed', type: 'boolean', basis: 'Establish the probe’s actual scope; kernel-facts.md (register_kprobe: ENOENT for a symbol that does not exist)',
    description: "the write-up says the target was removed (or renamed) in a release this kernel is at or past (coverage.removed_in), so there is no such symbol to probe; false when no removal is reported, which bounds nothing (as an unreported experiment does not); unknown while the kernel's release is",
    inputs: ['coverage.removed_in', 'kernel.upstream_release', 'kernel.version'],
    derive: (i) => targetRemoved(str(i, 'coverage.removed_in'), str(i, 'kernel.upstream_release')),
  },
];

/**
 * Whether a kernel is at or past the release a function was removed in: series first; within the
 * removal's series only a stated point release decides (a vendor ABI number does not say one, and
 * a removal is a mainline change, so "5.10" means 5.10.0 on).
 */
export function targetRemoved(removedIn: string | undefined, release: string | undefined): boolean | undefined {
  if (removedIn === undefined) return false;
  const gone = parseRelease(removedIn);
  const k = release === undefined ? undefined : parseRelease(release);
  if (gone === undefined || k === undefined) return undefined;
  if (k.major !== gone.major) return k.major > gone.major;
  if (k.minor !== gone.minor) return k.minor > gone.minor;
  if (gone.patch === undefined || gone.patch === 0) return true;
  return k.patch === undefined ? undefined : k.patch >= gone.patch;
}
