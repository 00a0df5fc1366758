/**
 * A mistake in something the user gave us: a file, an argument, a terminal that cannot prompt.
 * Rendered as one line, `file:line:col: expected …; got …`, and mapped to exit code 2 by the
 * CLI. Anything else that escapes is a bug in this tool and is reported as such.
 */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly col: number | undefined;
  readonly expected: string;
  readonly got: string | undefined;

  constructor(
    where: { file?: string | undefined; line?: number | undefined; col?: number | undefined },
    expected: string,
    got?: string,
    options?: { cause?: unknown },
  ) {
    super(formatInputError(where, expected, got), options);
    this.file = where.file;
    this.line = where.line;
    this.col = where.col;
    this.expected = expected;
    this.got = got;
  }
}

/** `file:line:col: expected …; got …` with the parts that are known. */
export function formatInputError(
  where: { file?: string | undefined; line?: number | undefined; col?: number | undefined },
  expected: string,
  got?: string,
): string {
  let loc = where.file ?? '';
  if (where.line !== undefined) {
    loc += `${loc ? ':' : ''}${where.line}`;
    if (where.col !== undefined) loc += `:${where.col}`;
  }
  const body = got === undefined ? `expected ${expected}` : `expected ${expected}; got ${got}`;
  return loc ? `${loc}: ${body}` : body;
}

/** Whether `value` nests objects or arrays more than `limit` deep (iteratively: no recursion). */
function nestedDeeperThan(value: object, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  let seen = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    // What is shown is cut to one line anyway: a very wide value need not be walked to the end.
    if (++seen > 10_000) return false;
    for (const x of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) stack.push([x, depth + 1]);
  }
  return false;
}

/** Quote a value found in the input for an error message, shortened so the message stays one line. */
export function shown(value: unknown, max = 60): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value.length > max * 2 ? value.slice(0, max * 2) : value);
  else if (value === undefined) text = 'nothing';
  else if (typeof value !== 'object' || value === null) text = String(value);
  else {
    // Never throws, never recurses past the engine's stack: input can nest 5,000 deep. The depth
    // is checked first, so the words do not depend on how much stack the thread has.
    if (nestedDeeperThan(value, 32)) text = Array.isArray(value) ? 'a list nested too deep to show' : 'a mapping nested too deep to show';
    else {
      try {
        text = JSON.stringify(value) ?? (Array.isArray(value) ? 'a list' : 'a mapping');
      } catch {
        text = Array.isArray(value) ? 'a list' : 'a mapping';
      }
    }
  }
  text = text.replace(/[\r\n]+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A line-oriented parser's complaint about one line it skipped. Parsers return these instead of
 * throwing, so one odd line never costs the rest of a kernel artifact.
 */
export interface LineProblem {
  line: number;
  expected: string;
  got: string;
}
