import { readInputFile } from '../fsutil.js';
import { MAX_YAML_BYTES, parseYaml, parseYamlFast, type YamlFile } from '../yamlfile.js';
import { CASE_SHAPE } from './defs.js';
import type { Case } from './schema.js';
import { conformTo } from './shape.js';

/**
 * The fast path of reading a case, without zod: js-yaml, then the case schema as plain data
 * (defs.ts, shape.ts). It answers only for a case it can accept; anything else goes to parse.ts, which
 * loads zod and the positioned parser and says what is wrong and where.
 */

export const CASE_FORMAT = 'kretprobe-case/v1';

/** A validated case and the YAML it came from (for positions and comment-preserving edits). */
export interface LoadedCase {
  file: string;
  data: Case;
  text: string;
  /** The positioned YAML document, parsed on first use. */
  readonly yaml: YamlFile;
}

/** Read a text file that must be small (src/fsutil.ts readInputFile: regular files only, the size limit checked while reading). */
export async function readSmallFile(file: string, what: string): Promise<string> {
  return readInputFile(file, what, MAX_YAML_BYTES);
}

/** The js-yaml reading of case text when it is a mapping that states the case format; else undefined. */
export function fastCaseValue(text: string, file: string): Record<string, unknown> | undefined {
  const fast = parseYamlFast(text, 'case file', file);
  if (fast !== undefined && fast !== null && typeof fast === 'object' && (fast as Record<string, unknown>).format === CASE_FORMAT) return fast as Record<string, unknown>;
  return undefined;
}

/** A loaded case whose positioned YAML is parsed only if something asks for it. */
export function lazyYaml(base: { file: string; data: Case; text: string }): LoadedCase {
  let yaml: YamlFile | undefined;
  return {
    ...base,
    get yaml() {
      yaml ??= parseYaml(base.text, base.file, 'case file');
      return yaml;
    },
  };
}

/** A certainly valid case as zod would return it; undefined means: ask zod (invalid, or not decidable here). */
export function checkCase(value: unknown): Case | undefined {
  return CASE_SHAPE ? (conformTo(CASE_SHAPE, value) as Case | undefined) : undefined;
}

/** A certainly valid case, read without zod; undefined: let parse.ts decide (and explain). */
export function parseCaseQuick(text: string, file: string): LoadedCase | undefined {
  const value = fastCaseValue(text, file);
  const data = value === undefined ? undefined : checkCase(value);
  return data === undefined ? undefined : lazyYaml({ file, data, text });
}
