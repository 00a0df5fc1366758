import { promises as fs } from 'node:fs';
import path from 'node:path';
import { InputError, shown } from '../errors.js';

/** A kernel image the lab can boot. */
export interface LabKernel {
  /** `6.12`, `6.1`, or `custom` for `--kernel PATH`. */
  series: string;
  /** `uname -r` of the image as far as the host can tell (the guest reports the real one). */
  release: string;
  image: string;
  /** `/boot/config-RELEASE` beside the image, when there is one: the collector reads it. */
  config?: string;
}

/** Where `scripts/lab-setup.sh` keeps its downloads: outside the repository, reused across runs. */
export function labCacheDir(env: Record<string, string | undefined>): string {
  const base = env.XDG_CACHE_HOME || path.join(env.HOME || '/root', '.cache');
  return path.join(base, 'kretprobe-triage', 'lab');
}

/** Parse the setup script's `kernels.tsv`: `series<TAB>release<TAB>vmlinuz path` per line. */
export function parseKernelManifest(text: string, file: string): LabKernel[] {
  const kernels: LabKernel[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const [series, release, image] = line.split('\t');
    if (!series || !release || !image) {
      throw new InputError({ file, line: i + 1, col: 1 }, 'series<TAB>release<TAB>image path', shown(line));
    }
    kernels.push({ series, release, image });
  });
  return kernels;
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
  const config = path.join(path.dirname(k.image), `config-${k.release}`);
  return (await exists(config)) ? { ...k, config } : k;
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
  if (series) kernels = kernels.filter((k) => series.includes(k.series));
  for (const k of kernels) {
    if (!(await exists(k.image))) {
      throw new InputError({ file }, `kernel image ${k.image} (run \`npm run lab:setup\` again)`, 'a missing file');
    }
  }
  if (series && kernels.length < series.length) {
    throw new InputError({ file }, `kernels ${series.join(', ')} (run \`npm run lab:setup -- --refresh\`)`, shown(kernels.map((k) => k.series).join(', ')));
  }
  return Promise.all(kernels.map(withConfig));
}

/** A user's own image for `--kernel PATH`; its release is taken from a `vmlinuz-RELEASE` name. */
export async function customKernel(image: string): Promise<LabKernel> {
  if (!(await exists(image))) throw new InputError({ file: image }, 'a bootable x86_64 kernel image (bzImage/vmlinuz)', 'no such file');
  const base = path.basename(image);
  const release = base.startsWith('vmlinuz-') ? base.slice('vmlinuz-'.length) : base;
  return withConfig({ series: 'custom', release, image: path.resolve(image) });
}
