import type { AuditInput } from './inputs.js';
import type { Locator, Position } from '../report/sarif.js';
import { nodeAt, positionOf, rangeStart } from '../yamlfile.js';

/**
 * Positions in an audited case file, from the positioned YAML the loader keeps (parsed on
 * first use). A claim with `at: "file:line:col"` (from a write-up) points there instead.
 */
export function locator(input: AuditInput, uri: string | undefined): Locator {
  const find = (keys: Array<string | number>): Position | undefined => {
    const yaml = input.loaded.yaml;
    const { node, found } = nodeAt(yaml.doc, keys);
    return found && node ? positionOf(yaml.lines, rangeStart(node)) : undefined;
  };
  return {
    uri,
    fact: (p) => find(p.split('.')),
    claim(i) {
      const at = (input.loaded.data.claims?.[i] as { at?: unknown } | undefined)?.at;
      const m = typeof at === 'string' ? /^(.*):(\d+):(\d+)$/.exec(at) : null;
      if (m) return { uri: m[1]!, line: Number(m[2]), col: Number(m[3]) };
      return find(['claims', i]);
    },
  };
}
