import { describe, expect, it } from 'vitest';
import { MAX_OPEN_CALLS } from '../../src/ledger/ledger.js';
import { cli } from './helpers.js';

// Memory follows calls in flight; an input that keeps opening calls and never closes them is not a
// trace of a bounded test, and must not be allowed to grow memory with the file.
describe('ledger on an input that never closes its calls', () => {
  it('stops at the open-call bound with a one-line error naming the line, exit 2', () => {
    const line = '             cat-225     [001] .....     4.333506: gate_entry: (pipe_read+0x4/0x470)\n';
    const r = cli(['ledger', '--trace', '-', '--entry-event', 'gate_entry', '--return-event', 'gate'], { input: line.repeat(MAX_OPEN_CALLS + 10) });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`<stdin>:${MAX_OPEN_CALLS + 1}: expected a trace whose entries are closed by returns`));
  });
});
