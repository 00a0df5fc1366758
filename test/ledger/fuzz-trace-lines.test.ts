import { fuzzFamilies } from '../hardening/fuzz-run.js';

// The trace-line family (scripts/trace-lines.ts) at npm test's count and seed, beside the others.
fuzzFamilies(['trace lines']);
