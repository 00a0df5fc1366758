/**
 * A minimal writer for the `newc` cpio format the kernel unpacks as an initramfs
 * (Documentation/driver-api/early-userspace/buffer-format.rst). Written here rather than
 * shelled out to `cpio` so the guest can get its `/dev/console` device node without the host
 * needing root for `mknod`.
 */

export type CpioEntry =
  | { kind: 'dir'; path: string; mode?: number }
  | { kind: 'file'; path: string; data: Uint8Array | string; mode?: number }
  | { kind: 'symlink'; path: string; target: string }
  | { kind: 'chardev'; path: string; major: number; minor: number; mode?: number };

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}

/** Serialise entries (parents before children) into one newc archive, trailer included. */
export function newcArchive(entries: CpioEntry[]): Buffer {
  const parts: Buffer[] = [];
  let ino = 1;
  const push = (name: string, mode: number, data: Buffer, rdev: { major: number; minor: number } = { major: 0, minor: 0 }): void => {
    const nameBytes = Buffer.from(`${name}\0`, 'utf8');
    const header =
      '070701' +
      hex8(ino++) + hex8(mode) + hex8(0) + hex8(0) + hex8(1) + hex8(0) + hex8(data.length) +
      hex8(0) + hex8(0) + hex8(rdev.major) + hex8(rdev.minor) + hex8(nameBytes.length) + hex8(0);
    const head = Buffer.concat([Buffer.from(header, 'ascii'), nameBytes]);
    parts.push(head, Buffer.alloc(pad4(head.length)), data, Buffer.alloc(pad4(data.length)));
  };
  for (const e of entries) {
    const name = e.path.replace(/^\/+/, '');
    switch (e.kind) {
      case 'dir':
        push(name, S_IFDIR | (e.mode ?? 0o755), Buffer.alloc(0));
        break;
      case 'file':
        push(name, S_IFREG | (e.mode ?? 0o644), typeof e.data === 'string' ? Buffer.from(e.data, 'utf8') : Buffer.from(e.data));
        break;
      case 'symlink':
        push(name, S_IFLNK | 0o777, Buffer.from(e.target, 'utf8'));
        break;
      case 'chardev':
        push(name, S_IFCHR | (e.mode ?? 0o600), Buffer.alloc(0), { major: e.major, minor: e.minor });
        break;
    }
  }
  push('TRAILER!!!', 0, Buffer.alloc(0));
  return Buffer.concat(parts);
}
