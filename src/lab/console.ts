/**
 * The guest's serial console, as the host sees it: kernel and BIOS noise, `@@KRT-LOG` progress
 * lines, and each scenario's files as base64 of a gzipped tar between
 * `@@KRT-BUNDLE-BEGIN name` and `@@KRT-BUNDLE-END name` (lab/guest/init.sh writes them).
 */

export interface GuestConsole {
  /** Progress lines of the guest, without the marker. */
  logs: string[];
  /** Scenario name -> the gzipped tar it sent. */
  bundles: Map<string, Buffer>;
  /** The guest reached the end of its script (`@@KRT-DONE`). */
  done: boolean;
  /** Framing faults: an unterminated or mismatched bundle, a line that is not base64. */
  problems: string[];
}

const BASE64_LINE = /^[A-Za-z0-9+/]*={0,2}$/;

/** Split the console text of one boot. Pure: the caller writes the bundles where it wants. */
export function splitConsole(text: string): GuestConsole {
  const out: GuestConsole = { logs: [], bundles: new Map(), done: false, problems: [] };
  let current: { name: string; chunks: string[] } | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    // Serial output ends lines with CRLF; QEMU may also put terminal escapes before a line.
    const line = (lines[i] ?? '').replace(/\r/g, '');
    const marker = line.indexOf('@@KRT-');
    if (marker >= 0) {
      const [tag, ...rest] = line.slice(marker).split(' ');
      const arg = rest.join(' ').trim();
      switch (tag) {
        case '@@KRT-LOG':
          out.logs.push(arg);
          continue;
        case '@@KRT-BUNDLE-BEGIN':
          if (current) out.problems.push(`line ${i + 1}: bundle ${current.name} not ended before ${arg} began`);
          current = { name: arg, chunks: [] };
          continue;
        case '@@KRT-BUNDLE-END':
          if (!current || current.name !== arg) {
            out.problems.push(`line ${i + 1}: end of bundle ${arg} without its beginning`);
          } else {
            out.bundles.set(current.name, Buffer.from(current.chunks.join(''), 'base64'));
          }
          current = undefined;
          continue;
        case '@@KRT-DONE':
          out.done = true;
          continue;
        default:
          break;
      }
    }
    if (current) {
      const chunk = line.trim();
      if (chunk === '') continue;
      if (!BASE64_LINE.test(chunk)) {
        out.problems.push(`line ${i + 1}: bundle ${current.name} has a line that is not base64: ${chunk.slice(0, 60)}`);
        continue;
      }
      current.chunks.push(chunk);
    }
  }
  if (current) out.problems.push(`bundle ${current.name} never ended (the guest stopped mid-way)`);
  return out;
}
