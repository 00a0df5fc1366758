import { createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { caseFromBundle } from '../evidence/bundle.js';
import { parseKprobeEventLine } from '../evidence/kprobeEvents.js';
import { evaluateCase, loadCase, type Rules } from '../index.js';
import { caseUpdates } from '../ledger/format.js';
import { readLedger } from '../ledger/read.js';
import type { LabKernel } from './kernels.js';
import type { LabObservation } from './observe.js';
import type { LabExpectation } from './scenarios.js';
import { setPath } from '../dotted.js';

/** The verdict of one lab bundle, and where its case file went. */
export interface LabTriage {
  verdict: string | undefined;
  caseFile: string | undefined;
  /** Facts the engine said would change the verdict. */
  missing: string[];
  rules: string[];
  /** Why there is no verdict, when there is none. */
  note: string | undefined;
}

type Obj = Record<string, unknown>;

/** case-format.md order, so a lab case reads like a hand-written one. */
const CASE_ORDER = ['format', 'id', 'title', 'source', 'kernel', 'probe', 'coverage', 'concurrency', 'counters', 'ledger', 'latency', 'fixture', 'claims', 'expected', 'provenance'];

/** The symbol a definition probes (`do_int3` in `r:kfix/gate do_int3`). */
function symbolOf(definition: string | undefined): string | undefined {
  if (definition === undefined) return undefined;
  const d = parseKprobeEventLine(definition);
  return typeof d === 'string' ? undefined : d.symbol;
}

/**
 * Facts the lab knows as the harness that ran the test rather than from the kernel's files: the
 * caller model of the fixture (three readers, one call each, each sleeping in pipe_read). Each goes
 * into `provenance` as `lab`.
 */
const FIXTURE_FACTS: Record<string, unknown> = {
  'probe.interface': 'tracefs',
  'concurrency.target_sleeps': true,
  'concurrency.workers': 3,
  'concurrency.recursion_depth': 1,
  'concurrency.estimated_max_overlap': 3,
  'concurrency.capacity_basis': 'caller-model',
};

/**
 * Facts about the probe the lab registered, true of every tracefs return event it writes
 * (`rN:kfix/gate pipe_read arg1=$retval`): no $argN, so no entry handler (kernel-facts.md §3,
 * v6.10), and the kernel's own handlers only write the ring buffer. pipe_read is reached through
 * file_operations.read_iter, an indirect call that cannot be inlined.
 */
const TRACEFS_PROBE_FACTS: Record<string, unknown> = {
  'probe.entry_handler.present': false,
  'probe.entry_handler.can_filter': false,
  'probe.handler.may_sleep': false,
  'probe.handler.blocking_locks': false,
  'probe.handler.does_io': false,
  'probe.handler.heavy_printk': false,
  'probe.handler.bounded_storage': true,
  'coverage.inlined_call_sites': 'none',
};

/**
 * Bundle -> case -> verdict, with the project's own pieces: `caseFromBundle` for the kernel's
 * files, the ledger reader over the scenario's ops.jsonl and trace, then `evaluateCase`. The case
 * is written beside the bundle as `<bundle>.case.yaml`.
 */
export async function triageBundle(
  obs: LabObservation,
  ctx: { kernel: LabKernel; rules: Rules; expected: LabExpectation | undefined; date: string },
): Promise<LabTriage> {
  const release = obs.release ?? ctx.kernel.release;
  const fixture = obs.registered;
  const built = await caseFromBundle(obs.dir, {
    event: 'kfix/gate',
    entryEvent: fixture ? 'kfix/gate_entry' : undefined,
    symbol: symbolOf(obs.definition) ?? 'pipe_read',
    definition: obs.definition,
    id: `lab-${ctx.kernel.series.replace(/\./g, '-')}-${obs.bundle}`,
    title: `Lab: ${obs.definition ?? obs.bundle} on Linux ${release}`,
    source: `kretprobe-triage lab on Linux ${release} (QEMU TCG, possible CPUs ${obs.possibleCpus ?? '?'}), ${ctx.date}`,
  });
  const data = built.case as Obj;
  const provenance = (data.provenance ?? {}) as Record<string, string>;
  if (fixture) {
    for (const [k, v] of Object.entries(FIXTURE_FACTS)) {
      setPath(data, k, v);
      provenance[k] = 'lab: the fixture harness (lab/guest/init.sh)';
    }
    // Drained before deciding: the lab waits for every reader before the end snapshot, but when
    // it stopped the capture while the calls were gated, the capture ended before the drain.
    setPath(data, 'ledger.workload_quiesced', obs.captureStopNs === undefined);
    provenance['ledger.workload_quiesced'] = `lab: ${obs.bundle}/scenario.json capture_stop_ns`;
    for (const [k, v] of Object.entries(TRACEFS_PROBE_FACTS)) {
      setPath(data, k, v);
      provenance[k] = `lab: the tracefs definition it wrote (${obs.definition ?? '?'})`;
    }
    const trace = path.join(obs.dir, 'end', 'trace');
    const stop = obs.captureStopNs;
    const report = await readLedger({
      opsFile: path.join(obs.dir, 'ops.jsonl'),
      trace: { name: trace, stream: createReadStream(trace) },
      format: 'trace-text',
      events: { entryEvent: 'gate_entry', returnEvent: 'gate' },
      semantics: 'event',
      captureStopNs: stop,
      nmissedDelta: obs.returnMisses,
    });
    for (const [k, v] of Object.entries(caseUpdates(report))) {
      if (v === undefined || v === null) continue;
      setPath(data, k, v);
      provenance[k] = `lab: ledger of ${obs.bundle}/ops.jsonl against ${obs.bundle}/end/trace`;
    }
  }
  if (fixture) {
    // The gate is pipe_read's own wait for data on a FIFO whose writer the controller holds:
    // each reader has its own FIFO, so it holds nothing another caller or the controller needs,
    // and the wait is the function's normal one rather than one fabricated on a driver path.
    const gateFacts: Record<string, unknown> = {
      'fixture.gated': true,
      'fixture.gate_holds_shared_resource': false,
      'fixture.live_driver_path': false,
    };
    if (obs.gated) gateFacts['fixture.overlap_verified'] = obs.gated.all_blocked;
    for (const [k, v] of Object.entries(gateFacts)) {
      setPath(data, k, v);
      provenance[k] = k === 'fixture.overlap_verified' ? `lab: ${obs.bundle}/gate.log (entry hits and wchan of each reader before the release)` : 'lab: the fixture harness (lab/guest/init.sh)';
    }
  }
  if (fixture && obs.ops.length > 0 && obs.ops.every((o) => o.done_ns !== null || o.done_after_stop_ns !== undefined)) {
    // Every reader got its EOF and exited: each call came back out of pipe_read the normal way.
    setPath(data, 'coverage.unusual_return', false);
    provenance['coverage.unusual_return'] = `lab: every operation of ${obs.bundle}/ops.jsonl completed after the release`;
  }
  if (Object.keys(provenance).length > 0) data.provenance = provenance;
  if (ctx.expected) data.expected = { verdict: ctx.expected.verdict };
  const ordered: Obj = {};
  for (const k of CASE_ORDER) if (k in data) ordered[k] = data[k];
  for (const [k, v] of Object.entries(data)) if (!(k in ordered)) ordered[k] = v;
  const caseFile = path.join(path.dirname(obs.dir), `${obs.bundle}.case.yaml`);
  const head = `# Built by kretprobe-triage lab from the bundle ${obs.bundle}/ (start/, end/, ops.jsonl).\n`;
  await fs.writeFile(caseFile, head + stringify(ordered, { lineWidth: 0 }));
  const loaded = await loadCase(caseFile);
  const v = await evaluateCase(loaded, ctx.rules);
  return {
    verdict: v.verdict,
    caseFile,
    missing: v.missing,
    rules: v.findings.map((f) => f.rule),
    note: undefined,
  };
}
