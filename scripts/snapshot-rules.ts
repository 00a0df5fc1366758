// Part of `npm run build`, after tsc: write dist/rules.snapshot.json, the parsed shipped rules
// and questions, and dist/src/case/defs.js, the case schema as plain data, so that an audit need
// not parse the rules nor load zod at start-up (src/audit/rules-snapshot.ts and src/case/defs.ts
// say when each applies: only while the files they were made from are unchanged).
import { promises as fs } from 'node:fs';
import { makeSnapshot, SNAPSHOT_FILE } from '../src/audit/rules-snapshot.js';
import { DEFS_FILE, makeDefsModule } from '../src/case/shape-build.js';
import { defaultRulesDir } from '../src/rules/dir.js';

const name = (file: string) => file.slice(file.lastIndexOf('/dist/') + 1);
await fs.writeFile(SNAPSHOT_FILE, await makeSnapshot(defaultRulesDir()));
await fs.writeFile(DEFS_FILE, await makeDefsModule());
console.log(`wrote ${name(SNAPSHOT_FILE)} and ${name(DEFS_FILE)}`);
