// Writes schema/kretprobe-case-v1.schema.json from the zod case schema (the one definition).
// `npm run schema`; a test fails when the committed file is stale.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { caseJsonSchema } from '../src/case/schema.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const out = path.join(root, 'schema', 'kretprobe-case-v1.schema.json');
await writeFile(out, `${JSON.stringify(caseJsonSchema(), null, 2)}\n`);
console.log(`wrote ${path.relative(root, out)}`);
