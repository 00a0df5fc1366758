// Writes schema/kretprobe-case-v1.schema.json and schema/kretprobe-rule.schema.json from the zod
// schemas (the one definition of each format).
// `npm run schema`; a test fails when the committed file is stale.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { caseJsonSchema } from '../src/case/schema.js';
import { ruleJsonSchema } from '../src/rules/schema.js';

const root = path.resolve(import.meta.dirname, '..', '..');
for (const [name, schema] of [['kretprobe-case-v1.schema.json', caseJsonSchema()], ['kretprobe-rule.schema.json', ruleJsonSchema()]] as const) {
  const out = path.join(root, 'schema', name);
  await writeFile(out, `${JSON.stringify(schema, null, 2)}\n`);
  console.log(`wrote ${path.relative(root, out)}`);
}
