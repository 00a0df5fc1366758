import { InputError } from '../errors.js';
import { nodeAt, parseYaml, positionedYaml, positionOf, rangeStart, validateYaml, type YamlFile } from '../yamlfile.js';
import { CASE_FORMAT, checkCase, fastCaseValue, lazyYaml, type LoadedCase } from './fast.js';
import { caseSchema } from './schema.js';

export { CASE_FORMAT, type LoadedCase };

/**
 * Parse and validate case text. Pure: `file` is only used to name positions in errors.
 * A well-formed case takes the fast path; anything the fast path does not accept is parsed
 * again with positions, so every error still names its line and column.
 */
export function parseCase(text: string, file: string): LoadedCase {
  return parseCaseFast(text, file) ?? parseCasePositioned(text, file);
}

/**
 * The fast path alone: a valid case, or undefined for the positioned path to decide (and explain).
 * The schema as plain data answers first (fast.ts, without zod); what it leaves open, zod decides.
 */
export function parseCaseFast(text: string, file: string): LoadedCase | undefined {
  const fast = fastCaseValue(text, file);
  if (fast === undefined) return undefined;
  const data = checkCase(fast);
  if (data !== undefined) return lazyYaml({ file, data, text });
  const result = caseSchema.safeParse(fast);
  return result.success ? lazyYaml({ file, data: result.data, text }) : undefined;
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
