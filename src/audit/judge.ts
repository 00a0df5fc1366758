import { InputError } from '../errors.js';
import { evaluateCase, type Rules } from '../evaluate.js';
import { compileRules, type CaseVerdict } from '../verdict/verdict.js';
import { applyWaivers, checkWaivers, type Waiver } from '../case/waivers.js';
import { lazyYaml } from '../case/fast.js';
import { nodeAt, positionOf, rangeStart } from '../yamlfile.js';
import { judgeInput, writeupLoaded } from '../writeup/audit.js';
import { loadRulesSnapshot, type SnapshotRuleSet } from './rules-snapshot.js';
import { defaultRulesDir } from '../rules/dir.js';
import { versions as readVersions, type Versions } from '../version.js';
import type { AuditInput } from './inputs.js';

/**
 * What `audit` does with one loaded input, wherever it runs (the main thread, or a worker of
 * src/audit/pool.ts): the waivers it names are checked against the rule set, the case is judged,
 * and the waivers (the config file's, then its own) are applied.
 */

/** One input's outcome: its verdict and the seconds judging took, or why it was skipped. */
export type Judged = { input: AuditInput; v: CaseVerdict; time: number } | { skipped: InputError; file: string };

/** The rules an audit judges with, as the main thread and every worker load them. */
export interface AuditRules {
  rulesDir: string;
  versions: Versions;
  set: SnapshotRuleSet;
  rules: Rules;
  /** Every rule and claim id: what a waiver may name. */
  known: ReadonlySet<string>;
}

/** `rulesOption`: --rules as given (undefined: the shipped rules). */
export async function loadAuditRules(rulesOption: string | undefined): Promise<AuditRules> {
  const rulesDir = rulesOption ?? defaultRulesDir();
  const versions = await readVersions(rulesDir);
  const set = await loadRulesSnapshot(rulesDir, undefined, versions.rules_version);
  return { rulesDir, versions, set, rules: compileRules(set), known: new Set([...set.rules.map((r) => r.spec.id), ...set.claims.map((c) => c.spec.id)]) };
}

/** Judge one loaded input (or pass on the error that kept it from loading). */
export async function judgeLoaded(input: AuditInput | InputError, rules: AuditRules, configWaivers: readonly Waiver[]): Promise<Judged> {
  if (input instanceof InputError) return { skipped: input, file: input.file ?? '-' };
  const locate = (i: number) => {
    const yaml = input.loaded.yaml;
    const { node, found } = nodeAt(yaml.doc, ['accepted', i, 'rule']);
    return found ? positionOf(yaml.lines, rangeStart(node)) : undefined;
  };
  const badWaiver = checkWaivers(input.waivers, rules.known, input.file, locate);
  if (badWaiver) return { skipped: badWaiver, file: input.file };
  // process.hrtime, not performance.now: the perf_hooks module is not loaded for a one-case audit.
  const started = process.hrtime.bigint();
  const v = applyWaivers(await judgeInput(input, rules.rules, evaluateCase), configWaivers.length ? [...configWaivers, ...input.waivers] : input.waivers);
  return { input, v, time: Number(process.hrtime.bigint() - started) / 1e9 };
}

/**
 * A Judged as it crosses between threads: plain data (structured clone keeps no class, getter
 * or function). The input keeps its text, so the receiving side parses its positioned YAML only
 * if a report asks for positions (SARIF), as the sending side would have.
 */
export type WireJudged =
  | { input: Omit<AuditInput, 'loaded'> & { text: string; data: AuditInput['loaded']['data'] }; v: CaseVerdict; time: number }
  | { skipped: { file?: string | undefined; line?: number | undefined; col?: number | undefined; expected: string; got?: string | undefined }; file: string };

export function toWire(j: Judged): WireJudged {
  if ('skipped' in j) {
    const e = j.skipped;
    return { skipped: { file: e.file, line: e.line, col: e.col, expected: e.expected, got: e.got }, file: j.file };
  }
  const { loaded, ...rest } = j.input;
  return { input: { ...rest, text: loaded.text, data: loaded.data }, v: j.v, time: j.time };
}

export function fromWire(w: WireJudged): Judged {
  if ('skipped' in w) {
    const e = w.skipped;
    return { skipped: new InputError({ file: e.file, line: e.line, col: e.col }, e.expected, e.got), file: w.file };
  }
  const { text, data, ...rest } = w.input;
  const loaded = rest.writeup ? writeupLoaded(rest.file, data, text) : lazyYaml({ file: rest.file, data, text });
  return { input: { ...rest, loaded }, v: w.v, time: w.time };
}
