import { readFileSync } from 'node:fs';
import { CASE_SHAPE, conformTo } from './dist/src/case/shape.js';
import { fastCaseValue } from './dist/src/case/fast.js';
for (const f of process.argv.slice(2)) {
  const v = fastCaseValue(readFileSync(f, 'utf8'), f);
  if (v === undefined) { console.log(f, 'fast YAML declined'); continue; }
  const bad = Object.keys(v).filter((k) => conformTo(CASE_SHAPE._zod.def.shape[k], v[k]) === undefined && v[k] !== undefined);
  console.log(f, bad, bad.map((k) => JSON.stringify(v[k]).slice(0, 150)));
}
