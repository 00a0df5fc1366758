/**
 * Case fields are named by dotted paths (`counters.end.nmissed`) everywhere: in rules, questions,
 * provenance and answers. These two read and write a plain object by such a path.
 */

/** The value at a dotted path, or undefined when any step is missing or not an object. */
export function getPath(obj: unknown, dotted: string): unknown {
  let cur = obj;
  for (const key of dotted.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** Set a dotted path, creating (or replacing non-object) intermediate objects. */
export function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let node = obj;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) node = next as Record<string, unknown>;
    else {
      const fresh: Record<string, unknown> = {};
      node[key] = fresh;
      node = fresh;
    }
  }
  node[keys[keys.length - 1]!] = value;
}
