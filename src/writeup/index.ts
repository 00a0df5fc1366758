// The write-up stage: write-up text -> positioned facts and claims -> a case for the engine.
export { decodeWriteup, sniffKind, isWriteupName, MAX_WRITEUP_BYTES, SIDECAR_SUFFIX, type WriteupKind } from './text.js';
export { readDocument, parseBlocks, type WriteupDocument, type Piece, type SourceLine } from './document.js';
export { loadLexicon, parseLexicon, type Lexicon } from './lexicon.js';
export { extractWriteup, type Extraction, type FactConflict } from './extract.js';
export { judgeWriteup, compareFacts, compareClaims, sidecarSchema, type Sidecar } from './judge.js';
export { formatWriteupText, formatWriteupJson } from './format.js';
export { loadWriteup, readWriteup, writeupOf } from './load.js';
export type { WriteupFact, FactOrigin } from './facts.js';
export type { WriteupClaim, NotAClaim } from './sentences.js';
