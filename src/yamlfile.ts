import { createRequire } from 'node:module';
import jsYaml from 'js-yaml';
import type { Document, LineCounter, Node } from 'yaml';
import type { z } from 'zod';
import { InputError, shown } from './errors.js';
import { MAX_INPUT_BYTES, utf8Bytes } from './fsutil.js';

/**
 * Larger YAML files are refused before parsing: cases and rules are small, a 50 MB one is a
 * mistake. In bytes of UTF-8, on the read side (readInputFile) and the write side (a case built
 * or updated goes through parseYaml/parseYamlFast before it is written) alike.
 */
export const MAX_YAML_BYTES = MAX_INPUT_BYTES;

/**
 * The positioned parser (the `yaml` package, ~30 ms to load) is loaded the first time it is
 * needed: a valid case on the js-yaml fast path never needs it, so auditing one case does not
 * pay for it. Synchronous (its CommonJS build through require) so parseYaml stays synchronous.
 */
let yamlLib: typeof import('yaml') | undefined;
export function positionedYaml(): typeof import('yaml') {
  yamlLib ??= createRequire(import.meta.url)('yaml') as typeof import('yaml');
  return yamlLib;
}

function checkSize(text: string, file: string, what: string): void {
  const bytes = utf8Bytes(text, MAX_YAML_BYTES);
  if (bytes > MAX_YAML_BYTES) throw new InputError({ file }, `a ${what} of at most ${MAX_YAML_BYTES / 1024} KiB`, `${bytes} bytes`);
}

export interface YamlFile {
  file: string;
  text: string;
  doc: Document.Parsed;
  lines: LineCounter;
  value: unknown;
}

/** Position of a byte offset as 1-based line and column. */
export function positionOf(lines: LineCounter, offset: number): { line: number; col: number } {
  const p = lines.linePos(offset);
  return { line: p.line, col: p.col };
}

/**
 * Parse YAML text into a document that keeps positions, refusing what YAML allows but a case or
 * rule must not have: duplicate keys, several documents, alias expansion beyond a small budget
 * (the "billion laughs" bomb), files over MAX_YAML_BYTES.
 */
export function parseYaml(text: string, file: string, what: string): YamlFile {
  checkSize(text, file, what);
  const { LineCounter, parseDocument, visit, isCollection, isMap } = positionedYaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false, strict: true });
  const problem = doc.errors[0];
  if (problem) {
    const at = positionOf(lines, problem.pos[0]);
    const message = problem.message.split('\n')[0]!.replace(/\s+at line \d+, column \d+.*$/, '');
    throw new InputError({ file, ...at }, `valid YAML`, message);
  }
  // A key that is a list or a map has no meaning in a case, rule or answers file (and would be
  // stringified with a Node warning): refused where it stands.
  let collectionKey: Node | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (isCollection(pair.key)) {
        collectionKey = pair.key;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (collectionKey) {
    throw new InputError({ file, ...positionOf(lines, rangeStart(collectionKey)) }, 'a plain key (a name)', `a ${isMap(collectionKey) ? 'mapping' : 'list'} used as a key`);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 50 });
  } catch (err) {
    const unresolved = err instanceof ReferenceError && /unresolved alias/i.test(err.message) ? /alias[^:]*: (.*)$/i.exec(err.message.split('\n')[0]!)?.[1] : undefined;
    if (unresolved !== undefined) {
      const m = new RegExp(`\\*${unresolved.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).exec(text);
      const at = m ? positionOf(lines, m.index) : { line: 1, col: 1 };
      throw new InputError({ file, ...at }, `an alias to an anchor defined before it (&${unresolved})`, `*${unresolved} with no such anchor`, { cause: err });
    }
    if (err instanceof ReferenceError) {
      const first = /[&*][\w-]+/.exec(text);
      const at = first ? positionOf(lines, first.index) : { line: 1, col: 1 };
      throw new InputError({ file, ...at }, 'YAML whose aliases expand to a small document', 'an alias bomb (aliases expanding past 50 uses)', { cause: err });
    }
    throw new InputError({ file }, 'valid YAML', (err as Error).message, { cause: err });
  }
  return { file, text, doc, lines, value };
}

/**
 * js-yaml told to resolve plain scalars exactly as the `yaml` library's YAML 1.2 core schema
 * does (the same patterns, the same conversions): js-yaml's own core schema also reads `0b11`,
 * `1_000` and other forms the positioned parser keeps as strings.
 */
const INT = /^(?:0o[0-7]+|[-+]?[0-9]+|0x[0-9a-fA-F]+)$/;
const FLOAT = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+|[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*))$/;
const type = (tag: string, resolve: (s: string) => boolean, construct: (s: string) => unknown) =>
  // One type per tag: js-yaml keeps only the last type registered for a tag.
  new jsYaml.Type(`tag:yaml.org,2002:${tag}`, { kind: 'scalar', resolve: (s: string | null) => resolve(s ?? ''), construct: (s: string | null) => construct(s ?? '') });
const SAME_AS_YAML_CORE = jsYaml.FAILSAFE_SCHEMA.extend({
  implicit: [
    type('null', (s) => s === '' || s === '~' || s === 'null' || s === 'Null' || s === 'NULL', () => null),
    type('bool', (s) => s === 'true' || s === 'True' || s === 'TRUE' || s === 'false' || s === 'False' || s === 'FALSE', (s) => s[0] === 't' || s[0] === 'T'),
    type('int', (s) => INT.test(s), (s) => (s[1] === 'o' ? parseInt(s.substring(2), 8) : s[1] === 'x' ? parseInt(s.substring(2), 16) : parseInt(s, 10))),
    type('float', (s) => FLOAT.test(s), (s) => {
      const tail = s.slice(-3).toLowerCase();
      if (tail === 'nan') return NaN;
      if (tail === 'inf') return s[0] === '-' ? -Infinity : Infinity;
      return parseFloat(s);
    }),
  ],
});

/**
 * Text the fast path leaves to the positioned parser, because there the two parsers differ (or
 * the positioned one refuses): anchors, aliases and tags (the alias budget), directives (`%YAML
 * 1.1` changes the schema), explicit `?` keys and flow collections as keys (refused there; a
 * collection right after `{` or `,` may be one),
 * flow collections that go on past the end of their line (js-yaml is lenient with their
 * indentation), quoted strings that go on past the end of their line (the same), keys that are
 * null (js-yaml names them "null", the yaml library ""), a comment glued to a quote, a bracket or
 * a comma, carriage returns not followed by a newline, control characters, and the byte order mark.
 */
// One pattern each, and each tested only when the text holds a character the pattern cannot
// match without (its trigger, found with indexOf): an alternation of them all is twice as slow as
// testing them in turn, and most case files hold no trigger of most of them. Two patterns are
// hand-written scans instead (their trigger, `'` or `:`, is in nearly every case): quotedToLineEnd
// and nullKey. test/case/fastpath-declines.test.ts keeps the patterns as they were, one list, and
// checks that fastPathDeclines declines exactly what that list matches.
const GATED_DECLINES: ReadonlyArray<readonly [triggers: string, pattern: RegExp]> = [
  ['&*!', /(^|[\s[{,:-])[&*!][^\s]/m],
  ['%', /^%/m],
  ['?', /(?:^|[\s\-[{,])\?(?:\s|$)/m],
  ['{[', /[{,][ \t]*[{[]/m],
  ['}]', /[}\]][ \t]*:(?:[ \t]|$)/m],
  ['#', /["'\]}[{,]#/m],
  ['\r', /\r(?!\n)/m],
  ['', /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufeff\u2028\u2029\ud800-\udfff]/m],
];

/** A line terminator as a multiline `^`/`$` sees one. */
const isLineEnd = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
/** What `\s` matches in a JavaScript pattern. */
const isSpace = (c: number) =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
const isBlank = (c: number) => c === 32 || c === 9;

/**
 * A single-quoted scalar that starts a value (at a line start, or after `:`, `-`, `,`, `[` or `{`
 * and blanks) and is not closed on its line: `/(?:^|[:\-,[{][ \t]+)'(?:[^'\n]|'')*$/m`.
 * Internal, exported for its test.
 */
export function quotedToLineEnd(text: string): boolean {
  for (let q = text.indexOf("'"); q >= 0; q = text.indexOf("'", q + 1)) {
    let starts = q === 0 || isLineEnd(text.charCodeAt(q - 1));
    if (!starts) {
      let j = q - 1;
      while (j >= 0 && isBlank(text.charCodeAt(j))) j--;
      const c = j >= 0 ? text.charCodeAt(j) : -1;
      // : - , [ {
      starts = j < q - 1 && (c === 58 || c === 45 || c === 44 || c === 91 || c === 123);
    }
    if (!starts) continue;
    // The rest of the line, up to any line terminator, holds only doubled quotes.
    for (let i = q + 1; ; i++) {
      if (i >= text.length || isLineEnd(text.charCodeAt(i))) return true;
      if (text.charCodeAt(i) === 39) {
        if (text.charCodeAt(i + 1) !== 39) break;
        i++;
      }
    }
  }
  return false;
}

/** The char before index `i` lets a pattern's `(?:^|[\s{,\-[])` match there. */
function nullKeyBoundary(text: string, i: number): boolean {
  if (i === 0) return true;
  const c = text.charCodeAt(i - 1);
  return isSpace(c) || c === 123 || c === 44 || c === 45 || c === 91; // { , - [
}

/**
 * A key that is empty or null (`: x`, `~: x`, `null: x`): `/(?:^|[\s{,\-[])(?:~|[Nn]ull|NULL)?[ \t]*:(?:[ \t,\]}]|$)/m`.
 * Internal, exported for its test.
 */
export function nullKey(text: string): boolean {
  for (let c = text.indexOf(':'); c >= 0; c = text.indexOf(':', c + 1)) {
    if (c + 1 < text.length) {
      const n = text.charCodeAt(c + 1);
      if (!(isBlank(n) || n === 44 || n === 93 || n === 125 || isLineEnd(n))) continue; // , ] }
    }
    // No null word: the char before the colon (a blank before it is one too: `[ \t]*` can leave it out).
    if (nullKeyBoundary(text, c)) return true;
    if (text.charCodeAt(c - 1) === 126 && nullKeyBoundary(text, c - 1)) return true; // ~
    if (c >= 4) {
      const w = text.slice(c - 4, c);
      if ((w === 'null' || w === 'Null' || w === 'NULL') && nullKeyBoundary(text, c - 4)) return true;
    }
  }
  return false;
}

/** True when the fast path leaves `text` to the positioned parser (see above); internal, exported for its test. */
export function fastPathDeclines(text: string): boolean {
  for (const [triggers, pattern] of GATED_DECLINES) {
    let present = triggers === '';
    for (let k = 0; !present && k < triggers.length; k++) present = text.includes(triggers[k]!);
    if (present && pattern.test(text)) return true;
  }
  return (text.includes("'") && quotedToLineEnd(text)) || nullKey(text);
}

/**
 * Some line ends inside a double-quoted string (escapes followed) or with more flow brackets
 * (`{`, `[`) open than closed. A `#` after a blank (or at the start of a line) outside a string
 * starts a comment, so brackets after it do not count: `{ a: 1 #}` stays open. Rough on purpose:
 * a false alarm costs only time.
 */
function goesOnPastItsLine(text: string): boolean {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      if (quoted || depth > 0) return true;
      depth = 0;
    } else if (!quoted && c === 35 && (i === 0 || text.charCodeAt(i - 1) === 32 || text.charCodeAt(i - 1) === 9 || text.charCodeAt(i - 1) === 10)) {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end - 1;
    } else if (quoted) {
      if (c === 92) i++;
      else if (c === 34) quoted = false;
    } else if (c === 34) quoted = true;
    else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) depth--;
  }
  return quoted || depth > 0;
}

/**
 * The happy path for files read in bulk: js-yaml parses a well-formed case about ten times
 * faster than building a positioned document. It returns undefined for anything it is not sure
 * about — a parse error, several documents, or the text fastPathDeclines declines — and the caller then
 * takes the positioned path, which reports errors with line and column. Whatever it returns,
 * the positioned path returns too for the same text (test/hardening/fastpath.test.ts compares
 * them on mutated inputs).
 */
export function parseYamlFast(text: string, what: string, file: string): unknown {
  checkSize(text, file, what);
  if (fastPathDeclines(text) || goesOnPastItsLine(text)) return undefined;
  try {
    return jsYaml.load(text, { schema: SAME_AS_YAML_CORE, json: false });
  } catch {
    return undefined;
  }
}

/** The node at a path, or the deepest existing ancestor (a missing key is reported at its map). */
export function nodeAt(doc: Document.Parsed, path: ReadonlyArray<PropertyKey>): { node: Node | undefined; found: boolean } {
  const { isNode } = positionedYaml();
  let current: unknown = doc.contents;
  let last: Node | undefined = isNode(current) ? current : undefined;
  for (const key of path) {
    if (!isNode(current)) return { node: last, found: false };
    const next = (current as unknown as { get?: (k: unknown, keep: boolean) => unknown }).get?.(key, true);
    if (next === undefined) return { node: last, found: false };
    current = next;
    if (isNode(current)) last = current;
  }
  return { node: last, found: true };
}

/** The key node of a map entry (so "unknown field" errors point at the key, not the value). */
export function keyNodeAt(doc: Document.Parsed, path: ReadonlyArray<PropertyKey>, key: string): Node | undefined {
  const { isMap, isPair, isScalar } = positionedYaml();
  const { node } = nodeAt(doc, path);
  if (!isMap(node)) return undefined;
  for (const pair of node.items) {
    if (isPair(pair) && isScalar(pair.key) && pair.key.value === key) return pair.key;
  }
  return undefined;
}

export function rangeStart(node: Node | undefined): number {
  return node?.range?.[0] ?? 0;
}

/** Validate a parsed YAML value against a zod schema; the first problem becomes a positioned InputError. */
export function validateYaml<S extends z.ZodType>(schema: S, yaml: YamlFile): z.infer<S> {
  const result = schema.safeParse(yaml.value);
  if (result.success) return result.data;
  const issue = pickIssue(result.error.issues.flatMap((i) => resolveUnion(i, [])), yaml);
  throw issueToError(schema, yaml, issue);
}

type Issue = z.core.$ZodIssue;

/**
 * A failed union (a rule condition: all / any / not / a leaf) as the issues of the branch the
 * input was meant to be: the one whose shape fits (no unknown keys and no missing field at its
 * root), then the one that got deepest. So `operator: equalz` is reported at the operator with
 * the operators it may be, not as "expected one of four shapes" at the enclosing `all:`.
 * Paths come back absolute. A union no branch fits stays one issue.
 */
function resolveUnion(issue: Issue, prefix: PropertyKey[]): Issue[] {
  const at = [...prefix, ...issue.path];
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [{ ...issue, path: at } as Issue];
  let best: { issues: Issue[]; depth: number } | undefined;
  for (const branch of issue.errors) {
    const issues = branch.flatMap((i) => resolveUnion(i, at));
    const misfit = issues.some((i) =>
      (i.path.length === at.length && (i.code === 'unrecognized_keys' || i.code === 'invalid_type')) ||
      (i.path.length === at.length + 1 && i.code === 'invalid_type' && /received undefined/.test(i.message)));
    if (misfit) continue;
    const depth = Math.max(...issues.map((i) => i.path.length));
    if (!best || depth > best.depth || (depth === best.depth && issues.length < best.issues.length)) best = { issues, depth };
  }
  return best ? best.issues : [{ ...issue, path: at } as Issue];
}

function pickIssue(issues: Issue[], yaml: YamlFile): Issue {
  // Report the problem that comes first in the file, as a reader scans it.
  let best = issues[0]!;
  let bestPos = Infinity;
  for (const issue of issues) {
    const pos = issue.code === 'unrecognized_keys'
      ? rangeStart(keyNodeAt(yaml.doc, issue.path, String(issue.keys[0])))
      : rangeStart(nodeAt(yaml.doc, issue.path).node);
    if (pos < bestPos) {
      best = issue;
      bestPos = pos;
    }
  }
  return best;
}

function issueToError(schema: z.ZodType, yaml: YamlFile, issue: Issue): InputError {
  const where = (node: Node | undefined) => ({ file: yaml.file, ...positionOf(yaml.lines, rangeStart(node)) });
  const dotted = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const key = String(issue.keys[0]);
    const parent = schemaAt(schema, issue.path);
    const known = parent ? objectKeys(parent) : [];
    const inside = dotted ? ` of ${dotted}` : '';
    return new InputError(where(keyNodeAt(yaml.doc, issue.path, key) ?? nodeAt(yaml.doc, issue.path).node),
      `a field${inside} (${known.join(', ')})`, `unknown field ${shown(key)}`);
  }
  const { node, found } = nodeAt(yaml.doc, issue.path);
  const leaf = schemaAt(schema, issue.path);
  const expected = leaf ? describeExpected(leaf) : issue.message;
  const label = dotted ? `${dotted}: ` : '';
  if (!found) return new InputError(where(node), `${label}${expected}`, 'nothing (the field is missing)');
  const got = node && node.range ? yaml.text.slice(node.range[0], node.range[1]).trim() : shown(undefined);
  // A refinement or a pattern says in its own words what it wants ("a kebab-case id").
  const refinement = issue.code === 'custom' || issue.code === 'invalid_format' ? ` (${issue.message})` : '';
  return new InputError(where(node), `${label}${expected}${refinement}`, got.length > 60 ? `${got.slice(0, 59)}…` : got || 'an empty value');
}

// --- reading zod 4 schema definitions, to say in words what a field expects ---------------------

interface Def { type: string; [k: string]: unknown }
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;

function unwrap(s: z.ZodType): z.ZodType {
  let cur = s;
  for (;;) {
    const def = defOf(cur);
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'readonly') cur = def.innerType as z.ZodType;
    else if (def.type === 'lazy') cur = (def.getter as () => z.ZodType)();
    else return cur;
  }
}

/** The part of `schema` at `path` (through optional, nullable and other wrappers on the way), as declared there. */
export function schemaAt(schema: z.ZodType, path: ReadonlyArray<PropertyKey>): z.ZodType | undefined {
  let cur: z.ZodType | undefined = schema;
  for (const key of path) {
    if (!cur) return undefined;
    cur = step(unwrap(cur), key);
  }
  return cur;
}

function step(s: z.ZodType, key: PropertyKey): z.ZodType | undefined {
  const def = defOf(s);
  switch (def.type) {
    case 'object':
      return (def.shape as Record<string, z.ZodType>)[String(key)];
    case 'array':
      return def.element as z.ZodType;
    case 'record':
      return def.valueType as z.ZodType;
    case 'union':
      for (const option of def.options as z.ZodType[]) {
        const found = step(unwrap(option), key);
        if (found) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

function objectKeys(s: z.ZodType): string[] {
  const def = defOf(unwrap(s));
  return def.type === 'object' ? Object.keys(def.shape as object) : [];
}

/** "a whole number >= 0 or unknown", "one of module | tracefs | ... or unknown", ... */
export function describeExpected(s: z.ZodType): string {
  const inner = unwrap(s);
  const def = defOf(inner);
  switch (def.type) {
    case 'union': {
      const options = (def.options as z.ZodType[]).map(unwrap);
      if (options.length > 1 && options.every((o) => defOf(o).type === 'object')) {
        return `a mapping of one of these forms: ${options.map((o) => `{${objectKeys(o).join(', ')}}`).join(', ')}`;
      }
      const parts = options.map(describeExpected);
      return [...new Set(parts)].join(' or ');
    }
    case 'lazy':
      return describeExpected((def.getter as () => z.ZodType)());
    case 'literal':
      return (def.values as unknown[]).map((v) => String(v)).join(' | ');
    case 'enum':
      return `one of ${Object.values(def.entries as Record<string, string>).join(' | ')}`;
    case 'number': {
      const checks = ((def.checks ?? []) as Array<{ _zod: { def: { check: string; value?: number; inclusive?: boolean; format?: string } } }>).map((c) => c._zod.def);
      const isInt = checks.some((c) => c.check === 'number_format' && c.format?.includes('int'));
      const min = checks.find((c) => c.check === 'greater_than');
      const base = isInt ? 'a whole number' : 'a number';
      return min ? `${base} >= ${min.value}` : base;
    }
    case 'int':
      return 'a whole number';
    case 'boolean':
      return 'true or false';
    case 'string':
      return 'a string';
    case 'array':
      return `a list of ${describeExpected(def.element as z.ZodType).replace(/^an? /, '')}s`;
    case 'object':
      return 'a mapping';
    case 'record':
      return 'a mapping of strings';
    default:
      return def.type;
  }
}
