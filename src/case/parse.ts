import { InputError } from '../errors.js';
import { nodeAt, parseYaml, positionedYaml, parseYamlFast, positionOf, rangeStart, validateYaml, type YamlFile } from '../yamlfile.js';
import { caseSchema, type Case } from './schema.js';

export const CASE_FORMAT = 'kretprobe-case/v1';

/** A validated case and the YAML it came from (for positions and comment-preserving edits). */
export interface LoadedCase {
  file: string;
  data: Case;
  text: string;
  /** The positioned YAML document, parsed on first use. */
  readonly yaml: YamlFile;
}

/**
 * Parse and validate case text. Pure: `file` is only used to name positions in errors.
 * A well-formed case takes the fast path; anything the fast path does not accept is parsed
 * again with positions, so every error still names its line and column.
 */
export function parseCase(text: string, file: string): LoadedCase {
  return parseCaseFast(text, file) ?? parseCasePositioned(text, file);
}

/** The fast path alone: a valid case, or undefined for the positioned path to decide (and explain). */
export function parseCaseFast(text: string, file: string): LoadedCase | undefined {
  const fast = parseYamlFast(text, 'case file', file);
  if (fast !== undefined && fast !== null && typeof fast === 'object' && (fast as Record<string, unknown>).format === CASE_FORMAT) {
    const result = caseSchema.safeParse(fast);
    if (result.success) return lazyYaml({ file, data: result.data, text });
  }
  return undefined;
}

function lazyYaml(base: { file: string; data: Case; text: string }): LoadedCase {
  let yaml: YamlFile | undefined;
  return {
    ...base,
    get yaml() {
      yaml ??= parseYaml(base.text, base.file, 'case file');
      return yaml;
    },
  };
}

/** Source text of a value as it stands in the file, on one line and short. */
function shownSource(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 60 ? `${one.slice(0, 59)}…` : one;
}

/** The positioned path alone (what parseCase falls back to): exported so tests can compare the two. */
export function parseCasePositioned(text: string, file: string, parsed?: YamlFile): LoadedCase {
  const yaml = parsed ?? parseYaml(text, file, 'case file');
  const value = yaml.value;
  if (value === null || value === undefined) {
    throw new InputError({ file, line: 1, col: 1 }, `a case file (a mapping starting with "format: ${CASE_FORMAT}")`, 'an empty document');
  }
  if (!positionedYaml().isMap(yaml.doc.contents) || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError({ file, ...positionOf(yaml.lines, rangeStart(nodeAt(yaml.doc, []).node)) }, `a case file (a mapping starting with "format: ${CASE_FORMAT}")`, 'a YAML value that is not a mapping');
  }
  const format = (value as Record<string, unknown>).format;
  if (format !== CASE_FORMAT) {
    const { node, found } = nodeAt(yaml.doc, ['format']);
    throw new InputError(
      { file, ...positionOf(yaml.lines, rangeStart(node)) },
      `format: ${CASE_FORMAT}`,
      found ? `format: ${node?.range ? shownSource(yaml.text.slice(node.range[0], node.range[1])) : String(format)}` : 'no format field',
    );
  }
  return { file, data: validateYaml(caseSchema, yaml), text, yaml };
}
