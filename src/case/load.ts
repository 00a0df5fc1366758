import { promises as fs } from 'node:fs';
import { walkFiles } from '../walk.js';
import { InputError } from '../errors.js';
import { openProblem, readInputFileSync, writeFileAtomic } from '../fsutil.js';
import { MAX_YAML_BYTES, parseYaml } from '../yamlfile.js';
import { readSmallFile } from './fast.js';
import { parseCase, type LoadedCase } from './parse.js';

/** Read one case file (refusing oversized files before reading them) and parse it. */
export async function loadCase(file: string): Promise<LoadedCase> {
  return parseCase(await readSmallFile(file, 'case file'), file);
}

export { readSmallFile };

/**
 * Load many cases in order. Each file is read synchronously, as the audit command reads its
 * inputs (src/audit/inputs.ts): these are small files, and each step of an asynchronous read
 * (open, stat, read, close) is a round trip through libuv's thread pool that cost more than the
 * read and the parse together (reading ahead a few files did not win it back on 2 cores).
 */
export async function* loadCases(files: string[]): AsyncGenerator<LoadedCase> {
  for (const file of files) yield parseCase(readInputFileSync(file, 'case file', MAX_YAML_BYTES), file);
}

/**
 * Expand the paths given on the command line: files as they are, directories into their
 * `*.yaml` / `*.yml` files (recursively, sorted). A missing path or a directory without cases
 * is an InputError.
 */
export async function expandCasePaths(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) {
    let stat;
    try {
      stat = await fs.stat(p);
    } catch {
      throw new InputError({ file: p }, 'an existing case file or directory', 'no such file or directory');
    }
    if (!stat.isDirectory()) {
      out.push(p);
      continue;
    }
    const found = await walkYaml(p);
    if (found.length === 0) throw new InputError({ file: p }, 'a directory holding case files (*.yaml)', 'none');
    out.push(...found);
  }
  return out;
}

async function walkYaml(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const found of walkFiles(dir, { accept: (name) => /\.ya?ml$/.test(name) })) {
    if (typeof found !== 'string') throw new InputError({ file: found.file }, 'a case file, or a symbolic link to one', openProblem(found.error));
    out.push(found);
  }
  return out;
}

/**
 * Set fields of a case file (dotted paths), keeping its comments and layout, validate the result
 * and replace the file atomically (the first replacement keeps the old file as `.bak`).
 * A new file is created from `initial` when it does not exist yet.
 */
export async function updateCaseFile(
  file: string,
  updates: Record<string, unknown>,
  options: { initial?: string; backup?: boolean } = {},
): Promise<LoadedCase> {
  let text: string;
  try {
    text = await readSmallFile(file, 'case file');
  } catch (err) {
    if (options.initial === undefined || !(err instanceof InputError) || err.got !== 'no such file') throw err;
    text = options.initial;
  }
  const next = applyCaseUpdates(text, file, updates);
  await writeFileAtomic(file, next.yaml.text, { backup: options.backup ?? true, inPlace: true, force: true, maxBytes: MAX_YAML_BYTES, what: 'case file' });
  return next;
}

/** Pure half of updateCaseFile: the new text, validated. */
export function applyCaseUpdates(text: string, file: string, updates: Record<string, unknown>): LoadedCase {
  const { doc } = parseYaml(text, file, 'case file');
  for (const [dotted, value] of Object.entries(updates)) {
    const keys = dotted.split('.');
    if (value === undefined) doc.deleteIn(keys);
    else doc.setIn(keys, value);
  }
  return parseCase(doc.toString({ lineWidth: 0 }), file);
}
