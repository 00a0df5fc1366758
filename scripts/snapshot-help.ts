// Part of `npm run build`, after tsc: write dist/help.snapshot.txt, the top-level --help as
// commander prints it at 80 columns, so that `--help` need not load commander (src/help-snapshot.ts
// says when it applies: only while the code it was made from is unchanged). It is data beside
// the compiled code; no compiled module is rewritten.
import { promises as fs } from 'node:fs';
import { main } from '../src/cli.js';
import { HELP_SNAPSHOT_FILE, makeHelpSnapshot } from '../src/help-snapshot.js';
import { bufferedIo } from '../src/io.js';

const io = bufferedIo(process.cwd(), process.stdin);
const code = await main(['--help'], io, { noHelpSnapshot: true });
if (code !== 0 || io.err || !io.out.startsWith('Usage: ')) throw new Error(`--help exited ${code}: ${io.err || io.out.slice(0, 200)}`);
await fs.writeFile(HELP_SNAPSHOT_FILE, makeHelpSnapshot(io.out));
console.log(`wrote ${HELP_SNAPSHOT_FILE.slice(HELP_SNAPSHOT_FILE.lastIndexOf('/dist/') + 1)}`);
