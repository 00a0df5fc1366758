import { promises as fs } from 'node:fs';
import path from 'node:path';

/** The name of a project's audit settings file (parsed and validated by config.ts). */
export const CONFIG_NAME = '.kretprobe-triage.yaml';

/**
 * The nearest `.kretprobe-triage.yaml` at or above `cwd`, like ESLint's or Checkov's
 * configuration lookup; undefined when there is none. Kept apart from the parser so that a run
 * without a config file does not load zod.
 */
export async function findConfig(cwd: string): Promise<string | undefined> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, CONFIG_NAME);
    if (await fs.stat(candidate).then((s) => s.isFile(), () => false)) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}
