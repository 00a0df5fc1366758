import { fuzzFamilies } from './fuzz-run.js';

fuzzFamilies(['rules', 'answers', 'bundle files', 'trace text', 'probe/ops JSONL']);
