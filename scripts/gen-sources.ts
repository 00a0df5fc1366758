// The first step of `npm run build`: write the generated source modules, before tsc compiles the
// project. tsconfig.gen.json compiles this script and what it imports (the case schema, not the
// modules it generates) into .cache/gen; the build runs it from there. Today one module:
// src/case/defs.generated.ts, the case schema as plain data (src/case/defs.ts says why).
// A file is rewritten only when its text changes.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makeDefsSource } from '../src/case/shape-build.js';

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const outputs: Array<[string, string]> = [['src/case/defs.generated.ts', makeDefsSource()]];
for (const [rel, text] of outputs) {
  const file = path.join(root, rel);
  let old: string | undefined;
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    old = undefined;
  }
  if (old !== text) writeFileSync(file, text);
  console.log(`${old === text ? 'up to date' : 'wrote'} ${rel}`);
}
