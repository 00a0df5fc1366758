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
import { errorToWire, inputToWire, type WireError, type WireInput } from './wire.js';

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

export type { WireError, WireInput };

/** A Judged as it crosses between threads. */
export type WireJudged = { input: WireInput; v: CaseVerdict; time: number } | { skipped: WireError; file: string };

export function toWire(j: Judged): WireJudged {
  if ('skipped' in j) return { skipped: errorToWire(j.skipped), file: j.file };
  return { input: inputToWire(j.input), v: j.v, time: j.time };
}

/** The receiving side of wire.ts: the loaded input again, its positioned YAML parsed on demand. */
export function inputFromWire(w: WireInput): AuditInput {
  const { text, data, ...rest } = w;
  const loaded = rest.writeup ? writeupLoaded(rest.file, data, text) : lazyYaml({ file: rest.file, data, text });
  return { ...rest, loaded };
}

export function errorFromWire(e: WireError): InputError {
  return new InputError({ file: e.file, line: e.line, col: e.col }, e.expected, e.got);
}

export function fromWire(w: WireJudged): Judged {
  if ('skipped' in w) return { skipped: errorFromWire(w.skipped), file: w.file };
  return { input: inputFromWire(w.input), v: w.v, time: w.time };
}
