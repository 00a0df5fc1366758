import type { AuditInput } from './inputs.js';
import type { Locator, Position } from '../report/sarif.js';
import { caseFacts } from '../facts/facts.js';
import { nodeAt, positionOf, rangeStart } from '../yamlfile.js';

/**
 * Positions in an audited case file, from the positioned YAML the loader keeps (parsed on
 * first use); a derived fact is found at the first case field it is computed from. A claim with `at: "file:line:col"` (from a write-up) points there instead.
 */
export function locator(input: AuditInput, uri: string | undefined): Locator {
  if (input.writeup) return writeupLocator(input, uri);
  const find = (keys: Array<string | number>): Position | undefined => {
    const yaml = input.loaded.yaml;
    const { node, found } = nodeAt(yaml.doc, keys);
    return found && node ? positionOf(yaml.lines, rangeStart(node)) : undefined;
  };
  let inputs: ReadonlyMap<string, readonly string[]> | undefined;
  return {
    uri,
    fact(p) {
      const direct = find(p.split('.'));
      if (direct) return direct;
      inputs ??= caseFacts(input.loaded.data).inputs;
      for (const from of inputs.get(p) ?? []) {
        const at = find(from.split('.'));
        if (at) return at;
      }
      return undefined;
    },
    claim(i) {
      const at = (input.loaded.data.claims?.[i] as { at?: unknown } | undefined)?.at;
      const m = typeof at === 'string' ? /^(.*):(\d+):(\d+)$/.exec(at) : null;
      if (m) return { uri: m[1]!, line: Number(m[2]), col: Number(m[3]) };
      return find(['claims', i]);
    },
  };
}

/** `file:line:col` as a position. */
function parseAt(at: unknown): (Position & { uri: string }) | undefined {
  const m = typeof at === 'string' ? /^(.*):(\d+):(\d+)$/.exec(at) : null;
  return m ? { uri: m[1]!, line: Number(m[2]), col: Number(m[3]) } : undefined;
}

/** Positions in a write-up: the extraction's provenance of each fact, and each claim's `at`. */
function writeupLocator(input: AuditInput, uri: string | undefined): Locator {
  const data = input.loaded.data;
  const provenance = data.provenance ?? {};
  let inputs: ReadonlyMap<string, readonly string[]> | undefined;
  const withUri = (p: Position | undefined) => (p && uri ? { ...p, uri } : p);
  return {
    uri,
    fact(p) {
      const direct = parseAt(provenance[p]);
      if (direct) return withUri(direct);
      inputs ??= caseFacts(data).inputs;
      for (const from of inputs.get(p) ?? []) {
        const at = parseAt(provenance[from]);
        if (at) return withUri(at);
      }
      return undefined;
    },
    claim(i) {
      return withUri(parseAt((data.claims?.[i] as { at?: unknown } | undefined)?.at));
    },
  };
}
