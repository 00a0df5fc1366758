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

export function junitHead(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="kretprobe-triage audit">\n`;
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
export function junitSuite(v: CaseVerdict, versions: Versions, options: { failOn?: VerdictId | undefined; file?: string | undefined }): string {
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
  const lines = [
    `  <testsuite name="${esc(options.file ?? v.id)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
    '    <properties>',
    `      <property name="case" value="${esc(v.id)}"/>`,
    `      <property name="verdict" value="${esc(v.verdict)}"/>`,
    `      <property name="tool_version" value="${esc(versions.tool_version)}"/>`,
    `      <property name="rules_version" value="${esc(versions.rules_version)}"/>`,
    '    </properties>',
  ];
  for (const c of cases) {
    lines.push(`    <testcase classname="${esc(v.id)}" name="${esc(c.name)}">`);
    if (c.failure) lines.push(`      <failure message="${esc(c.failure.message)}" type="${esc(c.failure.message.split(' ')[0]!)}">${esc(c.failure.body)}</failure>`);
    if (c.skipped) lines.push(`      <skipped message="${esc(c.skipped)}"/>`);
    if (c.out) lines.push(`      <system-out>${esc(c.out)}</system-out>`);
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>');
  return `${lines.join('\n')}\n`;
}

/** A file that could not be audited, as a suite with one errored testcase. */
export function junitErrorSuite(file: string, message: string): string {
  return `  <testsuite name="${esc(file)}" tests="1" failures="0" errors="1" skipped="0">\n    <testcase classname="${esc(file)}" name="load"><error message="${esc(message)}" type="InputError"/></testcase>\n  </testsuite>\n`;
}
