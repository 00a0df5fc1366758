import { and, bool, num, str, type Derivation, type Inputs } from './derive.js';

const KEYS = ['nmissed', 'kprobe_nmissed', 'hits'] as const;
const snap = (k: string) => [`counters.start.${k}`, `counters.end.${k}`];
const rise = (i: Inputs, k: string) => {
  const a = num(i, `counters.start.${k}`);
  const b = num(i, `counters.end.${k}`);
  return a === undefined || b === undefined ? undefined : b - a;
};

/**
 * Which interfaces a counter source can belong to (kernel-history.md §3): struct fields only
 * exist for a module's kretprobe; kprobe_profile lists only tracefs/dynamic events (perf probe
 * writes those); a BPF link reports `missed` only from 6.7, for links made by libbpf tools.
 */
function sourceFits(source: string, iface: string | undefined, linkMissed: boolean | undefined): boolean | undefined {
  if (iface === undefined || iface === 'other') return undefined;
  switch (source) {
    case 'module-field':
      return iface === 'module';
    case 'kprobe_profile':
      return iface === 'tracefs' || iface === 'perf-probe';
    case 'bpf-link':
      if (iface === 'bpftrace' || iface === 'bpf-link' || iface === 'fprobe') return linkMissed;
      return iface === 'module' ? false : undefined;
    default:
      return undefined;
  }
}

/**
 * Counter snapshots. A difference is a delta only when both snapshots are of the return probe's
 * own counter, read in the probe's registration epoch, with nothing reset between; and what a
 * column counts depends on the kernel (kernel-history.md §0, §5.1).
 */
export const COUNTERS: readonly Derivation[] = [
  {
    name: 'counters.same_epoch', type: 'boolean', basis: 'Read missed and filtered cases separately',
    description: 'both snapshots were read within one registration',
    inputs: ['counters.start.epoch', 'counters.end.epoch'],
    derive: (i) => {
      const a = str(i, 'counters.start.epoch');
      const b = str(i, 'counters.end.epoch');
      return a === undefined || b === undefined ? undefined : a === b;
    },
  },
  {
    name: 'counters.epoch_is_registration', type: 'boolean', basis: 'Read missed and filtered cases separately (preserve the exact counter and registration epoch)',
    description: "both snapshots were read in the probe's own registration epoch (probe.registration.epoch)",
    inputs: ['counters.start.epoch', 'counters.end.epoch', 'probe.registration.epoch'],
    derive: (i) => {
      const reg = str(i, 'probe.registration.epoch');
      const a = str(i, 'counters.start.epoch');
      const b = str(i, 'counters.end.epoch');
      if ((reg !== undefined && a !== undefined && a !== reg) || (reg !== undefined && b !== undefined && b !== reg)) return false;
      return reg !== undefined && a !== undefined && b !== undefined ? true : undefined;
    },
  },
  {
    name: 'counters.went_down', type: 'boolean', basis: 'kernel-facts.md §2, §6',
    description: 'a counter is lower at the end than at the start (only a new registration resets it)',
    inputs: KEYS.flatMap(snap),
    derive: (i) => {
      const downs = KEYS.map((k) => {
        const d = rise(i, k);
        return d === undefined ? undefined : d < 0;
      });
      // Any counter going down proves a reset; every known one level or rising rules one out
      // for the counters the case has (the miss column at least).
      if (downs.some((d) => d === true)) return true;
      return downs[0] === false && downs.every((d, n) => d === false || i[snap(KEYS[n]!)[0]!] === undefined && i[snap(KEYS[n]!)[1]!] === undefined) ? false : undefined;
    },
  },
  {
    name: 'counters.of_return_probe', type: 'boolean', basis: 'Read missed and filtered cases separately; kernel-history.md §3',
    description: "the counters are the return probe's own: a source its interface has, and (when both are named) the return event's line",
    inputs: ['counters.source', 'probe.interface', 'counters.event', 'probe.event', 'kernel.bpf_link_reports_missed'],
    derive: (i) => {
      const source = str(i, 'counters.source');
      if (source === undefined) return undefined;
      const fits = sourceFits(source, str(i, 'probe.interface'), bool(i, 'kernel.bpf_link_reports_missed'));
      const ce = str(i, 'counters.event');
      const pe = str(i, 'probe.event');
      // A named line of another event (the entry event's, say) is not the return probe's.
      const named = ce !== undefined && pe !== undefined ? ce === pe || ce.endsWith(`/${pe}`) || pe.endsWith(`/${ce}`) : true;
      return and(fits, named);
    },
  },
  {
    name: 'counters.delta_valid', type: 'boolean', basis: 'Read missed and filtered cases separately',
    description: "the start/end difference is a real delta: the return probe's counter, one epoch that is the probe's registration, no reset between",
    inputs: ['counters.same_epoch', 'counters.epoch_is_registration', 'counters.went_down', 'counters.of_return_probe'],
    derive: (i) => and(bool(i, 'counters.same_epoch'), bool(i, 'counters.epoch_is_registration'), bool(i, 'counters.went_down') === undefined ? undefined : !bool(i, 'counters.went_down'), bool(i, 'counters.of_return_probe')),
  },
  {
    name: 'counters.column_includes_pool', type: 'boolean', basis: 'kernel-history.md §5.1, dfea08a2116f',
    description: 'the miss figure read counts pool misses: a struct field or BPF link always, kprobe_profile only from 5.17 (or the Jan-2022 stable backports)',
    inputs: ['counters.source', 'kernel.profile_sums_pool_misses'],
    derive: (i) => {
      const source = str(i, 'counters.source');
      if (source === undefined) return undefined;
      return source === 'kprobe_profile' ? bool(i, 'kernel.profile_sums_pool_misses') : true;
    },
  },
  {
    name: 'counters.delta.column', type: 'number', basis: 'Read missed and filtered cases separately',
    description: 'rise of the miss figure as read (struct nmissed, kprobe_profile column, link missed) within a valid delta',
    inputs: ['counters.delta_valid', ...snap('nmissed')],
    derive: (i) => (bool(i, 'counters.delta_valid') === true ? rise(i, 'nmissed') : undefined),
  },
  {
    name: 'counters.delta.nmissed', type: 'number', basis: 'kernel-facts.md §2; kernel-history.md §5.1',
    description: "rise of the return probe's miss counter within one epoch (unknown where the column read does not count pool misses)",
    inputs: ['counters.delta.column', 'counters.column_includes_pool'],
    derive: (i) => (bool(i, 'counters.column_includes_pool') === true ? num(i, 'counters.delta.column') : undefined),
  },
  {
    name: 'counters.delta.kprobe_nmissed', type: 'number', basis: 'kernel-facts.md §4',
    description: "rise of the embedded kprobe's miss counter within one epoch",
    inputs: ['counters.delta_valid', 'counters.source', 'counters.delta.column', 'counters.column_includes_pool', ...snap('kprobe_nmissed')],
    derive: (i) => {
      if (bool(i, 'counters.delta_valid') !== true) return undefined;
      if (str(i, 'counters.source') === 'module-field') return rise(i, 'kprobe_nmissed');
      // One summed column (kp + rp): level proves both parts level; before 5.17 the column of a
      // return event is kp.nmissed alone; a rising sum cannot be split.
      const column = num(i, 'counters.delta.column');
      if (column === 0) return 0;
      if (bool(i, 'counters.column_includes_pool') === false) return column;
      return undefined;
    },
  },
  {
    name: 'counters.delta.missed_total', type: 'number', basis: 'kernel-facts.md §2, §4',
    description: 'calls that reached the function but got no instance (pool and kprobe-level misses together)',
    inputs: ['counters.source', 'counters.delta.column', 'counters.delta.nmissed', 'counters.delta.kprobe_nmissed', 'counters.column_includes_pool'],
    derive: (i) => {
      if (str(i, 'counters.source') === 'module-field') {
        const a = num(i, 'counters.delta.nmissed');
        const b = num(i, 'counters.delta.kprobe_nmissed');
        return a === undefined || b === undefined ? undefined : a + b;
      }
      return bool(i, 'counters.column_includes_pool') === true ? num(i, 'counters.delta.column') : undefined;
    },
  },
  {
    name: 'counters.recursion_misses_seen', type: 'number', basis: 'kernel-history.md §0 (5.12, ca06f55b9002: BPF per-program recursion prevention)',
    description: 'BPF program runs skipped for recursion: the rise within the test when both snapshots are known, else the count since the program was loaded (it includes the test)',
    inputs: ['counters.start.recursion_misses', 'counters.end.recursion_misses'],
    derive: (i) => {
      const a = num(i, 'counters.start.recursion_misses');
      const b = num(i, 'counters.end.recursion_misses');
      return b === undefined ? undefined : a === undefined ? b : Math.max(0, b - a);
    },
  },
  {
    name: 'counters.delta.hits', type: 'number', basis: 'kernel-facts.md §4',
    description: 'return-handler runs of the return event within one epoch (kprobe_profile hits)',
    inputs: ['counters.delta_valid', ...snap('hits')],
    derive: (i) => (bool(i, 'counters.delta_valid') === true ? rise(i, 'hits') : undefined),
  },
];
