import type { LineProblem } from '../errors.js';
import { numberedLines, problem } from './lines.js';
import { familyRole, type FamilyRole } from './family.js';

/** A `/proc/kallsyms` symbol in the family of the probe target. */
export interface KallsymsSymbol {
  line: number;
  address: string;
  /** nm-style type letter: `t`/`T` text, `d`/`D` data, ... */
  type: string;
  name: string;
  module?: string;
  role: FamilyRole;
}

export interface KallsymsResult {
  /** Text symbols of the family: the function itself, its clones and `.cold` fragments. */
  symbols: KallsymsSymbol[];
  /** `__pfx_` padding symbols of the family: alignment before a function, not functions. */
  padding: KallsymsSymbol[];
  problems: LineProblem[];
}

/**
 * Parse `/proc/kallsyms` (whole, or already filtered) keeping the family of `target`: the symbol,
 * its `.isra.N`, `.constprop.N`, `.part.N` clones and `.cold` fragments. Other well-formed lines
 * are understood and dropped; malformed ones are reported.
 */
export function parseKallsyms(text: string, target: string): KallsymsResult {
  const symbols: KallsymsSymbol[] = [];
  const padding: KallsymsSymbol[] = [];
  const problems: LineProblem[] = [];
  for (const { no, text: line } of numberedLines(text)) {
    if (line.trim() === '') continue;
    const m = /^([0-9a-fA-F]+) ([A-Za-z?]) (\S+)(?:\s+\[([^\]\s]+)\])?\s*$/.exec(line);
    if (!m) {
      problems.push(problem(no, 'ADDRESS TYPE NAME [MODULE]', line));
      continue;
    }
    const type = m[2] ?? '';
    let name = m[3] ?? '';
    const isPadding = name.startsWith('__pfx_');
    if (isPadding) name = name.slice('__pfx_'.length);
    const role = familyRole(name, target);
    if (role === undefined || (type !== 't' && type !== 'T')) continue;
    const sym: KallsymsSymbol = { line: no, address: (m[1] ?? '').toLowerCase(), type, name: m[3] ?? '', role };
    if (m[4] !== undefined) sym.module = m[4];
    (isPadding ? padding : symbols).push(sym);
  }
  return { symbols, padding, problems };
}
