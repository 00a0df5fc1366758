/**
 * The one parser of CPU lists and CPU counts. Every place that reads one — a case's
 * `kernel.possible_cpus`, a triage answer, a bundle's `cpu_possible`, `capacity --possible-cpus`
 * — calls it, so the bounds below hold everywhere.
 *
 * Bounds: the kernel's NR_CPUS is at most 8192 (CONFIG_MAXSMP on x86-64; other architectures
 * are lower), so a CPU id above MAX_CPU_ID or a count above MAX_CPUS is a mistake, not a
 * machine; and a list longer than MAX_CPULIST_CHARS is not what sysfs prints (8192 CPUs listed
 * one by one take about 40 KB). Both bounds keep parsing linear and memory small.
 */
export const MAX_CPU_ID = 65535;
export const MAX_CPUS = MAX_CPU_ID + 1;
export const MAX_CPULIST_CHARS = 64 * 1024;

export type CpuParse = { ok: true; count: number } | { ok: false; expected: string; got: string };

const LIST_EXPECTED = 'a cpulist such as 0-3,8-11';

function cut(text: string): string {
  const one = text.replace(/[\r\n]+/g, ' ');
  return JSON.stringify(one.length > 40 ? `${one.slice(0, 39)}…` : one);
}

/**
 * Count the CPUs in a kernel cpulist (`/sys/devices/system/cpu/possible`): comma-separated
 * ranges such as `0-3,8-11`. The count is the number of CPUs in the mask (8 there), not the
 * highest id plus one — `num_possible_cpus()` is a population count.
 */
export function parseCpuList(text: string): CpuParse {
  if (text.length > MAX_CPULIST_CHARS) return { ok: false, expected: `${LIST_EXPECTED} of at most ${MAX_CPULIST_CHARS} characters`, got: `${text.length} characters` };
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, expected: LIST_EXPECTED, got: 'nothing' };
  const seen = new Uint8Array(MAX_CPUS);
  let count = 0;
  for (const part of trimmed.split(',')) {
    const m = /^(\d{1,6})(?:-(\d{1,6}))?$/.exec(part.trim());
    if (!m) {
      if (/^\d+(-\d+)?$/.test(part.trim())) return { ok: false, expected: `${LIST_EXPECTED} with CPU ids at most ${MAX_CPU_ID} (NR_CPUS is at most 8192)`, got: cut(part.trim()) };
      return { ok: false, expected: LIST_EXPECTED, got: cut(text.trim()) };
    }
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi > MAX_CPU_ID) return { ok: false, expected: `${LIST_EXPECTED} with CPU ids at most ${MAX_CPU_ID} (NR_CPUS is at most 8192)`, got: cut(part.trim()) };
    if (hi < lo) return { ok: false, expected: `${LIST_EXPECTED} (ranges low-high)`, got: cut(part.trim()) };
    for (let cpu = lo; cpu <= hi; cpu++) {
      if (seen[cpu] === 0) {
        seen[cpu] = 1;
        count++;
      }
    }
  }
  return { ok: true, count };
}

/** A CPU count (`8`) or a cpulist (`0-3,8-11`), as a count of CPUs, at least 1 and at most MAX_CPUS. */
export function parseCpuCount(text: string): CpuParse {
  const t = text.trim();
  if (/^\d+$/.test(t)) {
    const n = Number(t);
    if (t.length > 6 || n > MAX_CPUS) return { ok: false, expected: `a CPU count of at most ${MAX_CPUS} (NR_CPUS is at most 8192) or ${LIST_EXPECTED}`, got: cut(t) };
    if (n < 1) return { ok: false, expected: `a CPU count of at least 1 or ${LIST_EXPECTED}`, got: cut(t) };
    return { ok: true, count: n };
  }
  return parseCpuList(text);
}

/** The count of a cpulist, or undefined when the text is not one (parseCpuList says why). */
export function countCpuList(text: string): number | undefined {
  const r = parseCpuList(text);
  return r.ok ? r.count : undefined;
}
