/**
 * Count the CPUs in a kernel cpulist (`/sys/devices/system/cpu/possible`): comma-separated
 * ranges such as `0-3,8-11`. The count is the number of CPUs in the mask (8 there), not the
 * highest id plus one — `num_possible_cpus()` is a population count.
 * Returns undefined when the text is not a cpulist.
 */
export function countCpuList(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let count = 0;
  const seen = new Set<number>();
  for (const part of trimmed.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return undefined;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 1_000_000) return undefined;
    for (let cpu = lo; cpu <= hi; cpu++) {
      if (!seen.has(cpu)) {
        seen.add(cpu);
        count++;
      }
    }
  }
  return count;
}
