import { describe, expect, it } from 'vitest';
import { timeOrdered } from '../../src/lab/triage.js';

// The module's ring on two CPUs: a handler that read the clock later can append first. The lab
// hands the ledger its records in time order, as a user would after sorting.
describe('the lab orders module records by ts_ns before the ledger reads them', () => {
  it('puts a record appended late by another CPU back in its place, keeping ties and unstamped lines in order', () => {
    const text = [
      '{"ev": "counter", "name": "nmissed", "value": 0}',
      '{"ev": "entry", "inst": "e:1", "ts_ns": 100}',
      '{"ev": "entry", "inst": "e:3", "ts_ns": 300}',
      '{"ev": "entry", "inst": "e:2", "ts_ns": 200}',
      '{"ev": "return", "inst": "e:1", "ts_ns": 300}',
      '',
    ].join('\n');
    expect(timeOrdered(text).trim().split('\n').map((l) => /"inst": "([^"]+)"|"name": "(\w+)"/.exec(l)!.slice(1).find(Boolean))).toEqual(['nmissed', 'e:1', 'e:2', 'e:3', 'e:1']);
    expect(timeOrdered(text).trim().split('\n')[4]).toContain('"ev": "return"');
  });
});
