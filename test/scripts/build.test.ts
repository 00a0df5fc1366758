import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// One build (issue 24): `npm run build` is the only thing that compiles, and every script that
// runs compiled code or tests runs it first, so a bench, the lab, the fuzzer and the tests all
// measure and check the program a user installs. Generated code is written as source before tsc
// runs (scripts/gen-sources.ts), never over tsc's output.
const root = path.resolve(import.meta.dirname, '../..');
const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const steps = (cmd: string) => cmd.split('&&').map((s) => s.trim());

describe('package.json scripts: one build', () => {
  it('build generates sources, then compiles, then writes the rules and help snapshots', () => {
    const b = steps(scripts.build!);
    const gen = b.findIndex((s) => s.includes('gen-sources'));
    const tsc = b.findIndex((s) => s === 'tsc -p tsconfig.json');
    const snap = b.findIndex((s) => s.includes('snapshot-rules'));
    const help = b.findIndex((s) => s.includes('snapshot-help'));
    expect(gen).toBeGreaterThan(-1);
    expect([gen < tsc, tsc < snap, tsc < help]).toEqual([true, true, true]);
  });

  it.each(Object.entries(scripts).filter(([name]) => name !== 'build' && name !== 'typecheck'))('%s does not compile on its own', (_name, cmd) => {
    expect(steps(cmd).filter((s) => /^tsc\b/.test(s))).toEqual([]);
  });

  it.each(Object.entries(scripts).filter(([name, cmd]) => name !== 'build' && /\bnode dist\/|\bvitest\b/.test(cmd)))('%s runs the build before the compiled code', (_name, cmd) => {
    const s = steps(cmd);
    const first = s.findIndex((x) => /\bnode dist\/|\bvitest\b/.test(x));
    expect(s.slice(0, first).some((x) => /^npm run build\b/.test(x))).toBe(true);
  });

  it('typecheck emits nothing', () => {
    expect(steps(scripts.typecheck!).filter((s) => /^tsc\b/.test(s) && s.includes('tsconfig.json'))).toEqual(['tsc -p tsconfig.json --noEmit']);
  });

  it.each(['snapshot-rules', 'snapshot-help'])('the post-compile step %s writes data beside dist/src, no compiled module', (name) => {
    const text = readFileSync(path.join(root, `scripts/${name}.ts`), 'utf8');
    expect(text).not.toMatch(/defs|DEFS_FILE|\.js['"]\s*\)/);
  });
});
