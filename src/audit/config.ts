import path from 'node:path';
import { z } from 'zod';
import { VERDICTS } from '../case/ids.js';
import { readInputFile } from '../fsutil.js';
import { nodeAt, parseYaml, positionOf, rangeStart, validateYaml } from '../yamlfile.js';
import type { Waiver } from '../case/waivers.js';

/**
 * `.kretprobe-triage.yaml`: a project's audit settings (found by config-find.ts). Every key is
 * optional; an option given on the command line wins over the file's.
 */
const RULE_ID = /^[a-z0-9-]+\/[a-z0-9-]+$/;

export const configSchema = z
  .object({
    rules: z.string().min(1).optional().describe('rules directory, relative to this file'),
    exclude: z.array(z.string().min(1)).optional().describe('globs of paths to leave out, as --exclude'),
    fail_on: z.enum(VERDICTS).optional().describe('as --fail-on'),
    format: z.enum(['text', 'json', 'markdown', 'sarif', 'junit']).optional().describe('as --format'),
    waivers: z
      .array(z.object({ rule: z.string().regex(RULE_ID, 'a rule id (section/name)'), reason: z.string().min(1) }).strict())
      .optional()
      .describe('findings accepted in every audited case, each with its reason'),
  })
  .strict();

export interface AuditConfig {
  file: string;
  rules?: string | undefined;
  exclude?: string[] | undefined;
  failOn?: (typeof VERDICTS)[number] | undefined;
  format?: z.infer<typeof configSchema>['format'];
  waivers: Waiver[];
}

/** Parse and validate a config file's text. Pure: `file` names positions and anchors `rules`. */
export function parseConfig(text: string, file: string): AuditConfig {
  const yaml = parseYaml(text, file, 'configuration file');
  const data = validateYaml(configSchema, yaml);
  const waivers = (data.waivers ?? []).map((w, i): Waiver => {
    const { node, found } = nodeAt(yaml.doc, ['waivers', i, 'rule']);
    return { ...w, ...(found ? { at: { file, ...positionOf(yaml.lines, rangeStart(node)) } } : {}) };
  });
  return {
    file,
    rules: data.rules === undefined ? undefined : path.resolve(path.dirname(file), data.rules),
    exclude: data.exclude,
    failOn: data.fail_on,
    format: data.format,
    waivers,
  };
}

export async function loadConfig(file: string): Promise<AuditConfig> {
  return parseConfig(await readInputFile(file, 'configuration file'), file);
}
