import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PARAMS, simulate, type GenSink } from '../../scripts/gen-trace.js';
import { cli } from '../cli/helpers.js';
import { opsThreadPays } from '../../src/ledger/read.js';

// ops.jsonl is parsed on a worker when big enough and a core is free (or with --ops-thread): the report must be the same as with --no-ops-thread.
let dir: string;
const f = (name: string) => path.join(dir, name);
let stopNs = 0;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-ledger-thread-'));
  const lines: Record<keyof GenSink, string[]> = { ops: [], trace: [], jsonl: [] };
  const sink: GenSink = { ops: (l) => lines.ops.push(l), trace: (l) => lines.trace.push(l), jsonl: (l) => lines.jsonl.push(l) };
  const p = { ...DEFAULT_PARAMS, events: 60000, workers: 12, maxactive: 8, shuffle: 0.3, pTight: 0.01, seed: 7 };
  const truth = simulate(p, sink, simulate(p, undefined).stop_us);
  stopNs = truth.stop_us * 1000;
  // A bad line and a blank one in the middle, as a user's file may have.
  lines.ops.splice(500, 0, '{"op": "broken", "submit_ns": -1}', '');
  await fs.writeFile(f('ops.jsonl'), `${lines.ops.join('\n')}\n`);
  await fs.writeFile(f('trace.txt'), `${lines.trace.join('\n')}\n`);
  // More bad lines than the report keeps, in both files: which ones it shows must not depend on
  // whether ops.jsonl was read on a second thread (its problems then arrive last).
  const bad = (ls: string[], text: string): string[] => ls.flatMap((l, i) => (i % 997 === 5 ? [text, l] : [l]));
  await fs.writeFile(f('ops-bad.jsonl'), `${bad(lines.ops, '{"op": "x", "submit_ns": "soon"}').join('\n')}\n`);
  await fs.writeFile(f('probe-bad.jsonl'), `${bad(lines.jsonl, '{"ev": "entry", "ts_ns": -5}').join('\n')}\n`);
  // probe.jsonl names operations: ids cross to the ledger as bytes. Long and not ASCII, the same
  // in both files, so the ids' ring (2 MiB) wraps several times; some hold an escaped lone
  // surrogate, which UTF-8 cannot carry; and task ids past 2^31 (records without an op id are
  // matched by task).
  const long = (l: string): string =>
    l.replaceAll('"req-1', '"r\\ud800q-1').replaceAll('"req-', `"réq-${'x'.repeat(120)}-`).replaceAll('"task":1', '"task":90000000001');
  await fs.writeFile(f('ops-long.jsonl'), `${lines.ops.map(long).join('\n')}\n`);
  await fs.writeFile(f('probe.jsonl'), `${lines.jsonl.map(long).join('\n')}\n`);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('ledger: ops.jsonl on a second thread', () => {
  it('gives the same report as the single-threaded reader, problems included', () => {
    // A small ops.jsonl takes the thread only when told to (--ops-thread-min-mb 0), and a busy
    // machine only with --ops-thread.
    const args = ['ledger', '--ops', f('ops.jsonl'), '--trace', f('trace.txt'), '--capture-stop-ns', String(stopNs), '--format', 'json', '--ops-thread', '--ops-thread-min-mb', '0'];
    const one = cli([...args, '--no-ops-thread']);
    const two = cli(args);
    expect(one.code).toBe(0);
    expect(two.code).toBe(0);
    const a = JSON.parse(one.stdout);
    expect(a.problems.count).toBe(1);
    expect(a.problems.first[0]).toMatchObject({ line: 501 });
    expect(a.ops.total).toBeGreaterThan(1000);
    expect(JSON.parse(two.stdout)).toEqual(a);
  });

  it('gives the same report with probe.jsonl, whose records name operations by id', async () => {
    const ids = (await fs.readFile(f('ops-long.jsonl'), 'utf8')).length;
    expect(ids).toBeGreaterThan(4 << 20);
    const args = ['ledger', '--ops', f('ops-long.jsonl'), '--trace', f('probe.jsonl'), '--capture-stop-ns', String(stopNs), '--format', 'json', '--ops-thread', '--ops-thread-min-mb', '0'];
    const one = cli([...args, '--no-ops-thread']);
    const two = cli(args);
    expect(one.code).toBe(0);
    expect(two.code).toBe(0);
    // Nothing on stderr: Node warns when a thread closes a descriptor another one opened.
    expect(two.stderr).toBe(one.stderr);
    const a = JSON.parse(one.stdout);
    // Records bound by id: almost nothing is foreign, and the operations were matched.
    expect(a.ops.classification.returned).toBeGreaterThan(1000);
    expect(a.pairing.foreign).toBeLessThan(a.ops.classification.returned / 10);
    expect(JSON.parse(two.stdout)).toEqual(a);
  });

  it('keeps the same problems, ordered by place, whichever thread read ops.jsonl', () => {
    const args = ['ledger', '--ops', f('ops-bad.jsonl'), '--trace', f('probe-bad.jsonl'), '--capture-stop-ns', String(stopNs), '--format', 'json', '--ops-thread', '--ops-thread-min-mb', '0'];
    const one = cli([...args, '--no-ops-thread']);
    const two = cli(args);
    expect(one.code).toBe(0);
    const a = JSON.parse(one.stdout);
    expect(a.problems.count).toBeGreaterThan(40);
    const files = a.problems.first.map((p: { file: string }) => path.basename(p.file));
    // ops.jsonl's first, then the trace's, each by line.
    expect(files.slice(0, 2)).toEqual(['ops-bad.jsonl', 'ops-bad.jsonl']);
    expect(files).toContain('ops-bad.jsonl');
    const opsLines = a.problems.first.filter((p: { file: string }) => p.file.endsWith('ops-bad.jsonl')).map((p: { line: number }) => p.line);
    expect(opsLines).toEqual([...opsLines].sort((x: number, y: number) => x - y));
    expect(JSON.parse(two.stdout)).toEqual(a);
  });

  it('refuses an operation past the reorder window the same way', () => {
    const args = ['ledger', '--ops', f('ops.jsonl'), '--trace', f('trace.txt'), '--ops-reorder', '1', '--ops-thread', '--ops-thread-min-mb', '0'];
    const one = cli([...args, '--no-ops-thread']);
    const two = cli(args);
    expect(one.code).toBe(2);
    expect(two.code).toBe(2);
    expect(two.stderr).toBe(one.stderr);
  });
});

describe('ledger: whether the ops thread pays', () => {
  const MB = 1 << 20;
  it.each([
    ['one core, idle', 64 * MB, 1, 0, false],
    ['one core, a huge file', 1024 * MB, 1, 0, false],
    ['two cores, idle', 64 * MB, 2, 0.2, true],
    ['two cores, one busy', 64 * MB, 2, 1, false],
    ['two cores shared with two other workers', 64 * MB, 2, 4.6, false],
    ['two cores shared, a 500 MB file', 500 * MB, 2, 4.6, true],
    ['eight cores, six busy', 64 * MB, 8, 6, true],
    ['eight cores, seven busy', 64 * MB, 8, 7, false],
    ['a platform without a load average', 64 * MB, 4, 0, true],
  ])('%s', (_name, bytes, cores, load, pays) => {
    expect(opsThreadPays(bytes, cores, load)).toBe(pays);
  });
});

describe('ledger: the ops worker failing', () => {
  // In a child process with a time limit: the failure these guard against is a synchronous wait
  // that never ends, which no in-process timeout can interrupt. The built module: the worker's
  // entry is a .js file next to it.
  const run = (body: string): { out: string; code: number | null; timedOut: boolean } => {
    const script = `
      const { OpsThread } = await import(${JSON.stringify(pathToFileURL(path.resolve('dist/src/ledger/opsThread.js')).href)});
      const { openSync } = await import('node:fs');
      const rec = { op: '', task: -1, submitNs: 0, doneNs: null, reachesTarget: undefined, line: 0 };
      ${body}`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    return { out: r.stdout + r.stderr, code: r.status, timedOut: r.signal === 'SIGTERM' };
  };

  it('ends the ring instead of leaving the ledger waiting, and end() says why', () => {
    // A descriptor that is not open (a closed one could be reused by the time the worker reads it).
    const r = run(`
      const t = new OpsThread(999999, 20, false, 16);
      console.log('next', t.next(rec));
      await t.end().then(() => console.log('resolved'), (e) => console.log('rejected', e.code));`);
    expect(r.timedOut).toBe(false);
    expect(r.out).toContain('next false');
    expect(r.out).toContain('rejected EBADF');
  });

  it('gives up on a worker that died, instead of waiting for ever', () => {
    // Terminated before (or while) it reads: what it wrote may be read, then no more comes.
    const r = run(`
      const t = new OpsThread(openSync(${JSON.stringify(f('ops.jsonl'))}, 'r'), 20, false, 16, 300);
      void t.stop();
      try { while (t.next(rec)); console.log('ended'); } catch (e) { console.log('threw', e.message); }
      process.exit(0);`);
    expect(r.timedOut).toBe(false);
    expect(r.out).toMatch(/threw the worker reading ops.jsonl stopped without finishing/);
  });
});
