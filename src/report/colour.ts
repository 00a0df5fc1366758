import type { ChalkInstance } from 'chalk';

// Colour for the text reports. chalk is loaded only for coloured output: plain output (a pipe, a
// file, NO_COLOR, a CI log) never needs it, and loading it (supports-color probes the terminal)
// was ~9 ms of a one-case audit's ~100 ms above node's own start-up.

let Chalk: (new (options: { level: 0 | 1 | 2 | 3 }) => ChalkInstance) | undefined;

/** Load chalk for coloured output; styler(true) needs it done first. */
export async function loadColour(): Promise<void> {
  Chalk ??= (await import('chalk')).Chalk;
}

/**
 * Text as chalk leaves it at level 0: one argument as a string, several joined by a space, for
 * any chain of styles.
 */
const PLAIN: ChalkInstance = new Proxy((() => '') as unknown as ChalkInstance, {
  get: (_t, p) => (p === 'level' ? 0 : PLAIN),
  apply: (_t, _this, args: unknown[]) => (args.length === 1 ? `${String(args[0])}` : args.join(' ')),
});

/** The styles of a report: ANSI colour (chalk, level 1) or none. */
export function styler(color: boolean): ChalkInstance {
  if (!color) return PLAIN;
  if (!Chalk) throw new Error('internal error: coloured output asked for before loadColour()');
  return new Chalk({ level: 1 });
}
