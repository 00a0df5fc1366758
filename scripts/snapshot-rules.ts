// Part of `npm run build`: write dist/rules.snapshot.json, the parsed shipped rules, and
// dist/case-shape.snapshot.json, the case schema as plain data, so that an audit need not parse
// the rules nor load zod at start-up (src/audit/rules-snapshot.ts and src/case/shape.ts decide
// when each applies: only while the files they were made from are unchanged).
import { promises as fs } from 'node:fs';
import { makeSnapshot, SNAPSHOT_FILE } from '../src/audit/rules-snapshot.js';
import { makeShapeSnapshot } from '../src/case/shape-build.js';
import { SHAPE_SNAPSHOT_FILE } from '../src/case/shape.js';
import { defaultRulesDir } from '../src/rules/dir.js';

const name = (file: string) => file.split('/').slice(-2).join('/');
await fs.writeFile(SNAPSHOT_FILE, await makeSnapshot(defaultRulesDir()));
await fs.writeFile(SHAPE_SNAPSHOT_FILE, await makeShapeSnapshot());
console.log(`wrote ${name(SNAPSHOT_FILE)} and ${name(SHAPE_SNAPSHOT_FILE)}`);
