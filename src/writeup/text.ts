import path from 'node:path';
import { InputError } from '../errors.js';
import { decodeText } from '../fsutil.js';

/** What a write-up file is, by its content first and its name second. */
export type WriteupKind = 'markdown' | 'text' | 'mail';

/** Larger write-ups are refused before reading: a 300-line postmortem is ~20 KB. */
export const MAX_WRITEUP_BYTES = 8 * 1024 * 1024;

/** File names `audit` reads as write-ups when it walks a directory. */
export const WRITEUP_EXTENSIONS = ['.md', '.markdown', '.txt', '.eml', '.mbox'] as const;

/** A write-up's expectations file sits next to it: `postmortem.md` -> `postmortem.md.expect`. */
export const SIDECAR_SUFFIX = '.expect';

export function isWriteupName(file: string): boolean {
  return (WRITEUP_EXTENSIONS as readonly string[]).includes(path.extname(file).toLowerCase());
}

/**
 * Bytes of a write-up to text: binary (a NUL) and invalid UTF-8 are input errors at their
 * location (the project's one text decoder, src/fsutil.ts), then normalizeWriteup.
 */
export function decodeWriteup(buf: Buffer, file: string): string {
  if (buf.length > MAX_WRITEUP_BYTES) throw new InputError({ file }, `a write-up of at most ${MAX_WRITEUP_BYTES / (1024 * 1024)} MiB`, `${buf.length} bytes`);
  return normalizeWriteup(decodeText(buf, file, 'write-up'));
}

/** A BOM is dropped and CRLF / CR line ends become LF, so lines and columns are those an editor shows. */
export function normalizeWriteup(text: string): string {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

const HEADER = /^[A-Za-z][A-Za-z0-9-]*: /;
const MAIL_HEADER = /^(?:From|To|Cc|Subject|Date|Message-I[Dd]|In-Reply-To|References|Received|Return-Path|MIME-Version|Content-Type):/;

/** Mail when it opens with an mbox `From ` line or a block of RFC 5322 headers; then Markdown by its marks or name; else text. */
export function sniffKind(text: string, file: string): WriteupKind {
  const head = text.slice(0, 4096).split('\n');
  const first = head.find((l) => l.trim() !== '') ?? '';
  if (/^From \S+ /.test(first)) return 'mail';
  let headers = 0;
  let mailish = false;
  for (const l of head) {
    if (l.trim() === '') break;
    if (HEADER.test(l)) { headers++; if (MAIL_HEADER.test(l)) mailish = true; }
    else if (!/^\s/.test(l)) { headers = 0; break; }
  }
  if (headers >= 2 && mailish) return 'mail';
  const ext = path.extname(file).toLowerCase();
  if (ext === '.eml' || ext === '.mbox') return 'mail';
  if (text.startsWith('---\n') || /^(?:#{1,6} (?!(?:cat|echo|uname|bpftool|bpftrace|perf|dmesg|journalctl|sudo)\b)\S|```|~~~)/m.test(text.slice(0, 65536))) return 'markdown';
  if (ext === '.md' || ext === '.markdown') return 'markdown';
  return 'text';
}
