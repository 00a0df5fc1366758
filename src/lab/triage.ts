import { createReadStream, promises as fs } from 'node:fs';
import { Readable } from 'node:stream';
import path from 'node:path';
import { stringify } from 'yaml';
import { caseFromBundle } from '../evidence/bundle.js';
import { parseKprobeEventLine } from '../evidence/kprobeEvents.js';
import { evaluateCase, loadCase, type Rules } from '../index.js';
import { caseUpdates } from '../ledger/format.js';
import { readLedger } from '../ledger/read.js';
import type { LabKernel } from './kernels.js';
import type { ModuleObservation } from './moduleObserve.js';
import type { BpftraceObservation } from './bpftraceObserve.js';
import { extractWriteup } from '../writeup/extract.js';
import { loadLexicon } from '../writeup/lexicon.js';
import type { LabObservation } from './observe.js';
import type { LabExpectation } from './scenarios.js';
import { getPath, setPath } from '../dotted.js';
import { factOf, readArtifact } from '../evidence/artifacts.js';

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
    // The definition's symbol (an fprobe exit's carries %return), else the bundle manifest's.
    symbol: symbolOf(obs.definition)?.replace(/%return$/, ''),
    definition: obs.definition,
    id: `lab-${ctx.kernel.series.replace(/\./g, '-')}-${obs.bundle}`,
    title: `Lab: ${obs.definition ?? obs.bundle} on Linux ${release}`,
    source: `kretprobe-triage lab on Linux ${release} (QEMU TCG, possible CPUs ${obs.possibleCpus ?? '?'}), ${ctx.date}`,
  });
  const data = built.case as Obj;
  const provenance = (data.provenance ?? {}) as Record<string, string>;
  if (!fixture && obs.definition !== undefined && getPath(data, 'probe.registration.result') === 'error') {
    // error_log's reason does not always name one errno; the shell's report of the refused write
    // does (register.err, "sh: write error: Invalid argument"), read as a user's pasted session is.
    const err = await fs.readFile(path.join(obs.dir, 'register.err'), 'utf8').catch(() => '');
    const said = factOf(readArtifact('kprobe_events-write', `echo '${obs.definition}' > kprobe_events\n${err}`), 'probe.registration.result');
    if (said && typeof said.value === 'string' && said.value !== 'error') {
      setPath(data, 'probe.registration.result', said.value);
      provenance['probe.registration.result'] = `lab: ${obs.bundle}/register.err:${said.line - 1} (the shell's write error)`;
    }
  }
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
    if (/^f\d*:/.test(obs.definition ?? '')) {
      // An fprobe exit event lives in dynamic_events, not kprobe_events, so the bundle reader
      // cannot see it armed; its enable file in the end snapshot can.
      const enable = await fs.readFile(path.join(obs.dir, 'end', 'events', 'kfix', 'gate', 'enable'), 'utf8').catch(() => '');
      setPath(data, 'probe.armed', enable.trim() === '1');
      provenance['probe.armed'] = `lab: ${obs.bundle}/end/events/kfix/gate/enable (an fprobe event, read back from dynamic_events)`;
      if (obs.maxactive !== undefined) {
        setPath(data, 'probe.maxactive', { requested: obs.maxactive, effective: obs.maxactive });
        provenance['probe.maxactive'] = `lab: ${obs.bundle}/registered.dynamic_events`;
      }
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
      // A tracefs return event has no entry handler: it rejects no call.
      noFiltering: true,
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
  return writeAndEvaluate(data, obs.dir, obs.bundle, ctx);
}

/** Write the case beside its bundle as `<bundle>.case.yaml`, in case-format order, and evaluate it. */
async function writeAndEvaluate(data: Obj, dir: string, bundle: string, ctx: { rules: Rules; expected: LabExpectation | undefined }): Promise<LabTriage> {
  if (ctx.expected) data.expected = ctx.expected.rules?.length ? { verdict: ctx.expected.verdict, rules: ctx.expected.rules } : { verdict: ctx.expected.verdict };
  const ordered: Obj = {};
  for (const k of CASE_ORDER) if (k in data) ordered[k] = data[k];
  for (const [k, v] of Object.entries(data)) if (!(k in ordered)) ordered[k] = v;
  const caseFile = path.join(path.dirname(dir), `${bundle}.case.yaml`);
  const head = `# Built by kretprobe-triage lab from the bundle ${bundle}/ (start/, end/, ops.jsonl${bundle.startsWith('mod-') ? ', probe.jsonl' : ''}).\n`;
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

/** `key=value` module parameters of an insmod line (`insmod krtfix.ko epoch=x maxactive=2`). */
function paramsOf(load: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of (load ?? '').split(/\s+/)) {
    const eq = w.indexOf('=');
    if (eq > 0) out.set(w.slice(0, eq), w.slice(eq + 1));
  }
  return out;
}

const num = (v: number | string | undefined): number | undefined => (typeof v === 'number' ? v : undefined);

/**
 * A module bundle -> case -> verdict: `caseFromBundle` for the kernel's files, the module's own
 * counters (end/module_counters, `counters.source: module-field`), the facts of the module the
 * lab loaded (lab/module/krtfix.c), and the ledger of ops.jsonl against probe.jsonl paired by
 * instance id.
 */
export async function triageModuleBundle(
  obs: ModuleObservation,
  ctx: { kernel: LabKernel; rules: Rules; expected: LabExpectation | undefined; date: string },
): Promise<LabTriage> {
  const release = obs.release ?? ctx.kernel.release;
  const last = obs.loads.at(-1);
  const params = paramsOf(last);
  const target = params.get('symbol') ?? 'krtfix_target';
  const built = await caseFromBundle(obs.dir, {
    symbol: target,
    id: `lab-${ctx.kernel.series.replace(/\./g, '-')}-${obs.bundle}`,
    title: `Lab: ${last ?? obs.bundle} on Linux ${release}`,
    source: `kretprobe-triage lab on Linux ${release} (QEMU TCG, possible CPUs ${obs.possibleCpus ?? '?'}), module lab/module/krtfix.c, ${ctx.date}`,
  });
  const data = built.case as Obj;
  const provenance = (data.provenance ?? {}) as Record<string, string>;
  const put = (k: string, v: unknown, why: string): void => {
    if (v === undefined) return;
    setPath(data, k, v);
    provenance[k] = why;
  };
  const mod = 'lab: the module it loaded (lab/module/krtfix.c)';
  put('probe.interface', 'module', mod);
  put('probe.target', target, target === 'krtfix_target' ? mod : `lab: ${obs.bundle}/scenario.json loads (symbol=)`);
  if (target === 'krtfix_target') put('probe.target_module', 'krtfix', mod);
  if (!obs.registered) {
    const r = obs.refused;
    const from = r?.dmesgLine === undefined ? `lab: ${obs.bundle}/scenario.json register_rc` : `lab: ${obs.bundle}/register.dmesg:${r.dmesgLine}`;
    put('probe.registration.result', r?.errno ?? 'unknown', from);
    // insmod prints only strerror, and for ENOENT busybox's wording blames the module's symbols:
    // the kernel's own line comes first.
    const said = [r?.code === undefined ? undefined : `register_kretprobe failed, returned -${r.code}`, r?.insmod].filter((x) => x !== undefined).join('; ');
    if (said !== '') put('probe.registration.reason', said, `${from}; ${obs.bundle}/scenario.json register_err (insmod's message)`);
    put('probe.armed', false, `lab: ${obs.bundle}/scenario.json register_rc (insmod failed: the module never loaded)`);
    put('probe.entry_handler.present', true, mod);
    put('probe.maxactive.requested', Number(params.get('maxactive') ?? '0'), `lab: ${obs.bundle}/scenario.json loads`);
  } else {
    const end = obs.counters.end;
    const start = obs.counters.start;
    put('probe.registration.result', 'ok', `lab: ${obs.bundle}/scenario.json register_rc`);
    put('probe.registration.epoch', typeof end?.epoch === 'string' ? end.epoch : undefined, `lab: ${obs.bundle}/end/module_counters`);
    put('probe.armed', true, mod);
    const requested = Number(params.get('maxactive') ?? '0');
    put('probe.maxactive.requested', requested, `lab: ${obs.bundle}/scenario.json loads`);
    put('probe.maxactive.effective', num(obs.counters.registered?.maxactive ?? end?.maxactive), `lab: ${obs.bundle}/registered.counters maxactive (rp.maxactive after register_kretprobe)`);
    put('probe.entry_handler.present', true, mod);
    put('probe.entry_handler.can_filter', (params.get('filter_tag') ?? '') !== '', `${mod}, filter_tag`);
    put('probe.per_instance_data', true, `${mod}: data_size = sizeof(struct krtfix_inst)`);
    for (const [k, v] of Object.entries({ may_sleep: false, blocking_locks: false, does_io: false, heavy_printk: false, bounded_storage: true })) {
      put(`probe.handler.${k}`, v, `${mod}: handlers write a bounded ring under a spinlock`);
    }
    put('coverage.inlined_call_sites', 'none', `${mod}: krtfix_target is noinline and reached only through debugfs krtfix/call`);
    put('counters.source', 'module-field', `lab: ${obs.bundle}/end/module_counters`);
    for (const [phase, snap] of [['start', start], ['end', end]] as const) {
      if (!snap) continue;
      const from = `lab: ${obs.bundle}/${phase}/module_counters`;
      put(`counters.${phase}.epoch`, typeof snap.epoch === 'string' ? snap.epoch : undefined, from);
      put(`counters.${phase}.nmissed`, num(snap.nmissed), from);
      put(`counters.${phase}.kprobe_nmissed`, num(snap.kp_nmissed), from);
      put(`counters.${phase}.hits`, num(snap.returns), `${from} returns`);
    }
    const calls = obs.ops.length;
    const depth = obs.bundle === 'mod-recursion' ? 3 : 1;
    const harness = 'lab: the fixture harness (lab/guest/init.sh)';
    put('concurrency.target_sleeps', true, mod);
    put('concurrency.workers', calls, harness);
    put('concurrency.recursion_depth', depth, harness);
    put('concurrency.estimated_max_overlap', calls * depth, harness);
    put('concurrency.capacity_basis', requested <= 0 ? 'default' : 'caller-model', `lab: ${obs.bundle}/scenario.json loads`);
    put('fixture.synthetic', true, mod);
    put('fixture.gated', true, mod);
    put('fixture.gate_holds_shared_resource', false, `${mod}: the gate is a wait queue of its own`);
    put('fixture.live_driver_path', false, mod);
    if (obs.gated) put('fixture.overlap_verified', obs.gated.all_blocked, `lab: ${obs.bundle}/gate.log (the module's held count before the release)`);
    put('ledger.workload_quiesced', obs.captureStopNs === undefined, `lab: ${obs.bundle}/scenario.json capture_stop_ns`);
    const sameEpoch = start !== undefined && end !== undefined && start.epoch === end.epoch;
    const s0 = num(start?.nmissed);
    const s1 = num(end?.nmissed);
    const probe = path.join(obs.dir, 'probe.jsonl');
    const report = await readLedger({
      opsFile: path.join(obs.dir, 'ops.jsonl'),
      trace: { name: probe, stream: Readable.from([timeOrdered(await fs.readFile(probe, 'utf8'))]) },
      format: 'jsonl',
      captureStopNs: obs.captureStopNs,
      nmissedDelta: sameEpoch && s0 !== undefined && s1 !== undefined ? s1 - s0 : undefined,
    });
    for (const [k, v] of Object.entries(caseUpdates(report))) {
      if (v === undefined || v === null) continue;
      put(k, v, `lab: ledger of ${obs.bundle}/ops.jsonl against ${obs.bundle}/probe.jsonl`);
    }
    if (obs.ops.length > 0 && obs.ops.every((o) => o.done_ns !== null || o.done_after_stop_ns !== undefined)) {
      put('coverage.unusual_return', false, `lab: every operation of ${obs.bundle}/ops.jsonl completed after the release`);
    }
  }
  if (Object.keys(provenance).length > 0) data.provenance = provenance;
  return writeAndEvaluate(data, obs.dir, obs.bundle, ctx);
}

/**
 * The session a user would paste from a bpftrace bundle: the bpftrace command and its output,
 * `bpftool link show` (text and JSON) and `bpftool prog show`, each after its prompt, in one
 * fenced block of a Markdown note. Pure.
 */
export function bpftracePaste(parts: { script: string; output: string; links: string; linksJson: string; progs: string }): string {
  const fence = '```';
  return [
    '# bpftrace under the krtfix gate (kretprobe-triage lab)',
    '',
    fence,
    `# bpftrace -e '${parts.script.trim()}'`,
    parts.output.trimEnd(),
    '# bpftool link show',
    parts.links.trimEnd(),
    '# bpftool -j link show',
    parts.linksJson.trimEnd(),
    '# bpftool prog show',
    parts.progs.trimEnd(),
    fence,
    '',
  ].join('\n');
}

/**
 * A bpftrace bundle -> case -> verdict. The artifacts a user would paste (bpftrace.out and the
 * bpftool outputs, taken while the calls were held) are read as a pasted write-up, with the
 * write-up reader (src/writeup/extract.ts, which uses the src/evidence parsers): its artifact
 * facts go into the case as they are, so the lab checks what a paste tells. The kernel's files
 * come from the bundle's snapshots, the caller model from the harness. The module's own counters
 * are the truth the lab asserts (run.ts), not facts of the case: a user has no such module.
 */
export async function triageBpftraceBundle(
  obs: BpftraceObservation,
  ctx: { kernel: LabKernel; rules: Rules; expected: LabExpectation | undefined; date: string },
): Promise<LabTriage> {
  const dir = obs.module.dir;
  const bundle = obs.module.bundle;
  const release = obs.module.release ?? ctx.kernel.release;
  const read = (name: string): Promise<string> => fs.readFile(path.join(dir, name), 'utf8').catch(() => '');
  const paste = bpftracePaste({
    script: await read('script.bt'),
    output: await read('bpftrace.out'),
    links: await read('bpftool-link.txt'),
    linksJson: await read('bpftool-link.json'),
    progs: await read('bpftool-prog.txt'),
  });
  const pasteFile = path.join(dir, 'paste.md');
  await fs.writeFile(pasteFile, paste);
  const x = extractWriteup(paste, pasteFile, await loadLexicon());
  const built = await caseFromBundle(dir, {
    symbol: 'krtfix_target',
    id: `lab-${ctx.kernel.series.replace(/\./g, '-')}-${bundle}`,
    title: `Lab: bpftrace ${((await read('script.bt')).trim().split(/[\s{]/)[0]) || '?'} (${obs.bpftraceVersion ?? '?'}) on Linux ${release}`,
    source: `kretprobe-triage lab on Linux ${release} (QEMU TCG, possible CPUs ${obs.module.possibleCpus ?? '?'}), ${obs.bpftraceVersion ?? 'bpftrace'}, ${obs.bpftoolVersion ?? 'bpftool'}, ${ctx.date}`,
  });
  const data = built.case as Obj;
  const provenance = (data.provenance ?? {}) as Record<string, string>;
  for (const f of x.facts) {
    if (f.origin !== 'artifact') continue;
    setPath(data, f.path, f.value);
    provenance[f.path] = `lab: ${bundle}/paste.md:${f.line} (${f.via}, read as a pasted write-up)`;
  }
  const harness = 'lab: the fixture harness (lab/guest/init.sh)';
  // The module is the target's unless the script probes a core function (fexit:vfs_write).
  const target = x.facts.find((f) => f.origin === 'artifact' && f.path === 'probe.target')?.value;
  const facts: Record<string, unknown> = {
    ...(target === undefined || String(target).startsWith('krtfix') ? { 'probe.target_module': 'krtfix' } : {}),
    'concurrency.target_sleeps': true,
    'concurrency.workers': obs.module.ops.length,
    'concurrency.recursion_depth': 1,
    'concurrency.estimated_max_overlap': obs.module.ops.length,
    'concurrency.capacity_basis': 'caller-model',
    'coverage.inlined_call_sites': 'none',
    'fixture.synthetic': true,
    'fixture.gated': true,
    'fixture.gate_holds_shared_resource': false,
    'fixture.live_driver_path': false,
    'ledger.workload_quiesced': true,
  };
  if (obs.module.gated) facts['fixture.overlap_verified'] = obs.module.gated.all_blocked;
  for (const [k, v] of Object.entries(facts)) {
    setPath(data, k, v);
    provenance[k] = harness;
  }
  // The fixture's own record of its calls, as a user who drove a known workload has it: how many
  // reached the target, and that each came back (the reader got its EOF and exited). bpftrace
  // counts only what its probe saw; this is the independent side of the comparison.
  const ops = obs.module.ops;
  if (ops.length > 0) {
    setPath(data, 'ledger.eligible', ops.filter((o) => o.reaches_target).length);
    provenance['ledger.eligible'] = `lab: ${bundle}/ops.jsonl (the fixture's calls that reach the target)`;
    if (ops.every((o) => o.done_ns !== null || o.done_after_stop_ns !== undefined)) {
      setPath(data, 'coverage.unusual_return', false);
      provenance['coverage.unusual_return'] = `lab: every operation of ${bundle}/ops.jsonl completed after the release`;
    }
  }
  if (Object.keys(provenance).length > 0) data.provenance = provenance;
  return writeAndEvaluate(data, dir, bundle, ctx);
}

/**
 * The module's records in time order. Its ring holds them in the order the handlers appended
 * them, and on two CPUs a handler that read the clock later can append first (a few hundred ns
 * apart), which the ledger rightly calls records going backwards. A user sorts such a file before
 * handing it to the ledger (ledger-format.md: records in time order); so does the lab. A stable
 * sort by ts_ns: records of the same instant keep their order, a line without a stamp stays first.
 */
export function timeOrdered(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const stamp = (l: string) => {
    const m = /"ts_ns":\s*(\d+)/.exec(l);
    return m ? Number(m[1]) : -Infinity;
  };
  const keyed = lines.map((l, i) => ({ l, i, t: stamp(l) }));
  keyed.sort((a, b) => a.t - b.t || a.i - b.i);
  return keyed.map((k) => `${k.l}\n`).join('');
}
