import type { VerdictId } from '../case/schema.js';
import { VERDICT_RANK, type CaseVerdict } from '../verdict/verdict.js';
import type { Versions } from '../version.js';

const esc = (s: string) =>
  s
    // Characters XML 1.0 cannot carry at all.
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

/** Root totals: what every suite added up to. */
export interface JunitTotals {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
  /** Seconds. */
  time: number;
}

export const emptyTotals = (): JunitTotals => ({ tests: 0, failures: 0, errors: 0, skipped: 0, time: 0 });

const seconds = (t: number) => t.toFixed(3);

/** The document's opening with the root totals (so the suites are written after they are all known). */
export function junitHead(totals: JunitTotals): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="kretprobe-triage audit" tests="${totals.tests}" failures="${totals.failures}" errors="${totals.errors}" time="${seconds(totals.time)}">\n`;
}

export function junitTail(): string {
  return '</testsuites>\n';
}

interface TestCase {
  name: string;
  failure?: { message: string; body: string };
  skipped?: string;
  out?: string;
}

/**
 * One case file as one testsuite: a testcase per claim (fails unless supported or accepted),
 * one per verdict finding (fails when its verdict is at or above --fail-on and it is not
 * accepted), one for the expected block when there is one, and one for the verdict itself.
 * The versions are properties of every suite, so a CI artefact says what produced it.
 */
export function junitSuite(v: CaseVerdict, versions: Versions, options: { failOn?: VerdictId | undefined; file?: string | undefined; time?: number | undefined }, totals?: JunitTotals): string {
  const cases: TestCase[] = [];
  const failRank = options.failOn === undefined ? -1 : VERDICT_RANK.indexOf(options.failOn);
  const atOrAbove = (verdict: VerdictId) => VERDICT_RANK.indexOf(verdict) <= failRank;
  v.claims.forEach((c, i) => {
    const name = `claim ${i + 1}: ${c.kind}${c.text ? ` "${c.text}"` : ''}`;
    if (c.judgement === 'supported') cases.push({ name, out: `supported: ${c.because}` });
    else if (c.accepted !== undefined) cases.push({ name, out: `${c.judgement}, accepted: ${c.accepted}. ${c.because}` });
    else cases.push({ name, failure: { message: `${c.judgement} (${c.rule})`, body: c.because } });
  });
  for (const f of v.findings) {
    if (f.verdict === null) continue;
    const name = `check ${f.rule}: ${f.verdict}`;
    const body = `${f.explanation}\nfacts: ${Object.entries(f.facts).map(([k, x]) => `${k}=${JSON.stringify(x)}`).join(' ')}\nsource: ${f.source}\nnext: ${f.next}`;
    if (f.accepted !== undefined) cases.push({ name, out: `accepted: ${f.accepted}\n${body}` });
    else if (atOrAbove(f.verdict)) cases.push({ name, failure: { message: `${f.verdict} is at or above --fail-on ${options.failOn}`, body } });
    else cases.push({ name, out: body });
  }
  if (v.expected) {
    const name = 'expected block';
    cases.push(v.expected.ok ? { name, out: 'as expected' } : { name, failure: { message: 'not as expected', body: v.expected.problems.join('\n') } });
  }
  const verdictName = `verdict: ${v.verdict}`;
  const verdictBody = `${v.missing.length ? `missing: ${v.missing.join(', ')}\n` : ''}next: ${v.next}`;
  if (v.verdict === 'insufficient-evidence') cases.push({ name: verdictName, skipped: `inconclusive: ${v.missing.join(', ') || 'facts unknown'}`, out: verdictBody });
  else cases.push({ name: verdictName, out: verdictBody });

  const failures = cases.filter((c) => c.failure).length;
  const skipped = cases.filter((c) => c.skipped).length;
  // Every check is computed by one evaluation of the case: its time is the suite's, carried by the
  // verdict testcase, so the testcases' times add up to the suite's.
  const time = options.time ?? 0;
  if (totals) {
    totals.tests += cases.length;
    totals.failures += failures;
    totals.skipped += skipped;
    totals.time += time;
  }
  const file = options.file ?? v.id;
  const lines = [
    `  <testsuite name="${esc(file)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${seconds(time)}" file="${esc(file)}">`,
    '    <properties>',
    `      <property name="case" value="${esc(v.id)}"/>`,
    `      <property name="verdict" value="${esc(v.verdict)}"/>`,
    `      <property name="tool_version" value="${esc(versions.tool_version)}"/>`,
    `      <property name="rules_version" value="${esc(versions.rules_version)}"/>`,
    '    </properties>',
  ];
  for (const c of cases) {
    lines.push(`    <testcase classname="${esc(v.id)}" name="${esc(c.name)}" file="${esc(file)}" time="${seconds(c.name === verdictName ? time : 0)}">`);
    if (c.failure) lines.push(`      <failure message="${esc(c.failure.message)}" type="${esc(c.failure.message.split(' ')[0]!)}">${esc(c.failure.body)}</failure>`);
    if (c.skipped) lines.push(`      <skipped message="${esc(c.skipped)}"/>`);
    if (c.out) lines.push(`      <system-out>${esc(c.out)}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>');
  return `${lines.join('\n')}\n`;
}

/** A file that could not be audited, as a suite with one errored testcase. */
export function junitErrorSuite(file: string, message: string, totals?: JunitTotals): string {
  if (totals) {
    totals.tests += 1;
    totals.errors += 1;
  }
  return `  <testsuite name="${esc(file)}" tests="1" failures="0" errors="1" skipped="0" time="0.000" file="${esc(file)}">\n    <testcase classname="${esc(file)}" name="load" file="${esc(file)}" time="0.000"><error message="${esc(message)}" type="InputError"/></testcase>\n  </testsuite>\n`;
}
