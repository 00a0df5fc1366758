import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ARTIFACT_READERS, kindOfCommand, kindOfFile, sniffArtifact, type ArtifactKind } from '../../src/evidence/artifacts.js';
import { caseFromSnapshots } from '../../src/evidence/bundle.js';
import { observeBundle, type LabObservation } from '../../src/lab/observe.js';
import { extractWriteup, loadLexicon, type Lexicon } from '../../src/writeup/index.js';

type Obj = Record<string, unknown>;
const at = (c: Obj, p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Obj)[k] : undefined), c);

/**
 * One artifact, three contexts: the collector's snapshot file (`case from-bundle`), a block pasted
 * in a write-up under the command that printed it, and a lab bundle from the guest console. Each
 * row's expected case facts must come out of all three the same: they read through one table.
 */
interface Row {
  kind: ArtifactKind;
  /** The snapshot file name (collector/collect.sh) and the command a write-up shows. */
  file: string;
  command: string;
  text: string;
  /** Case facts every context must state. */
  facts: Record<string, unknown>;
  /** The same facts as the lab's observation names them. */
  lab: Partial<Record<keyof LabObservation, unknown>>;
  /** Why the collector's bundle is not a context of this artifact (it does not snapshot the file). */
  noBundle?: string;
}

const ROWS: Row[] = [
  { kind: 'uname', file: 'uname_r', command: 'uname -r', text: '6.12.95+deb12-amd64\n', facts: { 'kernel.release': '6.12.95+deb12-amd64' }, lab: { release: '6.12.95+deb12-amd64' } },
  { kind: 'cpu_possible', file: 'cpu_possible', command: 'cat /sys/devices/system/cpu/possible', text: '0-1\n', facts: { 'kernel.possible_cpus': 2 }, lab: {} },
  { kind: 'kprobe_events', file: 'kprobe_events', command: 'cat /sys/kernel/tracing/kprobe_events', text: 'r2:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n', facts: { 'probe.maxactive.effective': 2, 'probe.target': 'pipe_read', 'probe.interface': 'tracefs', 'probe.registration.result': 'ok' }, lab: { maxactive: 2 } },
  {
    // An fprobe exit event (6.5 to 6.13 with its fN: pool) reads back only from dynamic_events (kernel/trace/trace_fprobe.c trace_fprobe_show).
    kind: 'dynamic_events', file: 'dynamic_events', command: 'cat /sys/kernel/tracing/dynamic_events',
    text: 'f2:kfix/gate pipe_read%return arg1=$retval\np:kfix/gate_entry pipe_read\n',
    facts: { 'probe.maxactive.effective': 2, 'probe.target': 'pipe_read', 'probe.interface': 'fprobe', 'probe.registration.result': 'ok' }, lab: { maxactive: 2 },
    noBundle: 'collector/collect.sh snapshots kprobe_events, where an fprobe event never shows, and not dynamic_events',
  },
  {
    kind: 'kprobe_profile', file: 'kprobe_profile', command: 'cat /sys/kernel/tracing/kprobe_profile',
    text: '  gate                                                       2               1\n  gate_entry                                                 3               0\n',
    facts: { 'counters.end.nmissed': 1, 'counters.end.hits': 2 }, lab: { returnHits: 2, returnMisses: 1, entryHits: 3 },
  },
  {
    kind: 'error_log', file: 'error_log', command: 'cat /sys/kernel/tracing/error_log',
    text: '[   14.184300] trace_kprobe: error: Invalid probed address or symbol\n  Command: r:kfix/gate no_such_function_xyz\n' + ' '.repeat(23) + '^\n',
    facts: { 'probe.registration.reason': 'Invalid probed address or symbol (at "no_such_function_xyz")' }, lab: { errorReason: 'Invalid probed address or symbol' },
  },
  {
    // tracefs per_cpu/cpuN/stats (v6.12 kernel/trace/trace.c tracing_stats_read), each after `CPU: N` as the collector writes them.
    kind: 'buffer_stats', file: 'buffer_stats', command: 'cat /sys/kernel/tracing/per_cpu/cpu1/stats',
    text: 'CPU: 1\nentries: 40\noverrun: 7\ncommit overrun: 0\nbytes: 1600\noldest event ts:     3.995828\nnow ts:     7.200000\ndropped events: 2\nread events: 0\n',
    facts: { 'ledger.lost_events': 9 }, lab: {},
  },
];

let lex: Lexicon;
let tmp: string;
beforeAll(async () => {
  lex = await loadLexicon();
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-contexts-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

const MANIFEST = 'format=kretprobe-bundle/v1\nphase=end\nevents=kfix/gate kfix/gate_entry\n';

describe('every artifact kind reads the same through bundle, write-up and lab', () => {
  it.each(ROWS)('$kind', async (row) => {
    // The table knows it by its file, its command and (for most) its text alone.
    expect([kindOfFile(row.file), kindOfCommand(row.command)]).toEqual([row.kind, row.kind]);

    // Bundle: a snapshot holding the file (with the definition, so counters have their event).
    const files: Record<string, string> = { manifest: MANIFEST, missing: '', [row.file]: row.text };
    if (row.file !== 'kprobe_events' && row.file !== 'error_log' && row.file !== 'dynamic_events') files.kprobe_events = 'r2:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n';
    if (row.file === 'error_log' || row.file === 'dynamic_events') files.kprobe_events = '';
    const bundle = caseFromSnapshots({ end: files }).case;

    // Write-up: the same text under its command.
    const defs = files.kprobe_events && row.file !== 'kprobe_events' ? `$ cat /sys/kernel/tracing/kprobe_events\n${files.kprobe_events}` : '';
    const md = `# t\n\n\`\`\`\n${defs}$ ${row.command}\n${row.text}\`\`\`\n`;
    const writeup = extractWriteup(md, 'ctx.md', lex).case as unknown as Obj;

    // Lab: the same file where the guest puts it.
    const dir = path.join(tmp, row.kind);
    await fs.mkdir(path.join(dir, 'end'), { recursive: true });
    await fs.writeFile(path.join(dir, 'scenario.json'), JSON.stringify({ register_rc: [0] }));
    await fs.writeFile(path.join(dir, row.file === 'kprobe_events' || row.file === 'dynamic_events' ? `registered.${row.file}` : path.join('end', row.file)), row.text);
    const lab = await observeBundle(dir);

    for (const [p, v] of Object.entries(row.facts)) {
      if (!row.noBundle) expect(['bundle', p, at(bundle, p)]).toEqual(['bundle', p, v]);
      expect(['write-up', p, at(writeup, p)]).toEqual(['write-up', p, v]);
    }
    for (const [k, v] of Object.entries(row.lab)) expect(['lab', k, lab[k as keyof LabObservation]]).toEqual(['lab', k, v]);
    // The lab keeps the table's facts of the artifact, the same list a write-up's block yields.
    const labFacts = lab.artifactFacts?.[row.file as keyof NonNullable<LabObservation['artifactFacts']>];
    expect(labFacts?.length ?? 0).toBeGreaterThan(0);
  });

  it('every reader with a snapshot file is recognised by it, and a pasted profile without its command by its text', () => {
    for (const r of ARTIFACT_READERS) for (const f of r.files ?? []) expect([f, kindOfFile(f)]).toEqual([f, r.kind]);
    for (const kind of ['kprobe_profile', 'error_log', 'dynamic_events'] as const) expect(sniffArtifact(ROWS.find((r) => r.kind === kind)!.text)).toBe(kind);
  });
});
