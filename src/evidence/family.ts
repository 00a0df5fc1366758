/**
 * How a kallsyms/blacklist name relates to a probe target. `within_kprobe_blacklist()` and the
 * notrace check cut a name at its first `.` (kernel-facts §10), so `foo.isra.0` belongs to `foo`.
 */
export type FamilyRole = 'function' | 'clone' | 'cold';

/** GCC/LLVM suffixes that make a separate copy of a function (each may repeat, e.g. `.constprop.0.isra.0`). */
const SUFFIX = /^(?:\.(?:isra|constprop|part|llvm|lto_priv)\.[0-9]+|\.cold(?:\.[0-9]+)?)+$/;

/** The role of `name` in the family of `target`, or undefined when it is not in it. */
export function familyRole(name: string, target: string): FamilyRole | undefined {
  if (name === target) return 'function';
  if (!name.startsWith(`${target}.`)) return undefined;
  const rest = name.slice(target.length);
  if (!SUFFIX.test(rest)) return undefined;
  // A `.cold` fragment is entered by a jump, not a call: it is not a function of its own.
  return /\.cold(?:\.[0-9]+)?$/.test(rest) ? 'cold' : 'clone';
}

/** The symbol a clone was made from: the name cut at its first `.`. */
export function baseSymbol(name: string): string {
  const dot = name.indexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}
