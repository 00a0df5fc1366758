/**
 * A progress bar for long ledger runs, drawn on stderr only (the caller decides it is a
 * terminal). Redraws at most every 200 ms so it costs nothing per line.
 */
export function progressBar(write: (s: string) => void, totalBytes: number | undefined): { update: (bytes: number) => void; done: () => void } {
  let seen = 0;
  let last = 0;
  let drawn = false;
  const draw = (): void => {
    drawn = true;
    const mb = (seen / 1048576).toFixed(0);
    if (totalBytes !== undefined && totalBytes > 0) {
      const f = Math.min(1, seen / totalBytes);
      const w = 30;
      const filled = Math.round(f * w);
      write(`\r[${'#'.repeat(filled)}${'.'.repeat(w - filled)}] ${(f * 100).toFixed(0).padStart(3)}% ${mb} MiB`);
    } else {
      write(`\r${mb} MiB read`);
    }
  };
  return {
    update: (bytes: number) => {
      seen += bytes;
      const now = Date.now();
      if (now - last >= 200) {
        last = now;
        draw();
      }
    },
    done: () => {
      if (drawn) write('\r\x1b[K');
    },
  };
}
