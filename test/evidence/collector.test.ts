import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { caseFromBundle } from '../../src/evidence/bundle.js';
import { main } from '../../src/cli.js';
import type { Io } from '../../src/io.js';
import { hasTool } from '../support/tools.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(REPO, 'collector', 'collect.sh');

/** The shells the collector must run under; without one its tests skip and test/deps.test.ts fails. */
const SHELLS: Array<{ name: string; argv: string[] }> = [
  { name: 'busybox ash', argv: ['busybox', 'sh'] },
  { name: 'dash', argv: ['dash'] },
  { name: 'bash', argv: ['bash', '--posix'] },
];

function requireShell(argv: string[], skip: (note?: string) => void): void {
  if (!hasTool(argv[0]!)) skip(`${argv[0]} is not installed (test/deps.test.ts fails for it)`);
}

const slug = (name: string) => name.replace(/\W+/g, '-');
/** The bundle every other shell's must equal: the first shell of SHELLS that is installed. */
const REFERENCE_SHELL = SHELLS.find((s) => hasTool(s.argv[0]!))?.name ?? SHELLS[0]!.name;

let work: string;

async function write(root: string, rel: string, content: string | Buffer): Promise<void> {
  const file = path.join(root, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, content);
}

const profile = (rows: Array<[string, number, number]>): string =>
  rows.map(([n, h, m]) => `  ${n.padEnd(44)} ${String(h).padStart(15)} ${String(m).padStart(15)}\n`).join('');

/** tracefs per_cpu/cpuN/stats as v6.12 prints it (kernel/trace/trace.c tracing_stats_read). */
const stats = (entries: number, overrun: number) =>
  `entries: ${entries}\noverrun: ${overrun}\ncommit overrun: 0\nbytes: ${entries * 40}\noldest event ts:     3.995828\nnow ts:     7.200000\ndropped events: 0\nread events: 0\n`;

const TRACE_HEAD = '# tracer: nop\n#\n#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n#              | |         |   |||||     |         |\n';

/** A fake machine under investigation, 6.12 layout unless `legacy` puts tracefs under debugfs. */
async function fakeTree(root: string, opts: { legacy?: boolean; withDebugfs?: boolean } = {}): Promise<void> {
  const tr = opts.legacy ? 'sys/kernel/debug/tracing' : 'sys/kernel/tracing';
  await write(root, 'proc/sys/kernel/osrelease', '6.12.95+deb12-amd64\n');
  await write(root, 'proc/sys/kernel/arch', 'x86_64\n');
  await write(root, 'proc/version', 'Linux version 6.12.95+deb12-amd64 (debian-kernel@lists.debian.org) (gcc-12) #1 SMP PREEMPT_DYNAMIC Debian 6.12.95-1~bpo12+1\n');
  await write(root, 'proc/uptime', '3.10 5.00\n');
  await write(root, 'sys/devices/system/cpu/possible', '0-1\n');
  await write(root, 'boot/config-6.12.95+deb12-amd64', 'CONFIG_SMP=y\nCONFIG_KPROBES=y\nCONFIG_KRETPROBES=y\nCONFIG_KPROBE_EVENTS=y\nCONFIG_KRETPROBE_ON_RETHOOK=y\nCONFIG_FPROBE=y\nCONFIG_EXT4_FS=y\n');
  await write(root, `${tr}/kprobe_events`, 'r2:kfix/gate pipe_read arg1=$retval\np:kfix/gate_entry pipe_read\n');
  await write(root, `${tr}/kprobe_profile`, profile([['gate', 0, 0], ['gate_entry', 0, 0]]));
  await write(root, `${tr}/error_log`, '');
  await write(root, `${tr}/tracing_on`, '1\n');
  await write(root, `${tr}/trace`, TRACE_HEAD);
  for (const cpu of [0, 1]) await write(root, `${tr}/per_cpu/cpu${cpu}/stats`, stats(0, 0));
  await write(root, `${tr}/events/kfix/gate/enable`, '1\n');
  await write(root, `${tr}/events/kfix/gate_entry/enable`, '1\n');
  if (opts.withDebugfs !== false) {
    await write(root, 'sys/kernel/debug/kprobes/list', 'ffffffff9985f794  k  pipe_read+0x4    [FTRACE]\nffffffff9985f794  r  pipe_read+0x4    [FTRACE]\n');
    await write(root, 'sys/kernel/debug/kprobes/enabled', '1\n');
    const bl = ['0xffffffff9a201030-0xffffffff9a201050\tasm_exc_divide_error', '0xffffffff9a201060-0xffffffff9a201080\tdo_int3', '0xffffffff9a201090-0xffffffff9a2010a0\tpipe_readv'];
    await write(root, 'sys/kernel/debug/kprobes/blacklist', `${bl.join('\n')}\n`);
  }
  const syms = ['ffffffff9985f780 t __pfx_pipe_read', 'ffffffff9985f790 t pipe_read', 'ffffffff99405470 t pipe_read.isra.0', 'ffffffff99405570 t pipe_readv', 'ffffffff99405670 T vfs_read', 'ffffffffc0001000 t pipe_read_mod\t[foo]'];
  await write(root, 'proc/kallsyms', `${syms.join('\n')}\n`);
}

/** The test run on the fake tree: gated, then released (kernel-notes r2 scenario). */
async function runTheTest(root: string, tr = 'sys/kernel/tracing'): Promise<void> {
  await write(root, `${tr}/kprobe_profile`, profile([['gate', 2, 1], ['gate_entry', 3, 0]]));
  await write(root, 'proc/uptime', '7.20 12.00\n');
  await write(root, `${tr}/per_cpu/cpu0/stats`, stats(2, 0));
  await write(root, `${tr}/per_cpu/cpu1/stats`, stats(3, 0));
  const lines = [
    '             cat-147     [001] .....     3.995828: gate_entry: (pipe_read+0x4/0x470)',
    '             cat-148     [000] .....     4.101002: gate_entry: (pipe_read+0x4/0x470)',
    '             cat-149     [001] .....     4.374190: gate_entry: (pipe_read+0x4/0x470)',
    '             cat-147     [001] .....     6.138369: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0',
    '             cat-148     [000] .....     6.138901: gate: (vfs_read+0x338/0x370 <- pipe_read) arg1=0',
  ];
  await write(root, `${tr}/trace`, TRACE_HEAD + lines.map((l) => `${l}\n`).join(''));
}

function collect(shell: string[], args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(shell[0]!, [...shell.slice(1), SCRIPT, ...args], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  return { status: r.status, stderr: r.stderr };
}

/** Every file of a bundle, with the wall-clock lines of the manifest normalised. */
async function readTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string): Promise<void> => {
    for (const e of await fs.readdir(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) await walk(full);
      else {
        let text = await fs.readFile(full, 'utf8');
        if (e.name === 'manifest') text = text.replace(/^(time_utc|epoch_s)=.*$/gm, '$1=*').replace(/^root=.*$/m, 'root=*');
        out[path.relative(dir, full)] = text;
      }
    }
  };
  await walk(dir);
  return out;
}

beforeAll(async () => {
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'krt-collector-'));
});
afterAll(async () => {
  await fs.rm(work, { recursive: true, force: true });
});

describe('collector/collect.sh', () => {
  it.for(SHELLS)('runs under $name and gives the same bundle as the others', async ({ name, argv }, { skip }) => {
    requireShell(argv, skip);
    const root = path.join(work, `root-${name.replace(/\W+/g, '-')}`);
    const out = path.join(work, `bundle-${name.replace(/\W+/g, '-')}`);
    await fakeTree(root);
    const before = await readTree(root);
    const args = ['--event', 'kfix/gate', '--event', 'kfix/gate_entry', '--symbol', 'pipe_read', '--out', out, '--root', root];
    expect(collect(argv, ['snapshot', 'start', ...args]).status).toBe(0);
    // Read-only: the snapshot did not touch the tree it read.
    expect(await readTree(root)).toEqual(before);
    await runTheTest(root);
    expect(collect(argv, ['snapshot', 'end', ...args]).status).toBe(0);

    const bundle = await readTree(out);
    expect(Object.keys(bundle).sort()).toEqual(
      [
        'config', 'cpu_possible', 'error_log', 'events/kfix/gate/enable', 'events/kfix/gate_entry/enable', 'kallsyms', 'kprobe_events', 'kprobe_profile',
        'kprobes_blacklist', 'kprobes_enabled', 'kprobes_list', 'manifest', 'missing', 'proc_version', 'trace', 'tracing_on', 'uname_m', 'uname_r', 'buffer_stats',
      ].flatMap((f) => [`start/${f}`, `end/${f}`]).sort(),
    );
    expect(bundle['end/kallsyms']).toBe('ffffffff9985f780 t __pfx_pipe_read\nffffffff9985f790 t pipe_read\nffffffff99405470 t pipe_read.isra.0\n');
    expect(bundle['end/kprobes_blacklist']).toBe('');
    expect(bundle['end/config']).toBe('CONFIG_SMP=y\nCONFIG_KPROBES=y\nCONFIG_KRETPROBES=y\nCONFIG_KPROBE_EVENTS=y\nCONFIG_KRETPROBE_ON_RETHOOK=y\nCONFIG_FPROBE=y\n');
    expect(bundle['end/missing']).toBe('');
    expect(bundle['end/buffer_stats']).toBe(`CPU: 0\n${stats(2, 0)}CPU: 1\n${stats(3, 0)}`);
    expect(bundle['start/manifest']).toMatch(/^phase=start$/m);
    expect(bundle['end/manifest']).toMatch(/^uptime_s=7\.20$/m);
    expect(bundle['end/manifest']).toMatch(/^release=6\.12\.95\+deb12-amd64$/m);
    expect(bundle['end/manifest']).toMatch(/^kprobes_blacklist_total=3$/m);
    expect(bundle['end/manifest']).toMatch(/^kallsyms_total=6$/m);

    const reference = path.join(work, `bundle-${slug(REFERENCE_SHELL)}`);
    if (out !== reference) expect(bundle).toEqual(await readTree(reference));

    // And the bundle makes the case the lab scenario describes.
    const { case: c } = await caseFromBundle(out, { id: 'collected' });
    expect(c).toMatchObject({
      kernel: { release: '6.12.95+deb12-amd64', arch: 'x86_64', possible_cpus: 2 },
      probe: { interface: 'tracefs', target: 'pipe_read', registration: { result: 'ok', epoch: 'reg-1' }, armed: true, maxactive: { effective: 2 } },
      coverage: { blacklisted: false, clones: ['pipe_read.isra.0'] },
      counters: { source: 'kprobe_profile', start: { epoch: 'reg-1', nmissed: 0 }, end: { epoch: 'reg-1', nmissed: 1, hits: 2 } },
      ledger: { returns: 2, entry_events: 3, lost_events: 0 },
    });
    // Entry-event records count every call, admitted or not: they are not admitted entries.
    expect(c.ledger?.entries).toBeUndefined();
  });

  it.for(SHELLS)('reads legacy tracefs under debugfs and /proc/config.gz, bounded trace tail ($name)', async ({ name, argv }, { skip }) => {
    requireShell(argv, skip);
    const root = path.join(work, `legacy-${name.replace(/\W+/g, '-')}`);
    const out = path.join(work, `legacy-out-${name.replace(/\W+/g, '-')}`);
    await fakeTree(root, { legacy: true });
    await write(root, 'proc/config.gz', gzipSync('CONFIG_KPROBES=y\n# CONFIG_FPROBE is not set\nCONFIG_EXT4_FS=y\n'));
    await runTheTest(root, 'sys/kernel/debug/tracing');
    const r = collect(argv, ['snapshot', 'end', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', root, '--trace-lines', '2']);
    expect(r.status).toBe(0);
    const bundle = await readTree(out);
    expect(bundle['end/manifest']).toMatch(/^tracefs=\/sys\/kernel\/debug\/tracing$/m);
    expect(bundle['end/manifest']).toMatch(/^config_source=\/proc\/config\.gz$/m);
    expect(bundle['end/config']).toBe('CONFIG_KPROBES=y\n# CONFIG_FPROBE is not set\n');
    expect(bundle['end/trace']?.split('\n').filter((l) => l !== '')).toHaveLength(2);
    // A cut tail must not become counts.
    const { case: c, problems } = await caseFromBundle(out);
    expect((c.ledger as Record<string, unknown> | undefined)?.returns).toBeUndefined();
    expect(problems.some((p) => p.file === 'end/trace')).toBe(true);
  });

  it.for(SHELLS)('records what it could not read and keeps those facts unknown ($name)', async ({ name, argv }, { skip }) => {
    requireShell(argv, skip);
    const root = path.join(work, `nodebugfs-${name.replace(/\W+/g, '-')}`);
    const out = path.join(work, `nodebugfs-out-${name.replace(/\W+/g, '-')}`);
    await fakeTree(root, { withDebugfs: false });
    expect(collect(argv, ['snapshot', 'end', '--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', root]).status).toBe(0);
    const missing = await fs.readFile(path.join(out, 'end', 'missing'), 'utf8');
    expect(missing.split('\n').filter((l) => l !== '').map((l) => l.split('\t')[0])).toEqual(['kprobes']);
    const { case: c } = await caseFromBundle(out);
    expect((c.coverage as Record<string, unknown>).blacklisted).toBeUndefined();
    expect((c.probe as Record<string, unknown>).armed).toBeUndefined();
  });

  it.for(SHELLS)('refuses bad usage and an existing snapshot with exit 2 ($name)', async ({ name, argv }, { skip }) => {
    requireShell(argv, skip);
    const root = path.join(work, `usage-${name.replace(/\W+/g, '-')}`);
    const out = path.join(work, `usage-out-${name.replace(/\W+/g, '-')}`);
    await fakeTree(root);
    const ok = ['--event', 'kfix/gate', '--symbol', 'pipe_read', '--out', out, '--root', root];
    expect(collect(argv, ['snapshot', 'middle', ...ok]).status).toBe(2);
    expect(collect(argv, ['snapshot', 'start', '--event', 'gate', '--symbol', 'pipe_read', '--out', out]).status).toBe(2);
    expect(collect(argv, ['snapshot', 'start', '--event', 'kfix/gate', '--symbol', 'pipe;rm', '--out', out]).status).toBe(2);
    expect(collect(argv, ['snapshot', 'start', '--event', 'kfix/gate', '--out', out]).status).toBe(2);
    expect(collect(argv, ['snapshot', 'start', ...ok]).status).toBe(0);
    expect(collect(argv, ['snapshot', 'start', ...ok]).status).toBe(2);
    // No temporary directory is left behind by the refused runs.
    expect((await fs.readdir(out)).sort()).toEqual(['start']);
  });
});

describe('kretprobe-triage collect --print-script', () => {
  it('prints the shipped script byte for byte', async () => {
    let stdout = '';
    const io: Io = { stdout: (t) => { stdout += t; }, stderr: () => {}, stdin: process.stdin, interactive: false, stderrIsTTY: false, env: {}, cwd: REPO, color: false };
    expect(await main(['collect', '--print-script'], io)).toBe(0);
    expect(stdout).toBe(readFileSync(SCRIPT, 'utf8'));
  });
});
