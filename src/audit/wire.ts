import type { InputError } from '../errors.js';
import type { AuditInput } from './inputs.js';

// Inputs and verdicts as they cross between threads (src/audit/pool.ts, src/audit/reader.ts): the
// sending side's half, which imports nothing a worker would not load anyway. judge.ts decodes.

/**
 * A loaded input as it crosses between threads: plain data (structured clone keeps no class,
 * getter or function). It keeps its text, so the receiving side parses its positioned YAML only
 * if a report asks for positions (SARIF), as the sending side would have.
 */
export type WireInput = Omit<AuditInput, 'loaded'> & { text: string; data: AuditInput['loaded']['data'] };
/** An input that could not be loaded, as it crosses between threads. */
export interface WireError {
  file?: string | undefined;
  line?: number | undefined;
  col?: number | undefined;
  expected: string;
  got?: string | undefined;
}

export function inputToWire(input: AuditInput): WireInput {
  const { loaded, ...rest } = input;
  return { ...rest, text: loaded.text, data: loaded.data };
}

export function errorToWire(e: InputError): WireError {
  return { file: e.file, line: e.line, col: e.col, expected: e.expected, got: e.got };
}
