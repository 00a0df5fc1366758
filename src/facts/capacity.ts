import { poolFor, type ProbeInterface } from '../kernel/maxactive.js';
import { bool, num, str, type Derivation, type Inputs } from './derive.js';

const outcome = (i: Inputs) => {
  const iface = str(i, 'probe.interface') as ProbeInterface | undefined;
  if (iface === undefined) return undefined;
  if (iface === 'fprobe' && bool(i, 'kernel.fprobe_without_pool') !== false) return undefined;
  return poolFor(iface, num(i, 'probe.maxactive.requested'), num(i, 'capacity.default_maxactive'), num(i, 'kernel.possible_cpu_count'));
};
const OUTCOME_INPUTS = ['probe.interface', 'probe.maxactive.requested', 'capacity.default_maxactive', 'kernel.possible_cpu_count', 'kernel.fprobe_without_pool'] as const;

/** The instance pool: its size in force, where it came from, what the interface refuses. */
export const CAPACITY: readonly Derivation[] = [
  {
    name: 'capacity.request_rejected', type: 'boolean', basis: 'kernel-notes.md (r0:, r9999: rejected)',
    description: 'the interface refuses the requested maxactive (tracefs: r0 or more than 4096)',
    inputs: ['probe.registration.result', 'probe.interface', 'probe.maxactive.requested'],
    derive: (i) => {
      // Only tracefs refuses a number outright, whatever the case says the registration gave.
      const iface = str(i, 'probe.interface');
      if (iface !== undefined && iface !== 'tracefs') return false;
      const requested = num(i, 'probe.maxactive.requested');
      if (requested === undefined) return str(i, 'probe.registration.result') === 'ok' ? false : undefined;
      if (iface === undefined) return undefined;
      return poolFor('tracefs', requested, undefined, undefined).kind === 'rejected';
    },
  },
  {
    name: 'capacity.request_rejection', type: 'string', basis: 'kernel-facts.md §6',
    description: 'the reason the interface gives for refusing the request',
    inputs: ['capacity.request_rejected', 'probe.maxactive.requested'],
    derive: (i) => {
      if (i['capacity.request_rejected'] !== true) return undefined;
      const o = poolFor('tracefs', num(i, 'probe.maxactive.requested'), undefined, undefined);
      return o.kind === 'rejected' ? o.reason : undefined;
    },
  },
  {
    name: 'capacity.effective_maxactive', type: 'number', basis: 'kernel-facts.md §1, §6; kernel-history.md §2',
    description: 'the pool size in force: as read back, else what the interface makes of the request on this kernel',
    inputs: ['probe.maxactive.effective', ...OUTCOME_INPUTS],
    derive: (i) => {
      const readBack = num(i, 'probe.maxactive.effective');
      if (readBack !== undefined) return readBack;
      const o = outcome(i);
      return o?.kind === 'value' ? o.value : undefined;
    },
  },
  {
    name: 'capacity.uses_default', type: 'boolean', basis: 'Separate in-flight calls from CPUs',
    description: 'the pool size came from the kernel default, not from the caller model',
    inputs: ['concurrency.capacity_basis', 'probe.maxactive.requested', 'probe.interface'],
    derive: (i) => {
      const basis = str(i, 'concurrency.capacity_basis');
      if (basis !== undefined) return basis === 'default';
      const requested = num(i, 'probe.maxactive.requested');
      const iface = str(i, 'probe.interface');
      return requested !== undefined && iface !== undefined ? requested <= 0 && iface !== 'tracefs' : undefined;
    },
  },
];
