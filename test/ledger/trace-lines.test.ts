import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../scripts/gen-trace.js';
import { mutate } from '../../scripts/fuzz-lib.js';
import { generateTraceLine, traceLineAgreement, traceLineTruth } from '../../scripts/trace-lines.js';

/**
 * Trace text as the kernel writes it (issue 25): generated lines, task names of up to 15 bytes
 * with spaces, dashes and brackets, stamps over the whole u64 range; each read back to the
 * generator's fields, and the ledger's scanner agreeing with parseTraceLine on every line,
 * generated or mutated. Fixed seeds.
 */
describe('trace lines', () => {
  it('reads every generated line back to its task name, pid, tgid, CPU and exact stamp', () => {
    const r = mulberry32(25);
    const wrong: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const g = generateTraceLine(r);
      const w = traceLineTruth(g);
      if (w !== undefined && wrong.length < 5) wrong.push(`${JSON.stringify(g.text)}: ${w}`);
    }
    expect(wrong).toEqual([]);
  });

  it('reads a task name holding " [3]" (the CPU column is the one the fixed parts fit)', () => {
    const g = { text: '      worker [3]-311     [001] d..1. 9100000.995828: gate_entry: (pipe_read+0x4/0x470)' };
    expect(traceLineTruth({ ...g, kind: 'entry', source: 'ftrace', comm: 'worker [3]', pid: 311, tgid: undefined, cpu: 1, sec: 9_100_000, fracNs: 995_828_000, event: 'gate_entry', func: 'pipe_read' })).toBeUndefined();
  });

  it('the scanner and parseTraceLine agree on generated and mutated lines', () => {
    const r = mulberry32(2025);
    const bad: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const g = generateTraceLine(r).text;
      const line = r() < 0.2 ? g : mutate(g, r).split('\n')[0]!;
      const d = traceLineAgreement(line);
      if (d !== undefined && bad.length < 5) bad.push(`${JSON.stringify(line)}: ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it.each([
    ['an unbalanced quote in an argument', '  cat-1  [001] ..... 1.000001: gate: (vfs_read+0x338/0x370 <- pipe_read) name="abc'],
    ['a return with no function', '  cat-1  [001] ..... 1.000001: gate: (vfs_read+0x338/0x370 <- )'],
    ['a return with no caller', '  cat-1  [001] ..... 1.000001: gate: ( <- pipe_read)'],
    ['an argument without a value sign', '  cat-1  [001] ..... 1.000001: gate_entry: (pipe_read+0x4/0x470) arg1'],
  ])('both refuse %s', (_name, line) => {
    expect(traceLineAgreement(line)).toBeUndefined();
    const b = Buffer.from(line);
    expect(traceLineTruth({ text: line, kind: 'entry', source: 'ftrace', comm: 'cat', pid: 1, tgid: undefined, cpu: 1, sec: 1, fracNs: 1000, event: 'gate', func: '' })).toMatch(/scanned as problem/);
    void b;
  });
});
