import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLES_ARCHIVE } from '../../src/lab/cases.js';
import { rederiveSeries } from '../../src/lab/rederive.js';

// Every reference case under cases/lab/ re-derived offline from the raw bundle shipped beside it
// (cases/lab/<series>/bundles.tar.gz) with the lab's own observe + triage steps: a case edited
// by hand, or one that today's code would derive differently, fails here without QEMU.
const ROOT = path.resolve(import.meta.dirname, '../../cases/lab');
const SERIES = (await fs.readdir(ROOT, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();

describe('lab reference cases re-derive from their shipped bundles', () => {
  it('every series directory ships its bundles, small', async () => {
    expect(SERIES.length).toBeGreaterThanOrEqual(4);
    for (const s of SERIES) {
      const st = await fs.stat(path.join(ROOT, s, BUNDLES_ARCHIVE));
      // The repository's size budget: a series' raw bundles stay well under 512 KiB compressed.
      expect(st.size, `${s}/${BUNDLES_ARCHIVE}`).toBeLessThan(512 * 1024);
    }
  });

  // A case recorded by writeReferenceCases (its header says so) must re-derive exactly; one
  // recorded by older code has no bundle and is listed as legacy until it is recorded again.
  it.each(SERIES)('Linux %s: every recorded case equals the one its bundle gives today', async (series) => {
    const got = await rederiveSeries(path.join(ROOT, series));
    expect(got.filter((r) => !r.legacy).length).toBeGreaterThan(0);
    for (const r of got.filter((x) => !x.legacy)) expect({ bundle: r.bundle, problem: r.problem, drift: r.drift }).toEqual({ bundle: r.bundle, problem: undefined, drift: [] });
  }, 120_000);

  it('a case edited after recording is caught', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-rederive-edit-'));
    try {
      const series = SERIES[0]!;
      await fs.cp(path.join(ROOT, series), dir, { recursive: true });
      const got = await rederiveSeries(dir);
      const one = got.find((r) => !r.legacy)!;
      const file = path.join(dir, `${one.bundle}.yaml`);
      await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace(/^(\s+possible_cpus: )(\d+)$/m, (_m, a: string, n: string) => `${a}${Number(n) + 1}`));
      const again = (await rederiveSeries(dir)).find((r) => r.bundle === one.bundle)!;
      expect(again.drift.map((d) => d.split(':')[0])).toEqual(['kernel.possible_cpus']);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
