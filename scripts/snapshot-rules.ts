// Part of `npm run build`: write dist/rules.snapshot.json, the parsed shipped rules, so that an
// audit need not parse them at start-up (src/audit/rules-snapshot.ts decides when it applies).
import { promises as fs } from 'node:fs';
import { makeSnapshot, SNAPSHOT_FILE } from '../src/audit/rules-snapshot.js';
import { defaultRulesDir } from '../src/rules/load.js';

await fs.writeFile(SNAPSHOT_FILE, await makeSnapshot(defaultRulesDir()));
console.log(`wrote ${SNAPSHOT_FILE.split('/').slice(-2).join('/')}`);
