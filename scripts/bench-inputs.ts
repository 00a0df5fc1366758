// Inputs shared by the benches: generated cases (the shipped reference cases, renamed and with
// their numbers varied) and generated write-ups (postmortems of ~300 lines around a shipped
// write-up, and the dense worst case), written to a temporary folder as a user's tree would be.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import jsYaml from 'js-yaml';
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

/**
 * The case text generator: the shipped cases (not the write-ups), renamed and with their totals
 * varied so that each keeps its meaning. Every case gets one shift `d` added to the totals that
 * count calls (`ledger` eligible, entries, returns and entry events, and the end snapshot's hit
 * count), so every difference between them (missing returns, the accounting identity, the
 * counter deltas) and every bound against the pool or the demand stays what the reference case
 * has. A case keeps its numbers where one of them is 0 (nothing entered, nothing returned: that
 * zero is what the case is about) and where a fixture gates its calls (there every eligible call
 * is inside the function at once, so the count is the demand). Varying each number on its own (an earlier version) made
 * most generated cases contradict themselves (returns above entries, an identity that no longer
 * balances), which is not what users audit. `sameMeaning` says how many generated cases get
 * their reference case's expected verdict (the benches print it).
 */
export async function caseGenerator(seed = 42): Promise<{ templates: number; text: (i: number) => string; expected: (i: number) => string | undefined }> {
  const texts = await Promise.all((await expandCasePaths([path.join(root, 'cases')])).map((f) => fs.readFile(f, 'utf8')));
  const templates = texts.map((t) => jsYaml.load(t) as Record<string, unknown>);
  const rand = lcg(seed);
  const TOTALS = ['eligible', 'entries', 'returns', 'entry_events'] as const;
  const obj = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
  return {
    templates: templates.length,
    expected: (i) => obj(templates[i % templates.length]!.expected)?.verdict as string | undefined,
    text: (i) => {
      const c = structuredClone(templates[i % templates.length]!);
      c.id = `bench-${i}`;
      delete c.expected;
      const ledger = obj(c.ledger);
      const end = obj(obj(c.counters)?.end);
      const places: Array<[Record<string, unknown>, string]> = [];
      for (const k of TOTALS) if (ledger && typeof ledger[k] === 'number') places.push([ledger, k]);
      if (end && typeof end.hits === 'number') places.push([end, 'hits']);
      const d = 1 + rand(40);
      const gated = obj(c.fixture)?.gated === true;
      if (!gated && !places.some(([o, k]) => o[k] === 0)) for (const [o, k] of places) o[k] = (o[k] as number) + d;
      return jsYaml.dump(c, { lineWidth: -1 });
    },
  };
}

/**
 * The write-up generators: `realistic(i)`, a postmortem of `lines` lines that is mostly prose
 * (summary, timeline, impact, follow-ups) around a few pasted blocks, with the findings of one
 * shipped write-up of `dir` (numbers varied) in the middle; `stitched(i)`, the dense worst case,
 * shipped write-ups one after another until the document has `lines` lines.
 */
export async function writeupGenerator(dir: string, LINES: number, seed = 7): Promise<{ realistic: (i: number) => string; stitched: (i: number) => string }> {
  const rand = lcg(seed);
  const parts: string[] = [];
  for (const name of (await fs.readdir(dir)).filter((n) => n.endsWith('.md')).sort()) {
    const text = await fs.readFile(path.join(dir, name), 'utf8');
    parts.push(text.replace(/^---\n[\s\S]*?\n---\n/, ''));
  }
  const vary = (t: string) => t.replace(/\b(\d{2,5})\b(?![.\d-])/g, (d) => String(Number(d) + rand(50)));
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;

  // Prose of a postmortem around the investigation: words the lexicons look for ("return",
  // "threads", "stuck", "latency", "worker") occur, as they do in real prose, so the sentence
  // patterns really run; numbers are dates, durations and ticket ids.
  const SERVICES = ['the build farm', 'the object store', 'the NFS gateway', 'the ingest pipeline', 'the CI runners', 'the metrics cluster'];
  const PEOPLE = ['Ana', 'Bram', 'Chen', 'Dara', 'Emeka', 'Farah', 'Goran', 'Hana'];
  const PROSE: Array<() => string> = [
    () => `Around ${rand(24)}:${10 + rand(50)} UTC the on-call engineer was paged because requests to ${pick(SERVICES)} took longer than the alert threshold of ${1 + rand(9)} seconds.`,
    () => `${pick(PEOPLE)} looked at the dashboards first and saw that the queue depth grew steadily while the request rate stayed flat, which pointed at something slow rather than something overloaded.`,
    () => `The first theory was a network problem between the racks, so we compared packet loss on both sides and found nothing out of the ordinary for the whole window.`,
    () => `We restarted one of the worker processes to see whether the slowdown followed the process or the host; it followed the host, which narrowed the search to the kernel and the storage below it.`,
    () => `Customers noticed: ${rand(40) + 3} support tickets were opened during the incident, most of them about uploads that timed out after the client's retry budget ran out.`,
    () => `The latency of the affected calls was visible in the application metrics long before the kernel side was looked at, and the graphs from that time are attached to ticket OPS-${1000 + rand(8000)}.`,
    () => `Nobody changed the configuration of ${pick(SERVICES)} in the week before the incident, and the last kernel update on these hosts was rolled out ${2 + rand(20)} days earlier.`,
    () => `${pick(PEOPLE)} wrote a small reproducer that opens files in a loop from several threads and measures how long each call takes to come back to user space.`,
    () => `The reproducer showed the same pattern on a spare host, which meant we could experiment without touching production traffic any further.`,
    () => `We agreed to keep the timeline in this document and the raw notes in the incident channel, so that the review could follow what was known at each point.`,
    () => `The storage team confirmed that the disks reported no errors and that the controller firmware had not changed since the spring.`,
    () => `At the incident review we went through every step below and marked which conclusions were supported by data and which were guesses made under time pressure.`,
    () => `Rolling back the last application release made no difference, which ruled out our own code as the trigger and moved attention to the host.`,
    () => `The on-call rotation was handed over at ${rand(24)}:00 and the new engineer continued from the notes without having to repeat any measurement.`,
    () => `Error budgets for the quarter were affected: the service spent about ${rand(30) + 5} percent of its monthly budget during the incident.`,
    () => `We also looked at memory pressure and swap activity on the hosts, and both stayed well within their normal ranges for the whole period.`,
    () => `A second alert fired for the batch jobs, but it turned out to be a consequence of the same slowdown rather than a separate problem.`,
    () => `The team lead asked for a written summary before the end of the day, which is the origin of this document.`,
  ];
  const BLOCKS: Array<() => string[]> = [
    () => ['```', `$ uptime`, ` ${rand(24)}:${10 + rand(50)}:0${rand(9)} up ${rand(300)} days,  3 users,  load average: ${rand(20)}.${rand(99)}, ${rand(20)}.${rand(99)}, ${rand(20)}.${rand(99)}`, `$ free -m`, `               total        used        free      shared  buff/cache   available`, `Mem:           ${64000 + rand(900)}       ${20000 + rand(900)}        ${1000 + rand(900)}         ${rand(900)}       ${40000 + rand(900)}       ${42000 + rand(900)}`, '```'],
    () => ['```', ...Array.from({ length: 6 }, (_, i) => `2024-05-${10 + rand(18)}T0${rand(9)}:${10 + i * 7}:${10 + rand(49)}Z app[${1000 + rand(9000)}]: request ${rand(99999)} took ${100 + rand(9000)} ms (limit 1000 ms)`), '```'],
    () => ['```', `$ cat /proc/${1000 + rand(9000)}/stack`, `[<0>] io_schedule+0x42/0x70`, `[<0>] folio_wait_bit_common+0x13d/0x350`, `[<0>] filemap_get_pages+0x5e1/0x620`, `[<0>] filemap_read+0xd2/0x340`, `[<0>] vfs_read+0x1e8/0x2c0`, `[<0>] ksys_read+0x6f/0xf0`, `[<0>] do_syscall_64+0x59/0x90`, '```'],
    () => ['```ini', '[global]', `ioengine=libaio`, `direct=1`, `runtime=${60 + rand(240)}`, '', '[randread]', `rw=randread`, `bs=4k`, `iodepth=${1 << rand(6)}`, '```'],
  ];
  const HEADINGS = ['## Timeline', '## Impact', '## Background', '## What we tried first', '## Root cause analysis', '## Follow-ups', '## Lessons learned', '## Appendix: notes'];

  function paragraph(): string[] {
    const sentences = Array.from({ length: 2 + rand(4) }, () => pick(PROSE)());
    // Wrapped at ~100 columns, as an editor does.
    const lines: string[] = [];
    let line = '';
    for (const w of sentences.join(' ').split(' ')) {
      if (line && line.length + w.length + 1 > 100) { lines.push(line); line = w; } else line = line ? `${line} ${w}` : w;
    }
    if (line) lines.push(line);
    return [...lines, ''];
  }

  function realistic(i: number): string {
    const core = vary(parts[i % parts.length]!).split('\n').filter((l) => !/^# /.test(l));
    const out: string[] = [`# Postmortem ${i}: slow requests on ${pick(SERVICES)}`, '', '## Summary', '', ...paragraph()];
    const at = 60 + rand(120);
    let blocks = 0;
    let inserted = false;
    while (out.length < LINES) {
      if (!inserted && out.length >= at) {
        out.push('## The return probe investigation', '', ...core, '');
        inserted = true;
        continue;
      }
      if (rand(6) === 0) out.push(pick(HEADINGS), '');
      out.push(...paragraph());
      if (blocks < 4 && rand(5) === 0) {
        blocks++;
        out.push(...pick(BLOCKS)(), '');
      }
    }
    if (!inserted) out.splice(out.length - core.length - 2, core.length + 2, '## The return probe investigation', '', ...core);
    return `${out.slice(0, LINES).join('\n')}\n`;
  }

  function stitched(i: number): string {
    const out: string[] = [`# Generated write-up ${i}`, ''];
    let k = i;
    while (out.length < LINES) out.push(...vary(parts[k++ % parts.length]!).split('\n'));
    return `${out.slice(0, LINES).join('\n')}\n`;
  }
  return { realistic, stitched };
}
