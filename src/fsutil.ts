import { promises as fs } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { InputError } from './errors.js';

/**
 * Replace `file` with `text` so that a reader (or a crash) only ever sees the old or the new
 * content: write a sibling temporary file, flush it, rename it over the target. With
 * `backup`, the previous content is kept once as `file.bak` before the first replacement.
 */
export async function writeFileAtomic(file: string, text: string, options: { backup?: boolean } = {}): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'w', 0o644);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (options.backup) {
      const bak = `${file}.bak`;
      const [hasOld, hasBak] = await Promise.all([exists(file), exists(bak)]);
      if (hasOld && !hasBak) await fs.copyFile(file, bak);
    }
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

/** Check that `dir` is an existing directory; otherwise an InputError saying what was expected. */
export async function requireDirectory(dir: string, what: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(dir);
  } catch {
    throw new InputError({ file: dir }, what, 'no such directory');
  }
  if (!stat.isDirectory()) throw new InputError({ file: dir }, what, 'a file');
}
