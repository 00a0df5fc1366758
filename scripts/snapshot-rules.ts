// Part of `npm run build`, after tsc: write dist/rules.snapshot.json, the parsed shipped rules
// and questions, so that an audit need not parse the rules at start-up (src/audit/rules-snapshot.ts
// says when it applies: only while the files it was made from are unchanged). It is data beside
// the compiled code; no compiled module is rewritten.
import { promises as fs } from 'node:fs';
import { makeSnapshot, SNAPSHOT_FILE } from '../src/audit/rules-snapshot.js';
import { defaultRulesDir } from '../src/rules/dir.js';

await fs.writeFile(SNAPSHOT_FILE, await makeSnapshot(defaultRulesDir()));
console.log(`wrote ${SNAPSHOT_FILE.slice(SNAPSHOT_FILE.lastIndexOf('/dist/') + 1)}`);
