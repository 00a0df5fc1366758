import { createHash } from 'node:crypto';
import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a verdict was computed with, so that it can be reproduced later. */
export interface Versions {
  tool_version: string;
  rules_version: string;
}

export function packageRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
}

/** The package version (package.json). */
export async function toolVersion(): Promise<string> {
  const pkg = JSON.parse(await fs.readFile(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * A content hash of a rules directory: every YAML file under it (rules, questions, policy),
 * by relative path and bytes, in path order. Two trees with the same rules get the same
 * version wherever they live; a changed word in one rule changes it.
 */
export async function rulesVersion(dir: string): Promise<string> {
  // Synchronous reads: some seventy small files on every audit's start-up, where a thread-pool
  // round trip per file (open, stat, read, close) costs several times the read itself.
  const files: string[] = [];
  const walk = (rel: string): void => {
    const entries = readdirSync(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      // A *.yaml that is not a regular file (a FIFO, a socket) is named in the hash without being
      // read: the rules it stands for are not the snapshot's, so loadRules reads and refuses it.
      else if (/\.ya?ml$/.test(e.name)) files.push(e.isFile() ? r : `${r}\0not-a-regular-file`);
    }
  };
  walk('');
  files.sort();
  const hash = createHash('sha256');
  for (const rel of files) {
    hash.update(`${rel}\0`);
    if (!rel.endsWith('\0not-a-regular-file')) hash.update(readFileSync(path.join(dir, rel)));
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex').slice(0, 16)}`;
}

export async function versions(rulesDir: string): Promise<Versions> {
  const [tool_version, rules_version] = await Promise.all([toolVersion(), rulesVersion(rulesDir)]);
  return { tool_version, rules_version };
}

/** The versions of this tool with its shipped rules (for commands that take no --rules). */
export async function shippedVersions(): Promise<Versions> {
  // The shipped rules sit at the package root (rules/load.ts defaultRulesDir says the same):
  // importing that module to ask would load the rule parser and zod (~60 ms) for a path.
  return versions(path.join(packageRoot(), 'rules'));
}
