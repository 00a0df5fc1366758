/**
 * A live lab case against its shipped reference case (`cases/lab/<series>/<bundle>.yaml`), field
 * by field (issue 22, "cases that cannot drift"). Only the fields below may differ, each because
 * it varies by nature between two runs of the same scenario on the same kernel; every other field,
 * present in either case, must be equal. Pure.
 */

/** A field that varies by nature, as a dotted path pattern (`*` one segment, `**` any tail). */
export interface VaryingField {
  path: string;
  why: string;
}

export const VARYING_FIELDS: readonly VaryingField[] = [
  { path: 'source', why: 'names the day of the run' },
  // A Debian point release of the same series (a new ABI number) is the same scenario on the
  // same series; the lab records whichever release the set-up cached.
  { path: 'title', why: 'names the booted release' },
  { path: 'kernel.release', why: 'the release the set-up cached (Debian point releases move)' },
  { path: 'kernel.version', why: 'the upstream version of that release' },
  // CLOCK_MONOTONIC instants of the guest: boot time differs run to run.
  { path: '**_at_ns', why: 'a CLOCK_MONOTONIC instant in the guest' },
  { path: 'latency.*_ns', why: 'durations measured under TCG on a loaded host (their count and kind are compared)' },
];

function matches(pattern: string, path: string): boolean {
  const re = new RegExp(
    '^' +
      pattern
        .split('.')
        .map((seg) => (seg === '**' ? '.+' : seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\u0000').replace(/\*/g, '[^.]*').replace(/\u0000/g, '.*')))
        .join('\\.') +
      '$',
  );
  return re.test(path);
}

/** Whether a dotted path is one of the declared varying fields (or of `extra`, a scenario's own). */
export function isVarying(path: string, extra: readonly VaryingField[] = []): boolean {
  return [...VARYING_FIELDS, ...extra].some((f) => matches(f.path, path));
}

type Leaf = string | number | boolean | null;

/** Every leaf of a YAML/JSON value by dotted path (array items by index; `[]` and `{}` are leaves). */
export function flatten(value: unknown, prefix = '', out = new Map<string, Leaf | '[]' | '{}'>()): Map<string, Leaf | '[]' | '{}'> {
  if (Array.isArray(value)) {
    if (value.length === 0) out.set(prefix, '[]');
    value.forEach((v, i) => flatten(v, prefix ? `${prefix}.${i}` : String(i), out));
  } else if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) out.set(prefix, '{}');
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else {
    out.set(prefix, value === undefined ? null : (value as Leaf));
  }
  return out;
}

/**
 * Every field where `live` differs from `shipped`, except the declared varying ones (and `extra`,
 * those a scenario's expectation declares for its kernel, scenarios.ts); empty when none.
 */
export function caseDrift(live: unknown, shipped: unknown, extra: readonly VaryingField[] = []): string[] {
  const a = flatten(live);
  const b = flatten(shipped);
  const out: string[] = [];
  const show = (v: unknown): string => (v === undefined ? '(absent)' : JSON.stringify(v));
  for (const key of [...new Set([...b.keys(), ...a.keys()])].sort()) {
    if (isVarying(key, extra)) continue;
    const x = a.get(key);
    const y = b.get(key);
    if (x !== y) out.push(`${key}: shipped ${show(y)}; live ${show(x)}`);
  }
  return out;
}
