/**
 * The one owner of what text from an input may do on a terminal: nothing. A case title, a file
 * name, a write-up or an answers key can hold ESC sequences (clear the screen, set the title,
 * hide a line, write the clipboard) and raw CRs (overwrite a line). Every C0 control but tab and
 * newline, DEL and every C1 control is shown as a JSON-style escape (`\u001b`, `\r`), which
 * keeps JSON, YAML and XML output valid and meaning the same. The CLI applies it to everything
 * it prints and to every report it writes (src/cli.ts), so no formatter can forget it.
 */

/** A control character, or (kept when colour is on) one of the SGR sequences the tool's own colours use. */
const CONTROL = /\x1b\[(?:1|2|22|31|32|33|35|36|39)m|[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;
const ANY = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;
/** ANY without the newline: text output keeps its newlines, so a text of lines and nothing else is left as it is without a pass over it. */
const ANY_BUT_NEWLINE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

export interface EscapeOptions {
  /** Newlines are kept (text output); without it the text becomes one line (an error line). */
  newlines?: boolean;
  /** Colour is on: the tool's own bold, dim, red, green, yellow, magenta and cyan pass (and nothing else). */
  sgr?: boolean;
}

function escapeOne(ch: string): string {
  if (ch === '\r') return '\\r';
  if (ch === '\n') return '\\n';
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every control character escaped (see the module comment). Pure. */
export function escapeControls(text: string, options: EscapeOptions = {}): string {
  if (!(options.newlines ? ANY_BUT_NEWLINE : ANY).test(text)) return text;
  return text.replace(CONTROL, (m) => {
    if (m.length > 1) return options.sgr ? m : m.replace(/\x1b/, '\\u001b');
    if (m === '\n' && options.newlines) return m;
    return escapeOne(m);
  });
}

/** One line for stderr: every newline of the text escaped but the one that ends it. */
export function oneLine(text: string): string {
  return text.endsWith('\n') ? `${escapeControls(text.slice(0, -1))}\n` : escapeControls(text);
}

/** The progress line the tool draws on a terminal's stderr (src/ledger/progress.ts): its own CR and erase-line, digits and bars. */
export const PROGRESS_DRAW = /^\r(?:\x1b\[K|[^\x00-\x1f\x7f-\x9f]*)$/;
