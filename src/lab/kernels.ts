import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, shown } from '../errors.js';
import { openInput } from '../fsutil.js';
import type { KernelTraits } from './scenarios.js';

/** A kernel image the lab can boot. */
export interface LabKernel {
  /** `6.12`, `6.1`, or `custom` for `--kernel PATH`. */
  series: string;
  /** `uname -r` of the image as far as the host can tell (the guest reports the real one). */
  release: string;
  image: string;
  /** `/boot/config-RELEASE` beside the image, when there is one: the collector reads it. */
  config?: string;
  /** The lab module (krtfix.ko) built against this kernel's Debian headers; absent: tracefs only. */
  module?: string;
  /** Upstream version of the Debian package (`6.1.176`), when the set-up knew it. */
  version?: string;
  /** The Debian suite the kernel came from. */
  suite?: string;
  /** `newest` for the newest series Debian's suites carry (its series number changes over time). */
  role?: string;
  /** A root with Debian's bpftrace and bpftool and their libraries for the guest (lab-setup.sh). */
  tools?: string;
  /** The guest's architecture; absent: amd64 (the host's). */
  arch?: 'amd64' | 'arm64';
  /** A static busybox built for `arch`, when it is not the host's (/bin/busybox). */
  busybox?: string;
}

/** Where `scripts/lab-setup.sh` keeps its downloads: outside the repository, reused across runs. */
export function labCacheDir(env: Record<string, string | undefined>): string {
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || '/root', '.cache');
  return path.join(base, 'kretprobe-triage', 'lab');
}

/**
 * Parse the setup script's `kernels.tsv`: `series<TAB>release<TAB>vmlinuz path` per line, then
 * optionally `<TAB>module .ko path or -<TAB>upstream version<TAB>suite<TAB>role` (role `newest` or `series`),
 * `<TAB>bpftrace tools root or -`, `<TAB>arch` (amd64 or arm64) and `<TAB>static busybox for that arch or -`.
 */
export function parseKernelManifest(text: string, file: string): LabKernel[] {
  const kernels: LabKernel[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const [series, release, image, module, version, suite, role, tools, arch, busybox] = line.split('\t');
    if (!series || !release || !image) {
      throw new InputError({ file, line: i + 1, col: 1 }, 'series<TAB>release<TAB>image path[<TAB>module|-<TAB>version<TAB>suite]', shown(line));
    }
    const k: LabKernel = { series, release, image };
    if (module && module !== '-') k.module = module;
    if (version) k.version = version;
    if (suite) k.suite = suite;
    if (role) k.role = role;
    if (tools && tools !== '-') k.tools = tools;
    if (arch !== undefined && arch !== '' && arch !== 'amd64' && arch !== 'arm64') {
      throw new InputError({ file, line: i + 1, col: 1 }, 'an architecture of amd64 or arm64 in the ninth column', shown(arch));
    }
    if (arch === 'arm64') k.arch = arch;
    if (busybox && busybox !== '-') k.busybox = busybox;
    kernels.push(k);
  });
  return kernels;
}

/** What the lab needs to know of a kernel to say what it must show (scenarios.ts). */
export async function kernelTraits(k: LabKernel): Promise<KernelTraits> {
  const src = k.version ?? k.release;
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(src);
  const version: [number, number, number] = m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : [0, 0, 0];
  let preemption: boolean | undefined;
  let fprobeEvents: boolean | undefined;
  let fprobe: boolean | undefined;
  let preemptMode: KernelTraits['preemptMode'];
  if (k.config) {
    const text = await fs.readFile(k.config, 'utf8');
    preemption = /^CONFIG_PREEMPTION=y$/m.test(text);
    fprobeEvents = /^CONFIG_FPROBE_EVENTS=y$/m.test(text);
    fprobe = /^CONFIG_FPROBE=y$/m.test(text);
    // The preemption model the kernel boots with (PREEMPT_DYNAMIC's default is the one chosen).
    preemptMode = /^CONFIG_PREEMPT_LAZY=y$/m.test(text) ? 'lazy' : /^CONFIG_PREEMPT=y$/m.test(text) ? 'full' : /^CONFIG_PREEMPT_VOLUNTARY=y$/m.test(text) ? 'voluntary' : /^CONFIG_PREEMPT_NONE=y$/m.test(text) ? 'none' : undefined;
  }
  const traits: KernelTraits = { version, preemption, fprobeEvents };
  if (fprobe !== undefined) traits.fprobe = fprobe;
  if (preemptMode !== undefined) traits.preemptMode = preemptMode;
  if (k.tools) {
    const tsv = await fs.readFile(path.join(k.tools, 'versions.tsv'), 'utf8').catch(() => '');
    const bt = /^bpftrace\t(\d+)\.(\d+)\.(\d+)/m.exec(tsv);
    if (bt) traits.bpftrace = [Number(bt[1]), Number(bt[2]), Number(bt[3])];
  }
  return traits;
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

async function withConfig(k: LabKernel): Promise<LabKernel> {
  // /boot/config-RELEASE beside /boot/vmlinuz-RELEASE; /usr/lib/modules/RELEASE/config beside
  // .../vmlinuz in the 7.x packages.
  for (const config of [path.join(path.dirname(k.image), `config-${k.release}`), path.join(path.dirname(k.image), 'config')]) {
    if (await exists(config)) return { ...k, config };
  }
  return k;
}

/**
 * The kernels `npm run lab:setup` unpacked, in manifest order, filtered to `series` when given.
 * Fails with one line that names the fix when the set-up has not been run.
 */
export async function cachedKernels(env: Record<string, string | undefined>, series?: string[]): Promise<LabKernel[]> {
  const file = path.join(labCacheDir(env), 'kernels.tsv');
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new InputError({ file }, 'the kernel list written by `npm run lab:setup` (run it first)', 'no such file');
  }
  let kernels = parseKernelManifest(text, file);
  // The second architecture's kernels (lab-setup-arm64.sh), in a manifest of their own.
  const armFile = path.join(labCacheDir(env), 'arm64', 'kernels.tsv');
  const armText = await fs.readFile(armFile, 'utf8').catch(() => undefined);
  if (armText !== undefined) kernels = [...kernels, ...parseKernelManifest(armText, armFile)];
  if (series) kernels = kernels.filter((k) => series.includes(k.series));
  for (const k of kernels) {
    if (!(await exists(k.image))) {
      throw new InputError({ file }, `kernel image ${k.image} (run \`npm run lab:setup\` again)`, 'a missing file');
    }
    if (k.module && !(await exists(k.module))) {
      throw new InputError({ file }, `the lab module built for ${k.release}: ${k.module} (run \`npm run lab:setup\` again)`, 'a missing file');
    }
    if (k.busybox && !(await exists(k.busybox))) {
      throw new InputError({ file }, `the static busybox for ${k.arch ?? 'amd64'}: ${k.busybox} (run \`npm run lab:setup\` again)`, 'a missing file');
    }
  }
  if (series && kernels.length < series.length) {
    throw new InputError({ file }, `kernels ${series.join(', ')} (run \`npm run lab:setup -- --refresh\`)`, shown(kernels.map((k) => k.series).join(', ')));
  }
  return Promise.all(kernels.map(withConfig));
}

/**
 * A user's own image for `--kernel PATH`; its release is taken from a `vmlinuz-RELEASE` name.
 * With `moduleBuild` (a directory holding krtfix.ko built for that kernel) the module scenarios run too.
 */
/**
 * What QEMU's -kernel boots on x86_64: a bzImage (the boot protocol's "HdrS" at 0x202) or an ELF
 * vmlinux. Anything else is refused here, before a boot: a device would never end, a regular
 * file of another kind would only time out.
 */
async function checkKernelImage(image: string): Promise<void> {
  const expected = 'a bootable x86_64 kernel image (bzImage/vmlinuz, or an ELF vmlinux)';
  const { handle } = await openInput(image, 'kernel image').catch((err: unknown) => {
    if (err instanceof InputError) throw new InputError({ file: image }, expected, err.got, { cause: err });
    throw err;
  });
  try {
    const head = Buffer.alloc(0x206);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const bzImage = bytesRead >= 0x206 && head.toString('latin1', 0x202, 0x206) === 'HdrS';
    const elf = bytesRead >= 4 && head.toString('latin1', 0, 4) === '\x7fELF';
    if (!bzImage && !elf) throw new InputError({ file: image }, expected, bytesRead < 4 ? `${bytesRead} bytes` : 'a file with neither the boot header (HdrS at 0x202) nor ELF magic');
  } finally {
    await handle.close();
  }
}

export async function customKernel(image: string, moduleBuild?: string): Promise<LabKernel> {
  await checkKernelImage(image);
  const base = path.basename(image);
  const release = base.startsWith('vmlinuz-') ? base.slice('vmlinuz-'.length) : base;
  const k: LabKernel = { series: 'custom', release, image: path.resolve(image) };
  if (moduleBuild !== undefined) {
    const ko = path.resolve(moduleBuild, 'krtfix.ko');
    if (!(await exists(ko))) throw new InputError({ file: ko }, 'krtfix.ko built from lab/module for this kernel (make -C HEADERS M=lab/module)', 'no such file');
    k.module = ko;
  }
  return withConfig(k);
}
