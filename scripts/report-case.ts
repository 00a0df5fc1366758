/**
 * The case file that goes with a generated trace (scripts/gen-trace.ts): what the generator's
 * probe was (a module with per-instance data, maxactive as simulated, an entry handler that
 * filters), its caller model and its miss counter around the run. Used by the report's browser
 * test and by `npm run bench:report`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Truth } from './gen-trace.js';

/** A generated trace of `events` events in `dir`, made by dist/scripts/gen-trace.js unless it is there already. */
export function ensureTrace(root: string, dir: string, events: number): Truth {
  const truthFile = path.join(dir, 'truth.json');
  if (existsSync(truthFile)) {
    const t = JSON.parse(readFileSync(truthFile, 'utf8')) as Truth;
    if (t.params.events === events) return t;
  }
  process.stderr.write(`generating ${events} events into ${dir} ...\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'dist/scripts/gen-trace.js'), '--events', String(events), '--out', dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error('gen-trace failed');
  return JSON.parse(readFileSync(truthFile, 'utf8')) as Truth;
}

export function generatedCase(truth: Truth, id = 'generated-trace'): string {
  const p = truth.params;
  return `format: kretprobe-case/v1
id: ${id}
title: Generated trace, ${p.workers} workers against maxactive ${p.maxactive}
source: scripts/gen-trace.ts --events ${p.events} --seed ${p.seed}
kernel:
  release: 6.12.0-generated
  arch: x86_64
  possible_cpus: 2
probe:
  interface: module
  target: pipe_read
  target_module: null
  registration:
    result: ok
    epoch: reg-1
  armed: true
  maxactive:
    requested: ${p.maxactive}
    effective: ${p.maxactive}
  entry_handler:
    present: true
    can_filter: true
  handler:
    may_sleep: false
    blocking_locks: false
    does_io: false
    heavy_printk: false
    bounded_storage: true
  per_instance_data: true
coverage:
  blacklisted: false
  inlined_call_sites: some
  clones: []
  unusual_return: false
concurrency:
  target_sleeps: true
  workers: ${p.workers}
  recursion_depth: ${p.maxDepth}
  estimated_max_overlap: ${p.workers * p.maxDepth}
  capacity_basis: caller-model
counters:
  source: module-field
  start:
    epoch: reg-1
    nmissed: 0
  end:
    epoch: reg-1
    nmissed: ${truth.nmissed}
ledger:
  workload_quiesced: false
`;
}
