import { promises as fs } from 'node:fs';
import path from 'node:path';
import { loadCases, readSmallFile } from '../case/load.js';
import { parseCase, type LoadedCase } from '../case/parse.js';
import { InputError } from '../errors.js';
import { parseYaml, validateYaml } from '../yamlfile.js';
import { extractWriteup, type Extraction } from './extract.js';
import { sidecarSchema, type Sidecar } from './judge.js';
import type { Lexicon } from './lexicon.js';
import { decodeWriteup, isWriteupName, MAX_WRITEUP_BYTES, SIDECAR_SUFFIX } from './text.js';

/** One thing `audit` was given: a case file or a write-up. */
export type AuditEntry = { kind: 'case' | 'writeup'; file: string };
export type AuditInput = { kind: 'case'; loaded: LoadedCase } | { kind: 'writeup'; extraction: Extraction; sidecar?: Sidecar };

const CASE_NAME = /\.ya?ml$/;

/** A path named on the command line with another extension is a case only if it reads like one. */
async function sniffEntry(file: string): Promise<AuditEntry['kind']> {
  if (CASE_NAME.test(file)) return 'case';
  if (isWriteupName(file)) return 'writeup';
  let head = '';
  try {
    const h = await fs.open(file, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await h.read(buf, 0, 4096, 0);
      head = buf.subarray(0, bytesRead).toString('utf8');
    } finally {
      await h.close();
    }
  } catch {
    return 'case'; // the case reader reports the missing or unreadable file
  }
  return /^format:\s*['"]?kretprobe-case\/v1/m.test(head) ? 'case' : 'writeup';
}

async function walk(dir: string, out: AuditEntry[]): Promise<void> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) await walk(full, out);
    else if (!e.isFile() || e.name.endsWith('.bak') || e.name.endsWith(SIDECAR_SUFFIX)) continue;
    else if (CASE_NAME.test(e.name)) out.push({ kind: 'case', file: full });
    else if (isWriteupName(e.name)) out.push({ kind: 'writeup', file: full });
  }
}

/** Expand command-line paths into cases and write-ups: directories recursively (sorted), files sniffed. */
export async function expandAuditPaths(paths: string[]): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  for (const p of paths) {
    const stat = await fs.stat(p).catch(() => undefined);
    if (stat === undefined) throw new InputError({ file: p }, 'an existing case file or directory', 'no such file or directory');
    if (!stat.isDirectory()) {
      out.push({ kind: await sniffEntry(p), file: p });
      continue;
    }
    const before = out.length;
    await walk(p, out);
    if (out.length === before) throw new InputError({ file: p }, 'a directory holding case files (*.yaml)', 'none');
  }
  return out;
}

/** Read one write-up file (size checked before reading) and extract it; its sidecar too when present. */
export async function loadWriteup(file: string, lex: Lexicon): Promise<{ extraction: Extraction; sidecar?: Sidecar }> {
  let handle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError({ file }, 'an existing write-up', code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory' : 'no such file');
  }
  let buf: Buffer;
  try {
    const stat = await handle.stat();
    if (stat.isDirectory()) throw new InputError({ file }, 'a write-up', 'a directory');
    if (stat.size > MAX_WRITEUP_BYTES) throw new InputError({ file }, `a write-up of at most ${MAX_WRITEUP_BYTES / (1024 * 1024)} MiB`, `${stat.size} bytes`);
    buf = await handle.readFile();
  } finally {
    await handle.close();
  }
  const extraction = extractWriteup(decodeWriteup(buf, file), file, lex);
  const sidecarFile = `${file}${SIDECAR_SUFFIX}`;
  let text: string;
  try {
    text = await readSmallFile(sidecarFile, 'write-up expectations file');
  } catch (err) {
    if (err instanceof InputError && err.got === 'no such file') return { extraction };
    throw err;
  }
  return { extraction, sidecar: validateYaml(sidecarSchema, parseYaml(text, sidecarFile, 'write-up expectations file')) };
}

/** Load audit inputs in order. Case-only audits keep the case reader's read-ahead. */
export async function* loadAuditInputs(entries: AuditEntry[], lex: () => Promise<Lexicon>): AsyncGenerator<AuditInput> {
  if (entries.every((e) => e.kind === 'case')) {
    for await (const loaded of loadCases(entries.map((e) => e.file))) yield { kind: 'case', loaded };
    return;
  }
  const lexicon = await lex();
  for (const e of entries) {
    if (e.kind === 'case') yield { kind: 'case', loaded: parseCase(await readSmallFile(e.file, 'case file'), e.file) };
    else yield { kind: 'writeup', ...(await loadWriteup(e.file, lexicon)) };
  }
}
