import { str, type Derivation } from './derive.js';

/** The symbol family the probe does or does not cover. */
export const COVERAGE: readonly Derivation[] = [
  {
    name: 'coverage.clone_count', type: 'number', basis: 'Establish the probe’s actual scope',
    description: 'compiler clones of the target found in kallsyms',
    inputs: ['coverage.clones'],
    derive: (i) => (Array.isArray(i['coverage.clones']) ? (i['coverage.clones'] as string[]).length : undefined),
  },
  {
    name: 'coverage.target_is_fragment', type: 'boolean', basis: 'kernel-facts.md §10',
    description: 'the target is a .cold fragment (entered by a jump, not a call)',
    inputs: ['probe.target'],
    derive: (i) => (str(i, 'probe.target') === undefined ? undefined : /\.cold(\.\d+)?$/.test(str(i, 'probe.target')!)),
  },
];
