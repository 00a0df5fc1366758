import type { LineProblem } from '../errors.js';
import { shown } from '../errors.js';

/** One line of an artifact with its 1-based number, trailing CR removed. */
export interface NumberedLine {
  no: number;
  text: string;
}

/**
 * Split artifact text into numbered lines. A final newline does not make an extra empty line,
 * so line numbers match what `sed -n Np` and an editor show.
 */
export function numberedLines(text: string): NumberedLine[] {
  const parts = text.split('\n');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts.map((t, i) => ({ no: i + 1, text: t.endsWith('\r') ? t.slice(0, -1) : t }));
}

/**
 * The shape of the one-line files (`uname -r`, `/proc/version`, cpu `possible`): the first
 * non-blank line that `accept` understands is the value, every other non-blank line is a problem.
 */
export function parseOneLine<T>(text: string, expected: string, accept: (line: string) => T | undefined): { value?: T; line?: number; problems: LineProblem[] } {
  const out: { value?: T; line?: number; problems: LineProblem[] } = { problems: [] };
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const value = out.value === undefined ? accept(line) : undefined;
    if (value === undefined) {
      out.problems.push(problem(no, out.value === undefined ? expected : 'one line only', line));
      continue;
    }
    out.value = value;
    out.line = no;
  }
  return out;
}

/** A problem for a line the parser skipped. */
export function problem(line: number, expected: string, text: string): LineProblem {
  // Parsers offered a block that is not theirs (a write-up's pasted output is tried by several)
  // make a problem of every line. The quoted text is made here, as plain data: a getter made only
  // when someone read it cost more than quoting (V8 builds an object literal with accessor
  // closures through a slow path, ~0.4 us each), and such objects kept the young strings they
  // point to alive through scavenges (~190 KB promoted per scavenge while reading pasted blocks).
  return { line, expected, got: shown(text) };
}

/**
 * Parse an unsigned integer the way `kstrtouint(s, 0, ...)` does: `0x`/`0X` hex, a leading `0`
 * octal, otherwise decimal. Undefined for anything else (signs, junk, out of safe range).
 */
export function parseBase0(text: string): number | undefined {
  let digits: string;
  let radix: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) {
    digits = text.slice(2);
    radix = 16;
  } else if (/^0[0-7]*$/.test(text)) {
    digits = text.length > 1 ? text.slice(1) : '0';
    radix = 8;
  } else if (/^[1-9][0-9]*$/.test(text)) {
    digits = text;
    radix = 10;
  } else {
    return undefined;
  }
  const value = parseInt(digits, radix);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A decimal counter as the kernel prints it (`%lu`); undefined past 2^53 rather than rounded. */
export function parseCounter(text: string): number | undefined {
  if (!/^[0-9]+$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}
