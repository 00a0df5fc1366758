import { fuzzFamilies } from './fuzz-run.js';

fuzzFamilies(['cases']);
