import { spawn } from 'node:child_process';
import { createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../errors.js';
import { newcArchive, type CpioEntry } from './cpio.js';
import type { LabKernel } from './kernels.js';

/**
 * Find a file shipped with the package (`lab/guest/init.sh`, `collector/collect.sh`) by walking
 * up from this module: it runs from `src/lab/` under vitest and from `dist/src/lab/` when built.
 */
export async function packageFile(rel: string, from: string = path.dirname(fileURLToPath(import.meta.url))): Promise<string> {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, rel);
    try {
      await fs.access(candidate);
      return candidate;
    } catch {
      // keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${rel} not found above ${from}: the package is incomplete`);
    dir = parent;
  }
}

/** The statically linked busybox of Debian's busybox-static: the guest's only binary. */
export const BUSYBOX = '/bin/busybox';

/**
 * How each guest architecture boots: the QEMU binary and its Debian package, the machine, the
 * serial console the kernel writes to. The guest's busybox is the kernel's own (`busybox` in the
 * manifest: busybox-static:arm64 unpacked by lab-setup.sh) or else the host's.
 */
export interface GuestArch {
  qemu: string;
  qemuPackage: string;
  machine: string[];
  console: string;
}

export const GUEST_ARCH: Record<'amd64' | 'arm64', GuestArch> = {
  amd64: { qemu: 'qemu-system-x86_64', qemuPackage: 'qemu-system-x86', machine: [], console: 'ttyS0' },
  // -cpu max under TCG; pauth-impdef: QEMU's own pointer-authentication hash instead of the
  // architected QARMA, which TCG emulates slowly (the guest cannot tell the difference).
  arm64: {
    qemu: 'qemu-system-aarch64',
    qemuPackage: 'qemu-system-arm',
    machine: ['-M', 'virt', '-cpu', 'max,pauth-impdef=on'],
    console: 'ttyAMA0',
  },
};

export function guestArch(kernel: LabKernel): GuestArch {
  return GUEST_ARCH[kernel.arch ?? 'amd64'];
}

export interface GuestPlan {
  /** Guest scenario names (lab/guest/init.sh), run in this order. */
  scenarios: string[];
  /** Bundle name of the `default` scenario in this boot (`default-smp8`). */
  defaultName: string;
  /** A root to copy into the initramfs as is (bpftrace, bpftool and their libraries). */
  tools?: string | undefined;
}

/** Every file, directory and symlink under `root`, as initramfs entries at the same paths. */
async function treeEntries(root: string): Promise<CpioEntry[]> {
  const out: CpioEntry[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const d of await fs.readdir(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (d.name.startsWith('.')) continue;
      if (d.isDirectory()) {
        out.push({ kind: 'dir', path: p });
        await walk(p);
      } else if (d.isSymbolicLink()) out.push({ kind: 'symlink', path: p, target: await fs.readlink(path.join(root, p)) });
      else out.push({ kind: 'file', path: p, data: await fs.readFile(path.join(root, p)), mode: 0o755 });
    }
  };
  await walk('');
  return out;
}

/** Build the initramfs: busybox, /init, the collector, the run plan and the kernel's config. */
export async function buildInitramfs(plan: GuestPlan, kernel: LabKernel): Promise<Buffer> {
  let busybox: Buffer;
  const busyboxPath = kernel.busybox ?? BUSYBOX;
  try {
    busybox = await fs.readFile(busyboxPath);
  } catch {
    throw new InputError({ file: busyboxPath }, `a static busybox for ${kernel.arch ?? 'amd64'} (package busybox-static; run \`npm run lab:setup\`)`, 'no such file');
  }
  const init = await fs.readFile(await packageFile('lab/guest/init.sh'), 'utf8');
  const collector = await fs.readFile(await packageFile('collector/collect.sh'), 'utf8');
  const runConf = `SCENARIOS="${plan.scenarios.join(' ')}"\nDEFAULT_NAME="${plan.defaultName}"\n`;
  const entries: CpioEntry[] = [
    { kind: 'dir', path: 'bin' },
    { kind: 'file', path: 'bin/busybox', data: busybox, mode: 0o755 },
    { kind: 'symlink', path: 'bin/sh', target: 'busybox' },
    { kind: 'dir', path: 'dev' },
    // Opened by the kernel for /init's stdio before anything is mounted.
    { kind: 'chardev', path: 'dev/console', major: 5, minor: 1 },
    { kind: 'file', path: 'init', data: init, mode: 0o755 },
    { kind: 'dir', path: 'lab' },
    { kind: 'file', path: 'lab/collect.sh', data: collector, mode: 0o755 },
    { kind: 'file', path: 'lab/run.conf', data: runConf },
    { kind: 'dir', path: 'boot' },
  ];
  if (kernel.module) {
    entries.push({ kind: 'file', path: 'lab/krtfix.ko', data: await fs.readFile(kernel.module) });
  }
  if (plan.tools) {
    // usr/ and lib/ of the tools' root; the guest has no /usr or /lib of its own.
    const tools = await treeEntries(plan.tools);
    entries.push(...tools.filter((e) => e.path !== 'boot' && !entries.some((x) => x.path === e.path)));
  }
  if (kernel.config) {
    entries.push({ kind: 'file', path: `boot/config-${kernel.release}`, data: await fs.readFile(kernel.config) });
  }
  return newcArchive(entries);
}

export interface BootResult {
  console: string;
  ms: number;
  exitCode: number | null;
  timedOut: boolean;
}

export const QEMU = GUEST_ARCH.amd64.qemu;

/**
 * Boot once under QEMU and return everything the serial console printed. TCG with a single
 * thread: multi-threaded TCG made 6.12 oops on an int3 in __schedule (kernel-notes.md).
 */
export async function bootGuest(opts: { kernel: LabKernel; initrd: string; smp: number; timeoutMs: number; memMb?: number; liveLog?: string }): Promise<BootResult> {
  const arch = guestArch(opts.kernel);
  const args = [
    ...arch.machine,
    '-accel', 'tcg,thread=single',
    '-m', String(opts.memMb ?? 512),
    '-smp', String(opts.smp),
    '-nographic', '-no-reboot',
    '-kernel', opts.kernel.image,
    '-initrd', opts.initrd,
    // no_timer_check: on a loaded host a TCG guest can miss the boot's IO-APIC timer check and panic
    // (seen on 5.10 with -smp 8); the check says nothing about probes.
    '-append', `console=${arch.console} quiet panic=-1 no_timer_check`,
  ];
  const started = Date.now();
  return new Promise<BootResult>((resolve, reject) => {
    const child = spawn(arch.qemu, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    // The console as it comes, so a boot that hangs can be watched (and read after a timeout).
    const live = opts.liveLog ? createWriteStream(opts.liveLog) : undefined;
    live?.on('error', () => {});
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs);
    const take = (c: Buffer): void => {
      chunks.push(c);
      live?.write(c);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === 'ENOENT') {
        reject(new InputError({}, `${arch.qemu} on PATH (package ${arch.qemuPackage}; run \`npm run lab:setup\`)`, 'not found'));
      } else reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const result: BootResult = { console: Buffer.concat(chunks).toString('latin1'), ms: Date.now() - started, exitCode: code, timedOut };
      if (live) live.end(() => resolve(result));
      else resolve(result);
    });
  });
}

/** Unpack one bundle (gzipped tar from the guest) under `dir` with the host's tar. */
export async function untar(tgz: Buffer, dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  await new Promise<void>((resolve, reject) => {
    const child = spawn('tar', ['-xzf', '-', '-C', dir], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`tar -x into ${dir} failed (${code}): ${err.trim()}`))));
    child.stdin.end(tgz);
  });
}
