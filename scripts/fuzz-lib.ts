/**
 * The in-process fuzzer shared by `npm test` (test/hardening/fuzz.test.ts, ≥ 10,000 inputs per
 * family) and `npm run fuzz` (scripts/fuzz.ts, ≥ 10^5 per family within a time budget).
 *
 * Each family mutates real inputs (the shipped cases and rules, the fixture bundles, traces and
 * JSON Lines) with a seeded generator, feeds them to the parser and counts:
 * - crashes: anything thrown that is not an InputError (a bug: users would see "internal error");
 * - hangs: one input taking longer than HANG_MS (the run goes on; vitest's timeout is the
 *   watchdog for a loop that never ends);
 * - disagreements: a fast path accepting what the full parser refuses, or reading it differently.
 */
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { InputError } from '../src/errors.js';
import { mulberry32 } from './gen-trace.js';
import { generateTraceLine, traceLineAgreement } from './trace-lines.js';
import { parseCaseFast, parseCasePositioned } from '../src/case/parse.js';
import { parseYaml, parseYamlFast, type YamlFile } from '../src/yamlfile.js';
import { parseRuleFile } from '../src/rules/parse.js';
import { parseAnswersFile } from '../src/triage/answers-file.js';
import type { QuestionSet } from '../src/triage/questions.js';
import { caseFromSnapshots, type SnapshotFiles } from '../src/evidence/bundle.js';
import { caseSchema } from '../src/case/schema.js';
import { parseTraceLine, scanTraceBytes } from '../src/evidence/trace.js';
import { fastOpInto, fastProbeInto, fullOpBytes, fullProbeBytes, type OpRecord, type ProbeRecord } from '../src/ledger/records.js';

export const HANG_MS = 2000;

/** The seeded generator of scripts/gen-trace.ts. */
export const rng = mulberry32;

/** Tokens where parsers tend to differ or break: number forms, YAML indicators, line ends, bytes. */
const TOKENS = [
  '0b11', '0o17', '0x1F', '1e309', '-1e309', '.inf', '.NaN', '1_000', '012', '+1', '-0', '.5', '5.', '1e3', '9007199254740993',
  '~', 'null', 'Null', 'NULL', 'yes', 'on', 'True', 'FALSE', '&a ', '*a', '!!str ', '!x ', '%YAML 1.1\n---\n', '<<: ', '? ', '- ', ': ',
  '#', '---\n', '...\n', '"', "'", '\\', '\\u0000', '\\x41', '[', ']', '{', '}', ',', '\r', '\r\n', '\n', '\t', ' ', '  ', '\u0000',
  '\u0007', '\u001f', '\u007f', '\u0085', '\u00a0', '\u2028', '\ufeff', '\ud800', 'é', '—', '0-3,8-11', '0-9007199254740993',
  '0-1000000', '99999999999999999999', '[[[[[[[[', '{"a":{"a":{"a":', '00', '-', 'unknown', 'EINVAL', 'kretprobe-case/v1',
];

/** One to three edits of `text`: insert, delete, duplicate, replace a token, swap lines. */
export function mutate(text: string, r: () => number): string {
  let s = text;
  const edits = 1 + Math.floor(r() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(r() * (s.length + 1));
    const op = Math.floor(r() * 6);
    const tok = TOKENS[Math.floor(r() * TOKENS.length)]!;
    if (op === 0) s = s.slice(0, at) + tok + s.slice(at);
    else if (op === 1) s = s.slice(0, at) + s.slice(at + 1 + Math.floor(r() * 8));
    else if (op === 2) {
      const len = Math.floor(r() * 40);
      s = s.slice(0, at) + s.slice(at, at + len) + s.slice(at);
    } else if (op === 3) {
      // Replace the word at `at` by a token.
      const m = /^[^\s:,{}[\]]*/.exec(s.slice(at));
      s = s.slice(0, at) + tok + s.slice(at + (m?.[0].length ?? 0));
    } else if (op === 4) {
      const lines = s.split('\n');
      const i = Math.floor(r() * lines.length);
      const j = Math.floor(r() * lines.length);
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      s = lines.join('\n');
    } else {
      s = s.slice(0, at) + String.fromCharCode(Math.floor(r() * 0x30)) + s.slice(at);
    }
  }
  return s;
}

/** Bytes with a few of them changed: for JSON Lines, where invalid UTF-8 and control bytes matter. */
export function mutateBytes(b: Buffer, r: () => number): Buffer {
  const out = Buffer.from(mutate(b.toString('latin1'), r), 'latin1');
  if (r() < 0.3 && out.length > 0) out[Math.floor(r() * out.length)] = Math.floor(r() * 256);
  return out;
}

export interface FamilyResult {
  family: string;
  inputs: number;
  crashes: number;
  hangs: number;
  disagreements: number;
  /** The first few failures, each reproducible from the seed and input number. */
  examples: string[];
  ms: number;
}

export interface Family {
  name: string;
  seeds: string[];
  /** Run one input; throw for a crash (non-InputError), return a string for a disagreement. */
  run: (text: string) => string | undefined;
  bytes?: boolean;
}

function walk(dir: string, ext: RegExp): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...walk(full, ext));
    else if (ext.test(name)) out.push(full);
  }
  return out;
}

/**
 * Parse through the fast and the positioned path: whatever the fast path accepts, the
 * positioned one accepts too and reads the same. Returns the positioned parse for reuse.
 */
function yamlAgreement(text: string, keep = true): { problem?: string; yaml?: YamlFile } {
  let fast: unknown;
  try {
    fast = parseYamlFast(text, 'case file', 'f');
  } catch (err) {
    if (err instanceof InputError) return {};
    throw err;
  }
  // Nothing to compare and nothing to keep: the caller's own parser takes the positioned path.
  if (fast === undefined && !keep) return {};
  let yaml: YamlFile;
  try {
    yaml = parseYaml(text, 'f', 'case file');
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    return fast === undefined ? {} : { problem: `fast path accepted, positioned parser refused: ${err.message}` };
  }
  if (fast !== undefined && !isDeepStrictEqual(fast, yaml.value)) return { problem: 'fast path and positioned parser read different values', yaml };
  return { yaml };
}

/** The case fast path accepts only cases the positioned path accepts, with the same data. */
function caseAgreement(text: string): string | undefined {
  const { problem, yaml } = yamlAgreement(text);
  if (problem) return problem;
  let fast;
  try {
    fast = parseCaseFast(text, 'f');
  } catch (err) {
    if (err instanceof InputError) return undefined;
    throw err;
  }
  let slow;
  try {
    slow = yaml ? parseCasePositioned(text, 'f', yaml) : undefined;
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    return fast ? `parseCase's fast path accepted a case the positioned path refuses: ${err.message}` : undefined;
  }
  if (fast && !slow) return "parseCase's fast path accepted a case the positioned parser refuses";
  if (fast && slow && !isDeepStrictEqual(fast.data, slow.data)) return 'parseCase and the positioned path built different cases';
  return undefined;
}

const userError = (f: () => unknown): void => {
  try {
    f();
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
  }
};

/** The seven families over the repository at `root`. */
export function families(root: string, questions: QuestionSet, options: { maxSeedLines?: number } = {}): Family[] {
  const read = (f: string) => readFileSync(f, 'utf8');
  const short = (t: string) => options.maxSeedLines === undefined || t.split('\n').length <= options.maxSeedLines;
  const cases = walk(path.join(root, 'cases'), /\.ya?ml$/).map(read).filter(short);
  const ruleFiles = walk(path.join(root, 'rules'), /\.ya?ml$/).filter((f) => !f.includes(`${path.sep}questions${path.sep}`));
  const rules = ruleFiles.map(read);
  const bundleRoot = path.join(root, 'test/fixtures/bundles');
  const bundles = readdirSync(bundleRoot).filter((d) => statSync(path.join(bundleRoot, d)).isDirectory()).sort();
  const snapshot = (dir: string): SnapshotFiles => {
    const files: SnapshotFiles = {};
    for (const f of walk(dir, /./)) files[path.relative(dir, f).split(path.sep).join('/')] = read(f);
    return files;
  };
  const bundleSeeds = bundles.map((b) => JSON.stringify({ start: snapshot(path.join(bundleRoot, b, 'start')), end: snapshot(path.join(bundleRoot, b, 'end')) }));
  const traces = walk(path.join(root, 'test/fixtures'), /trace\.txt$/).map(read);
  const traceSeeds = traces.flatMap((t) => {
    const lines = t.split('\n');
    const out: string[] = [];
    for (let i = 0; i < lines.length; i += 40) out.push(lines.slice(i, i + 40).join('\n'));
    return out.slice(0, 50);
  });
  const jsonl = walk(path.join(root, 'test/fixtures'), /\.jsonl$/).flatMap((f) => read(f).split('\n').filter((l) => l.trim() !== '').slice(0, 200));
  const answers = [
    'probe.registration.result: ok\ncounters.end.nmissed: 1\n',
    'kernel.possible_cpus: 0-3,8-11\nprobe.armed: true\nledger.workload_quiesced: unknown\n',
    'probe.interface: tracefs\nprobe.maxactive.requested: 8\nkernel.possible_cpus: 4\n',
  ];
  return [
    { name: 'cases', seeds: cases, run: caseAgreement },
    {
      name: 'rules',
      seeds: rules,
      run: (text) => {
        const { problem } = yamlAgreement(text, false);
        userError(() => parseRuleFile(text, 'counters/x.yaml', 'rules/counters/x.yaml'));
        return problem;
      },
    },
    { name: 'answers', seeds: answers, run: (text) => { userError(() => parseAnswersFile(text, 'answers.yaml', questions)); return undefined; } },
    {
      name: 'bundle files',
      seeds: bundleSeeds,
      run: (text) => {
        // Mutate the files' texts, not the JSON around them.
        let input: { start: SnapshotFiles; end: SnapshotFiles };
        try {
          input = JSON.parse(text) as typeof input;
        } catch {
          return undefined;
        }
        if (typeof input !== 'object' || input === null || typeof input.start !== 'object' || typeof input.end !== 'object' || !input.start || !input.end) return undefined;
        for (const phase of [input.start, input.end]) for (const [k, v] of Object.entries(phase)) if (typeof v !== 'string') delete phase[k];
        const { case: c } = caseFromSnapshots(input);
        const checked = caseSchema.safeParse(c);
        return checked.success ? undefined : `built an invalid case at ${checked.error.issues[0]?.path.join('.')}: ${checked.error.issues[0]?.message}`;
      },
    },
    {
      name: 'trace text',
      seeds: traceSeeds,
      run: (text) => {
        for (const line of text.split('\n')) parseTraceLine(line, { returnEvent: 'gate', entryEvent: 'gate_entry' });
        const b = Buffer.from(text, 'utf8');
        let start = 0;
        for (let i = 0; i <= b.length; i++) {
          if (i === b.length || b[i] === 10) {
            scanTraceBytes(b, start, i, { returnEvent: 'gate', entryEvent: 'gate_entry' });
            start = i + 1;
          }
        }
        return undefined;
      },
    },
    {
      // Generated lines (task names with spaces, dashes and brackets, stamps over the u64 range),
      // mutated: the ledger's scanner and parseTraceLine must say the same of each.
      name: 'trace lines',
      seeds: Array.from({ length: 2000 }, ((r) => () => generateTraceLine(r).text)(mulberry32(25))),
      run: (text) => {
        for (const line of text.split('\n')) {
          const d = traceLineAgreement(line);
          if (d !== undefined) return d;
        }
        return undefined;
      },
    },
    {
      name: 'probe/ops JSONL',
      seeds: jsonl,
      bytes: true,
      run: (latin1) => jsonlAgreement(Buffer.from(latin1, 'latin1')),
    },
  ];
}

/** The fast flat-JSON path must accept only what the full parser accepts, with the same record. */
export function jsonlAgreement(b: Buffer): string | undefined {
  const op: OpRecord = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 1 };
  if (fastOpInto(op, b, 0, b.length, 1)) {
    const full = fullOpBytes(b, 0, b.length, 1);
    if (!full.ok) return `ops fast path accepted what the full parser refuses (${full.expected})`;
    if (!isDeepStrictEqual({ ...full.value }, { ...op })) return 'ops fast path read a different record';
  } else fullOpBytes(b, 0, b.length, 1);
  const pr: ProbeRecord = { ev: 'entry', tsNs: 0, task: -1, inst: undefined, op: undefined, line: 1 };
  if (fastProbeInto(pr, b, 0, b.length, 1)) {
    const full = fullProbeBytes(b, 0, b.length, 1);
    if (!full.ok) return `probe fast path accepted what the full parser refuses (${full.expected})`;
    if (!isDeepStrictEqual({ ...full.value }, { ...pr })) return 'probe fast path read a different record';
  } else fullProbeBytes(b, 0, b.length, 1);
  return undefined;
}

/** Run `count` mutated inputs of one family (stopping early at `deadline`, a Date.now() value). */
export function runFamily(family: Family, seed: number, count: number, deadline = Infinity): FamilyResult {
  const r = rng(seed);
  const res: FamilyResult = { family: family.name, inputs: 0, crashes: 0, hangs: 0, disagreements: 0, examples: [], ms: 0 };
  const t0 = Date.now();
  for (let i = 0; i < count; i++) {
    if ((i & 255) === 0 && Date.now() > deadline) break;
    const base = family.seeds[Math.floor(r() * family.seeds.length)]!;
    const text = family.bytes ? mutateBytes(Buffer.from(base, 'utf8'), r).toString('latin1') : mutate(base, r);
    const started = Date.now();
    try {
      const d = family.run(text);
      if (d !== undefined) {
        res.disagreements++;
        if (res.examples.length < 5) res.examples.push(`#${i} disagreement: ${d}: ${JSON.stringify(text.slice(0, 300))}`);
        if (process.env.FUZZ_SAVE && res.disagreements <= 20) writeFileSync(path.join(process.env.FUZZ_SAVE, `${family.name.replace(/\W+/g, '-')}-${i}.txt`), text, 'latin1');
      }
    } catch (err) {
      res.crashes++;
      if (res.examples.length < 5) res.examples.push(`#${i} crash: ${(err as Error).stack?.split('\n').slice(0, 3).join(' | ')}: ${JSON.stringify(text.slice(0, 300))}`);
    }
    if (Date.now() - started > HANG_MS) {
      res.hangs++;
      if (res.examples.length < 5) res.examples.push(`#${i} took ${Date.now() - started} ms: ${JSON.stringify(text.slice(0, 300))}`);
    }
    res.inputs++;
  }
  res.ms = Date.now() - t0;
  return res;
}
