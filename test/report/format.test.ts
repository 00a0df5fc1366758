import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCase, loadCase, loadRules, type CaseVerdict } from '../../src/index.js';
import { formatCaseJson } from '../../src/report/json.js';
import { formatMarkdown } from '../../src/report/markdown.js';
import { formatCaseText, formatSummaryText } from '../../src/report/text.js';
import { loadColour, styler } from '../../src/report/colour.js';
import { Chalk } from 'chalk';
import { AuditSummary } from '../../src/audit/summary.js';

// Formatters are pure: the same verdict always renders the same text. Paths are made relative
// so the snapshots do not depend on where the repository lives.
const root = path.resolve(import.meta.dirname, '../..');
let verdicts: CaseVerdict[];
beforeAll(async () => {
  await loadColour();
  const rules = await loadRules(path.join(root, 'rules'));
  verdicts = [];
  for (const f of ['cases/kernel-notes/r2-constrained.yaml', 'cases/table/writeup-no-counters.yaml']) {
    const v = await evaluateCase(await loadCase(path.join(root, f)), rules);
    verdicts.push({ ...v, file: path.relative(root, v.file!) });
  }
});

function summaryOf(vs: CaseVerdict[]): AuditSummary {
  const s = new AuditSummary();
  for (const v of vs) s.add(v);
  return s;
}

describe('report formatters', () => {
  it('plain styles leave text as chalk does at level 0, chalk itself only for colour', () => {
    const plain = styler(false);
    const zero = new Chalk({ level: 0 });
    for (const args of [['x'], [''], [3], [undefined], ['a', 'b'], [], [null, 'c']] as unknown[][]) {
      expect(plain.bold.red(...args)).toBe(zero.bold.red(...args));
      expect(plain.dim(...args)).toBe(zero.dim(...args));
    }
    expect(plain.level).toBe(0);
    expect(styler(true).red('x')).toBe('\x1b[31mx\x1b[39m');
  });

  it('text, without colour', () => {
    expect(verdicts.map((v) => formatCaseText(v, { color: false })).join('\n') + formatSummaryText(summaryOf(verdicts), { color: false })).toMatchSnapshot();
  });

  it('text with colour differs from plain text only by escape codes', () => {
    const coloured = formatCaseText(verdicts[0]!, { color: true });
    expect(coloured).toMatch(/\x1b\[/);
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(formatCaseText(verdicts[0]!, { color: false }));
  });

  it('markdown', () => {
    expect(formatMarkdown(verdicts)).toMatchSnapshot();
  });

  it('json', () => {
    expect(verdicts.map((v) => formatCaseJson(v)).join('')).toMatchSnapshot();
  });
});
