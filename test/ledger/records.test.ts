import { describe, expect, it } from 'vitest';
import { parseOpBytes, parseOpLine, parseProbeBytes, parseProbeLine } from '../../src/ledger/records.js';

// The byte fast paths must agree with the JSON.parse paths on every line: the reader only
// falls back to JSON.parse when the fast path gives up.
const bytes = (text: string): [Buffer, number, number] => {
  // Surrounding bytes check that the parsers honour start/end.
  const b = Buffer.from(`xx\n${text}\nyy`, 'utf8');
  return [b, 3, b.length - 3];
};

describe('probe.jsonl records: fast path and JSON.parse agree', () => {
  it.each([
    ['entry with every field', '{"ev":"entry","inst":"ffff8881c0a1e400:42","task":311,"cpu":1,"ts_ns":4374190000,"op":"req-17"}'],
    ['return with ret', '{"ev":"return","inst":"ffff8881c0a1e400:42","task":311,"cpu":0,"ts_ns":6138369000,"ret":0}'],
    ['filtered without inst', '{"ev":"filtered","task":312,"ts_ns":4375000000,"op":"req-18"}'],
    ['spaces and another order', '{ "ts_ns" : 5, "task" : 7 , "ev" : "entry", "inst": "a" }'],
    ['non-ASCII ids', '{"ev":"entry","inst":"inst-é-ü","task":1,"ts_ns":1,"op":"requête-1"}'],
    ['numeric inst', '{"ev":"entry","inst":42,"task":1,"ts_ns":1}'],
    ['null task and op', '{"ev":"entry","inst":"x","task":null,"ts_ns":1,"op":null}'],
    ['unknown fields of every kind', '{"ev":"entry","inst":"x","ts_ns":1,"f":1.5,"g":[1],"h":{"a":1},"i":true,"j":"s\\"q"}'],
    ['escaped id', '{"ev":"entry","inst":"a\\u0041","ts_ns":1}'],
    ['a later duplicate key wins', '{"ev":"entry","inst":"a","inst":"b","ts_ns":1}'],
    ['counter', '{"ev":"counter","name":"nmissed","value":1,"epoch":"reg-1","ts_ns":6200000000}'],
  ])('%s', (_name, text) => {
    const full = parseProbeLine(text, 9);
    expect(full.ok).toBe(true);
    expect(parseProbeBytes(...bytes(text), 9)).toEqual(full);
  });

  it.each([
    ['not JSON', '{"ev":"entry",'],
    ['an unknown ev', '{"ev":"exit","ts_ns":1}'],
    ['a negative ts_ns', '{"ev":"entry","inst":"a","ts_ns":-1}'],
    ['a fractional ts_ns', '{"ev":"entry","inst":"a","ts_ns":1.5}'],
    ['an array', '[1]'],
  ])('rejects %s as JSON.parse does', (_name, text) => {
    const full = parseProbeLine(text, 3);
    expect(full.ok).toBe(false);
    expect(parseProbeBytes(...bytes(text), 3)).toEqual(full);
  });
});

describe('ops.jsonl records: fast path and JSON.parse agree', () => {
  it.each([
    ['complete', '{"op":"req-17","task":311,"submit_ns":4374190000,"done_ns":6138369000,"reaches_target":true}'],
    ['not completed, no task', '{"op":"req-18","submit_ns":5,"done_ns":null}'],
    ['non-ASCII id and unknown fields', '{"op":"requête-ü","submit_ns":5,"done_ns":6,"reaches_target":false,"note":{"x":[1]}}'],
  ])('%s', (_name, text) => {
    const full = parseOpLine(text, 4);
    expect(full.ok).toBe(true);
    expect(parseOpBytes(...bytes(text), 4)).toEqual(full);
  });

  it.each([
    ['an empty op', '{"op":"","submit_ns":5}'],
    ['done before submit', '{"op":"a","submit_ns":5,"done_ns":4}'],
    ['no submit_ns', '{"op":"a"}'],
  ])('rejects %s as JSON.parse does', (_name, text) => {
    const full = parseOpLine(text, 2);
    expect(full.ok).toBe(false);
    expect(parseOpBytes(...bytes(text), 2)).toEqual(full);
  });
});
