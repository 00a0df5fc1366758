import { bpfAttach, bpfAttachOpen, isEntryProbe } from './capacity.js';
import { and, bool, num, str, type Derivation, type Inputs } from './derive.js';

const KEYS = ['nmissed', 'kprobe_nmissed', 'hits'] as const;
const snap = (k: string) => [`counters.start.${k}`, `counters.end.${k}`];
const rise = (i: Inputs, k: string) => {
  const a = num(i, `counters.start.${k}`);
  const b = num(i, `counters.end.${k}`);
  return a === undefined || b === undefined ? undefined : b - a;
};

/**
 * Which interfaces a counter source can belong to (kernel-history.md §3): struct kretprobe fields
 * exist for every kretprobe (a module's, or the one a tracefs/perf/BPF kprobe event is built on,
 * read with a probe on unregister_kretprobe), not for an fprobe; kprobe_profile lists only tracefs/dynamic events (perf probe
 * writes those); a BPF link reports `missed` only from 6.7, for links made by libbpf tools.
 */
function sourceFits(source: string, iface: string | undefined, linkMissed: boolean | undefined): boolean | undefined {
  if (iface === undefined || iface === 'other') return undefined;
  switch (source) {
    case 'module-field':
      // The fields of a struct kretprobe: a module's own, or those of the kretprobe a tracefs,
      // perf or BPF kprobe event is built on, read from the kernel (a probe on
      // unregister_kretprobe). An fprobe has no struct kretprobe.
      return iface !== 'fprobe';
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
 * The one owner of the split of a miss figure into pool misses (rp->nmissed: no free instance)
 * and the rest (kp.nmissed: re-entry, another probe active; for a kprobe_multi link, ftrace
 * recursion and "kprobe running"). Every consumer reads the three facts below; nothing else
 * re-derives the split (issue 20, "decisions with two owners").
 *
 * - A module's struct fields are read apart: the split is as stated.
 * - Before 5.17 (without the stable backport) kprobe_profile's return-event column is kp.nmissed
 *   alone: it is the other part, and the pool part is unknown.
 * - A summed figure (kprobe_profile from 5.17, a BPF link's missed) is pool misses only when the
 *   other part is known (a stated kprobe_nmissed rise, never ignored), or when the pool is known
 *   too small for the demand (then pool misses occurred, their number unknown). A rise the pool
 *   cannot explain — demand measured within the pool, or no pool at all (fprobe from 6.14) — is the
 *   other part: re-entry or recursion, an observer gap.
 */
const SPLIT_INPUTS = ['counters.delta_valid', 'counters.source', 'counters.column_is_sum', 'counters.delta.column', ...snap('kprobe_nmissed'), 'capacity.pool_short', 'capacity.pool_excess', 'capacity.has_pool', 'probe.interface', 'probe.bpf_attach', 'probe.kind'] as const;
interface Split { pool?: number; other?: number; poolMissed?: boolean; contradiction?: boolean }
function split(i: Inputs): Split {
  if (!bpfAttachOpen(i)) return splitOf(i);
  // Unsaid whether it is a trampoline: that completion has none of a kretprobe's misses (both parts
  // 0, no pool miss), so only what the others agree with it on is settled.
  const r = splitOf(i);
  return { ...(r.pool === 0 ? { pool: 0 } : {}), ...(r.other === 0 ? { other: 0 } : {}), ...(r.poolMissed === false ? { poolMissed: false } : {}) };
}
function splitOf(i: Inputs): Split {
  // No pool (a BPF trampoline; an fprobe or kprobe_multi link from 6.14): no call can find it
  // empty, so there are no pool misses to count or to hide, read or not (kernel-history.md §4).
  // A trampoline has no kprobe either: nothing of a kretprobe's misses exists (its skipped runs
  // are the program's recursion_misses, counted apart).
  if (bpfAttach(i) === 'fexit') return { pool: 0, other: 0, poolMissed: false };
  if (bool(i, 'capacity.has_pool') === false && bool(i, 'counters.delta_valid') !== true) return { pool: 0, poolMissed: false };
  // An entry probe (a kprobe) has no pool and no rp->nmissed: every miss it counts is kp.nmissed,
  // re-entry (kernel-facts.md §4). A module's struct kprobe field is the stated kprobe_nmissed; a
  // profile line or a link's missed of a kprobe event is kp.nmissed alone (counters.column_is_sum).
  if (isEntryProbe(i) && str(i, 'counters.source') === 'module-field') return { pool: 0, other: rise(i, 'kprobe_nmissed'), poolMissed: false };
  if (bool(i, 'counters.delta_valid') !== true) {
    // No figure to split, but more calls inside the function at once than the pool holds is a
    // kernel fact that pool misses occurred: a call that finds the pool empty is missed
    // (kernel-facts.md §2, rp->nmissed++ before the entry handler), whether or not anyone read the
    // counter (issue 21, class c). Their number stays unknown.
    return bool(i, 'capacity.pool_short') === true ? { poolMissed: true } : {};
  }
  const col = num(i, 'counters.delta.column');
  const stated = rise(i, 'kprobe_nmissed');
  if (str(i, 'counters.source') === 'module-field') {
    // rp->nmissed read apart: each call beyond the pool at the demand peak is one of its misses, so
    // a count below those contradicts the demand (issue 20, class 3), whatever kp.nmissed did.
    const short = bool(i, 'capacity.pool_short');
    const excess = num(i, 'capacity.pool_excess');
    if (col !== undefined && short === true && (col === 0 || (excess !== undefined && col < excess))) {
      // Both parts level is constraints/demand-above-pool-misses' to name (the miss total stays 0);
      // with the other part unknown, so is the contradiction.
      if (col === 0 && stated === 0) return { pool: 0, other: 0, poolMissed: false };
      if (col === 0 && stated === undefined) return {};
      return { contradiction: true };
    }
    return { pool: col, other: stated, poolMissed: col === undefined ? undefined : col > 0 };
  }
  const sum = bool(i, 'counters.column_is_sum');
  // Not a sum: the column is kp.nmissed alone, and says nothing of the pool.
  if (sum === false) {
    // kp.nmissed alone: the pool's misses are unseen, but a demand above the pool shows they
    // occurred, and a measured demand within it shows there were none.
    const short = bool(i, 'capacity.pool_short');
    return short === true ? { other: col, poolMissed: true } : short === false ? { pool: 0, other: col, poolMissed: false } : { other: col };
  }
  // A level figure is level in both parts, whatever the figure holds.
  if (col === 0) {
    const excess = num(i, 'capacity.pool_excess');
    // A level figure with calls beyond the pool contradicts the demand (each of those is a miss).
    if (sum === true && ((bool(i, 'capacity.pool_short') === true && excess !== undefined && excess > 0) || (stated !== undefined && stated > 0))) return { contradiction: true };
    if (sum === true) return { pool: 0, other: 0, poolMissed: false };
    // A column of a release the model cannot place is kp.nmissed alone (before 5.17) or the sum:
    // calls beyond the pool were missed either way (the sum reading, level, is no possible world).
    return sum === undefined && bool(i, 'capacity.pool_short') === true ? { other: 0, poolMissed: true } : { other: 0 };
  }
  if (col === undefined) return {};
  if (sum !== true) {
    // The same two readings of a rise (issue 21, class b): a demand above the pool is pool misses
    // whatever the column holds; a measured demand within the pool leaves the rise to the other
    // part under both. Otherwise the split stays open.
    const short = bool(i, 'capacity.pool_short');
    if (short === true) return { poolMissed: true };
    if (short === false) return { pool: 0, other: col, poolMissed: false };
    return {};
  }
  if (stated !== undefined && stated > col) return { contradiction: true };
  const short = bool(i, 'capacity.pool_short');
  const excess = num(i, 'capacity.pool_excess');
  if (stated !== undefined) {
    // The other part cannot exceed the figure, nor leave fewer pool misses than the calls beyond
    // the pool at the demand peak: evidence that does is a contradiction, and no split rests on it.
    // A pool the measured demand never filled explains none of it (issue 20: such a rise is re-entry).
    const pool = col - stated;
    if (pool < 0 || (short === true && excess !== undefined && pool < excess) || (short === false && pool > 0)) return { contradiction: true };
    return { pool, other: stated, poolMissed: pool > 0 };
  }
  if (short === false) return { pool: 0, other: col, poolMissed: false };
  if (short !== true) return {};
  // Each call beyond the pool at the peak is a pool miss: a figure that holds no more than those
  // is all pool misses; one below them contradicts the demand (no split rests on that).
  if (excess === undefined) return { poolMissed: true };
  if (col < excess) return { contradiction: true };
  return col === excess ? { pool: col, other: 0, poolMissed: true } : { poolMissed: true };
}

const SPLIT_FACTS: readonly Derivation[] = [
  {
    name: 'counters.delta.nmissed', type: 'number', basis: 'kernel-facts.md §2, §4; kernel-history.md §5.1',
    description: "rise of the return probe's pool-miss count (rp->nmissed) within one epoch: as read from a module; from a summed figure only once the other part is known (see counters.pool_missed)",
    inputs: SPLIT_INPUTS,
    derive: (i) => split(i).pool,
  },
  {
    name: 'counters.delta.kprobe_nmissed', type: 'number', basis: 'kernel-facts.md §4',
    description: "rise of the misses that are not the pool's (the embedded kprobe's re-entry misses, a link's recursion skips) within one epoch: stated, the whole column before 5.17, or the part of a summed figure the pool cannot explain",
    inputs: SPLIT_INPUTS,
    derive: (i) => split(i).other,
  },
  {
    name: 'counters.split_contradiction', type: 'boolean', basis: 'kernel-facts.md §4 (the column is rp->nmissed + kp.nmissed); Separate in-flight calls from CPUs',
    description: "the evidence about a summed miss figure contradicts itself: a stated other part above the figure, fewer pool misses than calls beyond the pool at the demand peak, or pool misses although the measured demand never filled the pool (false when the split is consistent; unknown while what could still contradict it is: whether the pool is short, the other part, what the column sums)",
    inputs: SPLIT_INPUTS,
    derive: (i) => {
      if (bool(i, 'counters.delta_valid') !== true || num(i, 'counters.delta.column') === undefined) return undefined;
      if (split(i).contradiction === true) return true;
      // Nothing contradicts it yet, but a demand that fills the pool (the floor behind
      // capacity.pool_excess can rise), the other part or the column's meaning, once known, may.
      // A trampoline has none of a kretprobe's misses: nothing to split (splitOf).
      if (bpfAttach(i) === 'fexit') return false;
      const moduleField = str(i, 'counters.source') === 'module-field';
      const sum = bool(i, 'counters.column_is_sum');
      if (bool(i, 'capacity.pool_short') === undefined) return undefined;
      if (!moduleField && sum === undefined) return undefined;
      if (!moduleField && sum === true && rise(i, 'kprobe_nmissed') === undefined) return undefined;
      return false;
    },
  },
  {
    name: 'counters.pool_missed', type: 'boolean', basis: 'Read missed and filtered cases separately; kernel-facts.md §4',
    description: 'calls found no free instance within the epoch: the pool-miss count rose, or a summed figure rose while the pool is known too small for the demand',
    inputs: SPLIT_INPUTS,
    derive: (i) => split(i).poolMissed,
  },
];

/**
 * Whether the counters' line is the return event's when the case does not name both (true), or
 * may be another event's (undefined). Only a source of several lines can hold another event's:
 * kprobe_profile, with a separate entry event beside the return event. An entry probe's line is
 * its own (no return event to tell it from), and a line that counted fewer hits than the entry
 * event fired is not the entry event's (each of its hits is one of the line's). The derivation
 * reads it for an unnamed line, and the completions (src/engine/domains.ts) give the two names
 * one label where it binds, so no completion unbinds what the evidence binds.
 */
export function lineBoundWithoutNames(i: Inputs): true | undefined {
  if (isEntryProbe(i)) return true;
  const entries = num(i, 'ledger.entry_events');
  if (str(i, 'counters.source') !== 'kprobe_profile' || entries === undefined) return true;
  const hits = rise(i, 'hits');
  return hits !== undefined && hits < entries ? true : undefined;
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
    description: 'a counter is lower at the end than at the start (only a new registration resets it); false only when every counter the source has (module: nmissed and kprobe_nmissed; kprobe_profile: misses and hits; a link: missed) is known level or rising, or started at 0 (an unsigned count cannot end below it)',
    inputs: ['counters.source', ...KEYS.flatMap(snap)],
    derive: (i) => {
      const downs = KEYS.map((k) => {
        const d = rise(i, k);
        // A count that started at 0 cannot end lower, whatever its end (the counters are unsigned):
        // a fresh registration's, read or fixed by construction (issue 20, silent 3).
        if (d === undefined) return num(i, `counters.start.${k}`) === 0 ? false : undefined;
        return d < 0;
      });
      if (downs.some((d) => d === true)) return true;
      // A pair the case leaves out is not "did not go down": a reset shows in any counter of the
      // source, so each one it has must be known (issue 20, class 5).
      const source = str(i, 'counters.source');
      const has = source === 'module-field' ? [0, 1] : source === 'kprobe_profile' ? [0, 2] : source === 'bpf-link' ? [0] : [0, 1, 2];
      return has.every((n) => downs[n] === false) ? false : undefined;
    },
  },
  {
    name: 'counters.of_return_probe', type: 'boolean', basis: 'Read missed and filtered cases separately; kernel-history.md §3',
    description: "the counters are the return probe's own: a source its interface has, and (when both are named) the return event's line",
    inputs: ['counters.source', 'probe.interface', 'counters.event', 'probe.event', 'kernel.bpf_link_reports_missed', 'ledger.entry_events', ...snap('hits'), 'probe.bpf_attach', 'probe.kind'],
    derive: (i) => {
      const source = str(i, 'counters.source');
      if (source === undefined) return undefined;
      // A BPF trampoline (fexit) is no kretprobe: no struct fields, no profile line, and its tracing
      // link has no missed. Whatever counter a case names is another probe's.
      if (bpfAttach(i) === 'fexit') return false;
      const fits = sourceFits(source, str(i, 'probe.interface'), bool(i, 'kernel.bpf_link_reports_missed'));
      const ce = str(i, 'counters.event');
      const pe = str(i, 'probe.event');
      // A named line of another event (the entry event's, say) is not the return probe's. With a
      // separate entry event the profile holds two lines, and a line the case does not bind to the
      // return event by name may be either: the counters are the named return event's, or unknown
      // (issue 20, class 4), and an unnamed return event binds nothing.
      const named = ce !== undefined && pe !== undefined ? ce === pe || ce.endsWith(`/${pe}`) || pe.endsWith(`/${ce}`) : lineBoundWithoutNames(i);
      const own = and(fits, named);
      // With the attach unsaid, a trampoline completion makes any counter another probe's.
      return bpfAttachOpen(i) && own !== false ? undefined : own;
    },
  },
  {
    name: 'counters.own_count_read', type: 'boolean', basis: 'kernel-history.md §3',
    description: "the case holds a miss count read from the return probe itself, by whatever means its interface allows (a struct read at unregister counts too): false when the case names no counter source (no count was read), else counters.of_return_probe",
    inputs: ['counters.source', 'counters.of_return_probe'],
    // About the evidence, not the world: a case that names no source read no count, so this is
    // never unknown for want of one (as bounds.eligible_record_lost for an unstated field).
    derive: (i) => (str(i, 'counters.source') === undefined ? false : bool(i, 'counters.of_return_probe')),
  },
  {
    name: 'counters.delta_valid', type: 'boolean', basis: 'Read missed and filtered cases separately',
    description: "the start/end difference is a real delta: the return probe's counter, one epoch that is the probe's registration, no reset between",
    inputs: ['counters.same_epoch', 'counters.epoch_is_registration', 'counters.went_down', 'counters.of_return_probe'],
    // The epoch labels say one registration; a counter seen going down contradicts them. A pair the
    // case leaves out cannot show a reset (counters.went_down stays unknown), and a completion where
    // it falls under one label breaks constraints/counters-never-fall, so it is no possible world.
    derive: (i) => and(bool(i, 'counters.same_epoch'), bool(i, 'counters.epoch_is_registration'), bool(i, 'counters.went_down') !== true, bool(i, 'counters.of_return_probe')),
  },
  {
    name: 'counters.column_includes_pool', type: 'boolean', basis: 'kernel-history.md §5.1, dfea08a2116f',
    description: 'the miss figure read counts pool misses: a struct field or BPF link always, kprobe_profile only from 5.17 (or the Jan-2022 stable backports); an entry probe has no pool misses to leave out, so its figure counts every miss',
    inputs: ['counters.source', 'kernel.profile_sums_pool_misses', 'probe.kind'],
    derive: (i) => {
      const source = str(i, 'counters.source');
      if (source === undefined) return undefined;
      if (isEntryProbe(i)) return true;
      return source === 'kprobe_profile' ? bool(i, 'kernel.profile_sums_pool_misses') : true;
    },
  },
  {
    name: 'counters.column_is_sum', type: 'boolean', basis: 'kernel-facts.md §4, §9; kernel-history.md §3 (dfea08a2116f, 3acf8ace6823, e2b2cd592adb)',
    description: "the one miss figure read adds pool misses to other misses: kprobe_profile's return-event column from 5.17 (rp->nmissed + kp.nmissed), a BPF link's missed (kprobe perf link: the same sum; kprobe_multi: empty pool, ftrace recursion, kprobe running); a module's struct fields are separate, and an entry probe's figure is kp.nmissed alone",
    inputs: ['counters.source', 'kernel.profile_sums_pool_misses', 'probe.kind'],
    derive: (i) => {
      const source = str(i, 'counters.source');
      if (source === undefined) return undefined;
      // kprobe_profile and trace_kprobe_missed() give a kprobe event kp.nmissed alone (kernel-facts.md §4).
      if (isEntryProbe(i)) return false;
      if (source === 'module-field') return false;
      return source === 'kprobe_profile' ? bool(i, 'kernel.profile_sums_pool_misses') : true;
    },
  },
  {
    name: 'counters.delta.column', type: 'number', basis: 'Read missed and filtered cases separately',
    description: 'rise of the miss figure as read (struct nmissed, kprobe_profile column, link missed; an entry probe\'s struct kprobe nmissed) within a valid delta',
    inputs: ['counters.delta_valid', ...snap('nmissed'), 'counters.source', ...snap('kprobe_nmissed'), 'probe.kind'],
    // A module's struct fields of an entry probe are a struct kprobe's: its one miss figure is kp.nmissed.
    derive: (i) => (bool(i, 'counters.delta_valid') === true ? rise(i, isEntryProbe(i) && str(i, 'counters.source') === 'module-field' ? 'kprobe_nmissed' : 'nmissed') : undefined),
  },
  ...SPLIT_FACTS,
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
    description: 'BPF program runs skipped for recursion within the test: the rise when both snapshots are known; with only the end count, 0 when it is 0, else unknown (the count since the program was loaded may all predate the test)',
    inputs: ['counters.start.recursion_misses', 'counters.end.recursion_misses'],
    derive: (i) => {
      const a = num(i, 'counters.start.recursion_misses');
      const b = num(i, 'counters.end.recursion_misses');
      // Three-valued (issue 20): an unknown start is anything from 0 to the end count, and only an
      // end count of 0 gives every such start the same rise.
      if (b === undefined) return undefined;
      if (a === undefined) return b === 0 ? 0 : undefined;
      return Math.max(0, b - a);
    },
  },
  {
    name: 'counters.delta.hits', type: 'number', basis: 'kernel-facts.md §4',
    description: 'return-handler runs of the return event within one epoch (kprobe_profile hits)',
    inputs: ['counters.delta_valid', ...snap('hits')],
    derive: (i) => (bool(i, 'counters.delta_valid') === true ? rise(i, 'hits') : undefined),
  },
];
