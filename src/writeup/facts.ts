import { BASE_FACTS } from '../facts/facts.js';
import { countCpuList } from '../kernel/cpus.js';
import { ERRNO_NAMES } from '../evidence/dmesg.js';
import { errnoForStrerror } from '../evidence/artifacts.js';

/** Where a fact came from, strongest first: the author's explicit block, a pasted artifact, a sentence. */
export type FactOrigin = 'explicit' | 'artifact' | 'sentence' | 'implied';

/** Precedence when two sources give one field: higher wins; `implied` never makes a finding. */
export const ORIGIN_RANK: Record<FactOrigin, number> = { explicit: 3, artifact: 2, sentence: 1, implied: 0 };

export type FactValue = string | number | boolean | string[] | null;

/** One fact read from a write-up, cited by file position and the text it came from. */
export interface WriteupFact {
  /** Case field, dotted (`counters.end.nmissed`). */
  path: string;
  value: FactValue;
  line: number;
  col: number;
  /** The source text it was read from (the matched words, or the artifact line). */
  text: string;
  origin: FactOrigin;
  /** The lexicon pattern id, artifact kind (`kprobe_profile`) or explicit block (`front-matter`). */
  via: string;
  /**
   * The interface the sentence names as the setting's owner ("bpftrace hardcodes maxactive to 0"):
   * the fact is that tool's, the case's only when the case's probe is made with it.
   */
  about?: string;
  /**
   * The fact is about an entry probe (a tool's message naming a `kprobe`): the case's only when the
   * write-up names no return probe anywhere (issue 21 class 6, whose fact).
   */
  entryProbe?: true;
  /** Stated as a correction of what the write-up said before: it replaces earlier values of its field. */
  corrects?: true;
  /**
   * The function the sentence states this of ("since 5.10 do_sys_open is no longer called"): a
   * pattern that names its subject sets probe.target with the rest. The case's only when its probe
   * is on that function (issue 21 class 6, whose fact).
   */
  ofTarget?: string;
  /**
   * Read from an A/B's adequate run, whose pool is `pool` (a larger one than the case's run had):
   * the fact is the case's, the pool is that run's. `named`: the sentence itself says the number
   * is a pool; otherwise a pool setting of that value stated elsewhere in the write-up must.
   */
  otherRunPool?: { pool: number; named: boolean };
  /** A setting of another run than the case's (an A/B's adequate run): listed as found, never set in the case. */
  otherRun?: true;
  /** The function of the return probe whose artifact gave the fact (its reader's subject), when the reader names one. */
  probeSymbol?: string;
  /**
   * A fact of a return probe on another function than the case's (a thread that pastes a tracefs
   * probe on one function and a bpftrace probe on another): that probe's, listed as found, never
   * set in the case nor read as a disagreement (issue 21 class 6, two subjects, never a blend).
   */
  otherProbe?: string;
}

const KNOWN_ERRNOS = new Set(Object.values(ERRNO_NAMES));

const TYPES = new Map(BASE_FACTS.map((f) => [f.name, f.type] as const));

/** True when the case format has this field (facts the lexicon may set). */
export function isCaseField(path: string): boolean {
  return TYPES.has(path);
}

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, usec: 1e3, ms: 1e6, msec: 1e6, s: 1e9 };

/** Convert matched text for a field: `count`, `ns`, `cpus`, `version`, `errno`, `strerror`, or as the field's type. */
export function convert(raw: string, conv: string | undefined, path: string): FactValue | undefined {
  const t = raw.trim();
  switch (conv) {
    case 'count': {
      const digits = t.replace(/,(?=\d{3}\b)/g, '');
      return /^\d+$/.test(digits) && Number.isSafeInteger(Number(digits)) ? Number(digits) : undefined;
    }
    case 'ns': {
      const m = /^(\d+(?:\.\d+)?)\s*(ns|us|µs|usec|ms|msec|s)$/i.exec(t);
      const unit = m ? UNIT_NS[(m[2] ?? '').toLowerCase()] : undefined;
      return m && unit !== undefined ? Math.round(Number(m[1]) * unit) : undefined;
    }
    case 'cpus': {
      if (/^\d+$/.test(t)) return Number(t) >= 1 ? Number(t) : undefined;
      return countCpuList(t);
    }
    case 'version':
      return t.replace(/^v/i, '');
    case 'list':
      // One name, as a list field holds it (a clone the prose names: [pipe_read.isra.0]).
      return t === '' ? undefined : [t];
    case 'strerror':
      // A tracer's refusal quoted in prose: its strerror() text names the errno; without one the
      // registration failed all the same, errno unknown.
      return errnoForStrerror(t) ?? 'error';
    case 'errno': {
      // A negative errno as a module prints register_kretprobe()'s return ("returned -7").
      const n = /^-(\d+)$/.exec(t);
      if (n) return ERRNO_NAMES[Number(n[1])];
      const name = /^-?(E[A-Z0-9]+)$/.exec(t)?.[1];
      return name !== undefined && KNOWN_ERRNOS.has(name) ? name : undefined;
    }
    default: {
      const type = TYPES.get(path);
      if (type === 'number') return /^\d+$/.test(t) ? Number(t) : undefined;
      if (type === 'boolean') return t === 'true' ? true : t === 'false' ? false : undefined;
      return t === '' ? undefined : t;
    }
  }
}
