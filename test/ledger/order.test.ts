import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';

// ops.jsonl as a multi-threaded load generator writes it: completions as they happen, so a line
// can come after lines submitted later. Line 4 ("d", submitted at 150) is two lines out of place.
const OPS = [
  '{"op":"a","task":1,"submit_ns":100,"done_ns":200,"reaches_target":true}',
  '{"op":"b","task":2,"submit_ns":300,"done_ns":400,"reaches_target":true}',
  '{"op":"c","task":3,"submit_ns":500,"done_ns":600,"reaches_target":true}',
  '{"op":"d","task":4,"submit_ns":150,"done_ns":450,"reaches_target":true}',
].join('\n');
const PROBE = [
  '{"ev":"entry","inst":"1","task":1,"ts_ns":110}',
  '{"ev":"entry","inst":"4","task":4,"ts_ns":160}',
  '{"ev":"return","inst":"1","task":1,"ts_ns":170}',
  '{"ev":"return","inst":"4","task":4,"ts_ns":180}',
  '{"ev":"entry","inst":"2","task":2,"ts_ns":310}',
  '{"ev":"return","inst":"2","task":2,"ts_ns":320}',
  '{"ev":"entry","inst":"3","task":3,"ts_ns":510}',
  '{"ev":"return","inst":"3","task":3,"ts_ns":520}',
].join('\n');

let dir: string;
const f = (name: string) => path.join(dir, name);
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-ledger-order-'));
  await fs.writeFile(f('ops.jsonl'), `${OPS}\n`);
  await fs.writeFile(f('probe.jsonl'), `${PROBE}\n`);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('ops.jsonl out of submit order', () => {
  it('puts lines within the reorder window in order: every operation returned, nothing foreign', () => {
    const r = cli(['ledger', '--ops', f('ops.jsonl'), '--trace', f('probe.jsonl'), '--format', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ops.classification).toMatchObject({ returned: 4, no_probe_evidence: 0 });
    expect(out.pairing.foreign).toBe(0);
  });

  it('refuses a line further out of place than the window, naming it, exit 2, one line', () => {
    const r = cli(['ledger', '--ops', f('ops.jsonl'), '--trace', f('probe.jsonl'), '--ops-reorder', '1']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ops\.jsonl:4: expected operation lines at most 1 lines out of submit_ns order .*--ops-reorder.*; got submit_ns 150 after the trace had passed 180/);
  });

  it('refuses the same input read as trace text, where records carry no operation id', async () => {
    // The same operations in microseconds, and the trace's own microsecond stamps.
    await fs.writeFile(f('ops-us.jsonl'), `${OPS.replace(/"(submit|done)_ns":(\d+)/g, (_m, k: string, v: string) => `"${k}_ns":${Number(v) * 1000}`)}\n`);
    const at = (pid: number, us: number, ret: boolean) =>
      `             cat-${pid}     [001] .....     0.000${us}: ${ret ? 'gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0' : 'gate_entry: (pipe_read+0x4/0x470)'}`;
    const text = [at(1, 110, false), at(4, 160, false), at(1, 170, true), at(4, 180, true), at(2, 310, false), at(2, 320, true), at(3, 510, false), at(3, 520, true)].join('\n');
    await fs.writeFile(f('trace.txt'), `${text}\n`);
    const ok = cli(['ledger', '--ops', f('ops-us.jsonl'), '--trace', f('trace.txt'), '--format', 'json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).ops.classification).toMatchObject({ returned: 4 });
    const bad = cli(['ledger', '--ops', f('ops-us.jsonl'), '--trace', f('trace.txt'), '--ops-reorder', '1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/ops-us\.jsonl:4: expected operation lines at most 1 lines out of submit_ns order/);
  });
});
