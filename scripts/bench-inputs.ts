// Inputs shared by the benches: generated cases (the shipped reference cases, renamed and with
// their numbers varied) and generated write-ups (postmortems of ~300 lines around a shipped
// write-up, and the dense worst case), written to a temporary folder as a user's tree would be.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expandCasePaths } from '../src/case/load.js';

export const root = path.resolve(import.meta.dirname, '..', '..');

/** A small deterministic generator (a linear congruential one), so every run sees the same inputs. */
export function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

/** Write `texts` as files under a new temporary folder, 1,000 a sub-folder; returns the folder and the files. */
export async function writeTree(prefix: string, count: number, text: (i: number) => string, ext: string): Promise<{ dir: string; files: string[] }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const sub = path.join(dir, `part-${String(Math.floor(i / 1000)).padStart(3, '0')}`);
    if (i % 1000 === 0) await fs.mkdir(sub);
    const file = path.join(sub, `${String(i).padStart(6, '0')}.${ext}`);
    await fs.writeFile(file, text(i));
    files.push(file);
  }
  return { dir, files };
}

/** The case text generator: the shipped cases (not the write-ups), varied. */
export async function caseGenerator(seed = 42): Promise<{ templates: number; text: (i: number) => string }> {
  const templates = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => fs.readFile(f, 'utf8')));
  const rand = lcg(seed);
  return {
    templates: templates.length,
    text: (i) =>
      templates[i % templates.length]!
        .replace(/^id: .*$/m, `id: bench-${i}`)
        .replace(/^expected:[\s\S]*$/m, '')
        .replace(/(eligible|entries|returns|entry_events|observed_high_water|estimated_max_overlap): (\d+)/g, (_, k: string, v: string) => `${k}: ${Number(v) + rand(40)}`)
        .replace(/nmissed: (\d+) \}\n  end: \{ (epoch: [\w-]+), nmissed: (\d+)/, (_, a: string, e: string, b: string) => `nmissed: ${a} }\n  end: { ${e}, nmissed: ${Number(b) + rand(8)}`),
  };
}
