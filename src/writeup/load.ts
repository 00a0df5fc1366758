import { statSync } from 'node:fs';
import { InputError } from '../errors.js';
import { readInputFile, readInputFileSync } from '../fsutil.js';
import { MAX_YAML_BYTES, parseYaml, validateYaml } from '../yamlfile.js';
import { extractWriteup, type Extraction } from './extract.js';
import { sidecarSchema, type Sidecar } from './judge.js';
import type { Lexicon } from './lexicon.js';
import { MAX_WRITEUP_BYTES, normalizeWriteup, SIDECAR_SUFFIX } from './text.js';

/** A write-up's text as an editor shows it: read through the project's one input reader (regular files only, size counted while reading, UTF-8 without NUL). */
export async function readWriteup(file: string): Promise<string> {
  return normalizeWriteup(await readInputFile(file, 'write-up', MAX_WRITEUP_BYTES));
}

/** Extract a write-up's text, and read its expectations sidecar (`NAME.expect`) when there is one. */
export async function writeupOf(text: string, file: string, lex: Lexicon): Promise<{ extraction: Extraction; sidecar?: Sidecar }> {
  const extraction = extractWriteup(normalizeWriteup(text), file, lex);
  if (file === '<stdin>') return { extraction };
  const sidecarFile = `${file}${SIDECAR_SUFFIX}`;
  // Most write-ups have no sidecar: ask first, without an exception (a failed open that throws
  // cost more than extracting the write-up, and an audit asks for every write-up of a batch).
  if (statSync(sidecarFile, { throwIfNoEntry: false }) === undefined) return { extraction };
  let sidecarText: string;
  try {
    sidecarText = readInputFileSync(sidecarFile, 'write-up expectations file', MAX_YAML_BYTES);
  } catch (err) {
    if (err instanceof InputError && /no such file/.test(err.got ?? '')) return { extraction };
    throw err;
  }
  return { extraction, sidecar: validateYaml(sidecarSchema, parseYaml(sidecarText, sidecarFile, 'write-up expectations file')) };
}

/** Read one write-up file and extract it; its sidecar too when present. */
export async function loadWriteup(file: string, lex: Lexicon): Promise<{ extraction: Extraction; sidecar?: Sidecar }> {
  return writeupOf(await readWriteup(file), file, lex);
}
