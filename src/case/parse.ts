import { isMap } from 'yaml';
import { InputError } from '../errors.js';
import { nodeAt, parseYaml, positionOf, rangeStart, validateYaml, type YamlFile } from '../yamlfile.js';
import { caseSchema, type Case } from './schema.js';

export const CASE_FORMAT = 'kretprobe-case/v1';

/** A validated case and the YAML it came from (for positions and comment-preserving edits). */
export interface LoadedCase {
  file: string;
  data: Case;
  yaml: YamlFile;
}

/** Parse and validate case text. Pure: `file` is only used to name positions in errors. */
export function parseCase(text: string, file: string): LoadedCase {
  const yaml = parseYaml(text, file, 'case file');
  const value = yaml.value;
  if (value === null || value === undefined) {
    throw new InputError({ file, line: 1, col: 1 }, `a case file (a mapping starting with "format: ${CASE_FORMAT}")`, 'an empty document');
  }
  if (!isMap(yaml.doc.contents) || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError({ file, ...positionOf(yaml.lines, rangeStart(nodeAt(yaml.doc, []).node)) }, `a case file (a mapping starting with "format: ${CASE_FORMAT}")`, 'a YAML value that is not a mapping');
  }
  const format = (value as Record<string, unknown>).format;
  if (format !== CASE_FORMAT) {
    const { node, found } = nodeAt(yaml.doc, ['format']);
    throw new InputError(
      { file, ...positionOf(yaml.lines, rangeStart(node)) },
      `format: ${CASE_FORMAT}`,
      found ? `format: ${String(format)}` : 'no format field',
    );
  }
  return { file, data: validateYaml(caseSchema, yaml), yaml };
}
