import picomatch from 'picomatch';

/*
 * Globs for `audit`'s positional patterns and `--exclude`: picomatch's syntax (braces, classes,
 * extglobs, `**`) and picomatch's parser. picomatch matches with a backtracking RegExp, whose
 * time grows as the name length to the power of the stars in one segment (`*a*a*a*a*a*a*b`
 * against a long name takes minutes). A pattern whose tokens are only text, `?`, `*`, `**`, `/`
 * and classes is therefore run over the token list as a set of states instead (time: name
 * length × tokens); any other pattern (braces, extglobs, negation) keeps picomatch's RegExp.
 */

type Unit =
  | { t: 'one'; test: (ch: string) => boolean; slash?: true }
  | { t: 'star' }
  /** `**`: any run of characters; `skipSlash`: `**` and the `/` after it may match nothing at all. */
  | { t: 'globstar'; skipSlash: boolean };

const PICO = { dot: true } as const;

function unitsOf(glob: string): Unit[] | undefined {
  const { tokens } = (picomatch.parse as unknown as (g: string, o: typeof PICO) => { tokens: Array<{ type: string; value: string }> })(glob, PICO);
  const units: Unit[] = [];
  for (const tok of tokens) {
    switch (tok.type) {
      case 'bos':
        break;
      case 'text':
        // One unit per character; picomatch keeps a backslash escape in the token's value.
        for (const ch of tok.value.replace(/\\(.)/g, '$1')) units.push(ch === '/' ? { t: 'one', test: (c) => c === '/', slash: true } : { t: 'one', test: (c) => c === ch });
        break;
      case 'slash':
        units.push({ t: 'one', test: (c) => c === '/', slash: true });
        break;
      case 'qmark':
        units.push({ t: 'one', test: (ch) => ch !== '/' });
        break;
      case 'bracket': {
        // The token's value is a RegExp fragment for one character (picomatch builds it).
        const rx = new RegExp(`^(?:${tok.value})$`);
        units.push({ t: 'one', test: (ch) => ch !== '/' && rx.test(ch) });
        break;
      }
      case 'star':
        units.push({ t: 'star' });
        break;
      case 'globstar':
        units.push({ t: 'globstar', skipSlash: false });
        break;
      default:
        return undefined;
    }
  }
  units.forEach((u, i) => {
    const next = units[i + 1];
    if (u.t === 'globstar' && next?.t === 'one' && next.slash) u.skipSlash = true;
  });
  return units;
}

/** A matcher of a whole `/`-separated path, in time linear in the path for every pattern it takes. */
function linear(units: Unit[]): (s: string) => boolean {
  const n = units.length;
  // States reached without reading a character: past a star or globstar matching nothing.
  const close = (set: Uint8Array) => {
    for (let i = 0; i < n; i++) {
      if (!set[i]) continue;
      const u = units[i]!;
      if (u.t === 'star' || u.t === 'globstar') set[i + 1] = 1;
      if (u.t === 'globstar' && u.skipSlash) set[i + 2] = 1;
    }
  };
  return (s) => {
    let cur = new Uint8Array(n + 1);
    cur[0] = 1;
    close(cur);
    for (const ch of s) {
      const next = new Uint8Array(n + 1);
      let any = false;
      for (let i = 0; i < n; i++) {
        if (!cur[i]) continue;
        const u = units[i]!;
        if (u.t === 'one' ? u.test(ch) : u.t === 'globstar' || ch !== '/') {
          next[u.t === 'one' ? i + 1 : i] = 1;
          any = true;
        }
      }
      if (!any) return false;
      close(next);
      cur = next;
    }
    return cur[n] === 1;
  };
}

/** Whether `s` is a pattern rather than a plain path (picomatch's own reading of it). */
export function isGlob(s: string): boolean {
  return picomatch.scan(s).isGlob;
}

/** The directory a pattern's matches all lie under (its part before the first glob character). */
export function globBase(s: string): string {
  return picomatch.scan(s).base || '.';
}

/** A glob as a matcher of whole `/`-separated paths. */
export function compileGlob(glob: string): (s: string) => boolean {
  const units = unitsOf(glob);
  if (units) return linear(units);
  const rx = picomatch.makeRe(glob, PICO);
  return (s) => rx.test(s);
}

/**
 * An --exclude pattern as a matcher of `/`-separated relative paths. A pattern matching a
 * directory leaves out everything under it; like .gitignore, a pattern without a slash matches
 * any one part of the path.
 */
export function excludeMatcher(glob: string): (rel: string) => boolean {
  const pattern = glob.replace(/\/+$/, '').replace(/^\.\//, '');
  const m = compileGlob(pattern);
  if (!pattern.includes('/')) return (rel) => rel.split('/').some(m);
  return (rel) => {
    if (m(rel)) return true;
    for (let i = rel.indexOf('/'); i > 0; i = rel.indexOf('/', i + 1)) if (m(rel.slice(0, i))) return true;
    return false;
  };
}
