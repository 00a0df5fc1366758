import { readSmallFile } from '../case/load.js';
import { InputError } from '../errors.js';
import { readInputFile } from '../fsutil.js';
import { parseYaml, validateYaml } from '../yamlfile.js';
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
  let sidecarText: string;
  try {
    sidecarText = await readSmallFile(sidecarFile, 'write-up expectations file');
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
