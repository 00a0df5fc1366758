import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Apart from load.ts, so that a command can name the rules directory without loading the rule
// parser (and zod with it): an audit reads the parsed rules from the build's snapshot.

/** The rules shipped with the package (works from src/ under vitest and from dist/src/). */
export function defaultRulesDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up = here.includes(`${path.sep}dist${path.sep}`) ? '../../../rules' : '../../rules';
  return path.resolve(here, up);
}
