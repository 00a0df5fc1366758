import path from 'node:path';
import { parseBpftoolLinks, parseBpftoolLinksJson, parseBpftoolProgs, type BpfLink, type BpfProg } from '../evidence/bpftool.js';
import { parseBpftraceOutput, type BpftraceResult } from '../evidence/bpftrace.js';
import { observeModuleBundle, type ModuleObservation } from './moduleObserve.js';
import { readText } from './observe.js';

/**
 * What one bpftrace bundle shows (issue 22): the module's own counters (ground truth: every call,
 * held at once) beside what a user would paste, each read with the project's own artifact
 * parsers (src/evidence/bpftrace.ts, bpftool.ts), the ones write-ups and bundles use.
 */
export interface BpftraceObservation {
  module: ModuleObservation;
  /** `bpftrace --version` and `bpftool version`, first lines. */
  bpftraceVersion: string | undefined;
  bpftoolVersion: string | undefined;
  output: BpftraceResult;
  /** `@returns` as bpftrace printed it on exit: the returns its kretprobe saw. */
  returns: number | undefined;
  /** bpftool link show while the calls were held: text and JSON, and after the release (text). */
  links: { text: BpfLink[]; json: BpfLink[]; released: BpfLink[] };
  /** The link on krtfix_target in the text and in the JSON form, if there is one. */
  targetLink: { text: BpfLink | undefined; json: BpfLink | undefined };
  progs: BpfProg[];
  /** bpftool prog show after the release (a bundle recorded before it was captured has none). */
  progsReleased: BpfProg[] | undefined;
  /**
   * Runs of bpftrace's program the kernel skipped because a run was already active on the CPU
   * (recursion_misses, printed only when nonzero), after the release: 0 when the line shows none.
   */
  recursionMisses: number;
  /** kprobes/list lines on krtfix_target once bpftrace attached (the module's own probe and its). */
  probesOnTarget: number | undefined;
  /** Guest steps that ran into their timeout (lab/guest/init.sh wait_pid): each one a failure. */
  stepTimeouts: string[];
  problems: string[];
}

/**
 * The link bpftrace made for the script: a kprobe perf link on krtfix_target, a kprobe_multi link
 * whose functions include it, or a tracing (fexit) link. Only bpftrace makes links in the guest.
 */
const onTarget = (links: BpfLink[]): BpfLink | undefined =>
  links.find((l) => l.kprobe?.func === 'krtfix_target' || l.kprobe?.func?.startsWith('krtfix_target+') === true || l.multi !== undefined || l.tracing !== undefined);

/** The `missed` a link shows: a kprobe perf link's or a kprobe_multi link's; undefined when it has no such field. */
export const linkMissed = (l: BpfLink | undefined): number | undefined => l?.kprobe?.missed ?? l?.multi?.missed;

export async function observeBpftraceBundle(dir: string): Promise<BpftraceObservation> {
  const module = await observeModuleBundle(dir);
  const problems: string[] = [];
  const text = async (name: string): Promise<string> => {
    const t = await readText(path.join(dir, name));
    if (t === undefined) problems.push(`no ${name}`);
    return t ?? '';
  };
  const output = parseBpftraceOutput(await text('bpftrace.out'));
  for (const p of output.problems) problems.push(`bpftrace.out:${p.line}: expected ${p.expected}; got ${p.got}`);
  const linkText = parseBpftoolLinks(await text('bpftool-link.txt'));
  const linkJson = parseBpftoolLinksJson((await text('bpftool-link.json')).trim() || '[]');
  const released = parseBpftoolLinks(await text('bpftool-link-released.txt'));
  const progs = parseBpftoolProgs(await text('bpftool-prog.txt'));
  const releasedText = await readText(path.join(dir, 'bpftool-prog-released.txt'));
  const progsReleased = releasedText === undefined ? undefined : parseBpftoolProgs(releasedText);
  for (const p of progsReleased?.problems ?? []) problems.push(`bpftool-prog-released.txt:${p.line}: expected ${p.expected}; got ${p.got}`);
  // bpftrace's program on the return (the guest runs no other BPF program): kprobe or tracing.
  const retProg = progsReleased?.progs.find((p) => p.type === 'kprobe' || p.type === 'tracing');
  for (const [name, r] of [['bpftool-link.txt', linkText], ['bpftool-link.json', linkJson], ['bpftool-link-released.txt', released], ['bpftool-prog.txt', progs]] as const) {
    for (const p of r.problems) problems.push(`${name}:${p.line}: expected ${p.expected}; got ${p.got}`);
  }
  const first = async (name: string): Promise<string | undefined> => (await readText(path.join(dir, name)))?.split('\n')[0]?.trim();
  const meta = JSON.parse((await readText(path.join(dir, 'scenario.json'))) ?? '{}') as { bpftrace_attached?: number; step_timeouts?: string[] };
  const stepTimeouts = meta.step_timeouts ?? [];
  for (const s of stepTimeouts) problems.push(`guest step ${s} ran into its timeout`);
  return {
    module,
    bpftraceVersion: await first('bpftrace.version'),
    bpftoolVersion: await first('bpftool.version'),
    output,
    returns: output.maps.find((m) => m.name === 'returns' && m.key === undefined)?.value,
    links: { text: linkText.links, json: linkJson.links, released: released.links },
    targetLink: { text: onTarget(linkText.links), json: onTarget(linkJson.links) },
    progs: progs.progs,
    progsReleased: progsReleased?.progs,
    recursionMisses: retProg?.recursionMisses ?? 0,
    probesOnTarget: meta.bpftrace_attached,
    stepTimeouts,
    problems,
  };
}
