import { describe, expect, it } from 'vitest';
import { parseCase } from '../../src/case/parse.js';
import { readArtifact, sniffArtifact, type CitedFact } from '../../src/evidence/artifacts.js';
import { caseFacts } from '../../src/facts/facts.js';
import { parseRuleFile } from '../../src/rules/parse.js';
import { render } from '../../src/verdict/verdict.js';
import type { Facts } from '../../src/facts/facts.js';

// Issue 22 in the engine: how a BPF program sits on the return decides the pool. A kprobe_multi
// link is an fprobe with one rethook pool of functions x 2 x possible CPUs until 6.14 and none
// after (kernel-history.md §3, §4); a BPF trampoline (fexit) has none on any release. The figures
// below are the lab's (lab/README.md, "fexit and kprobe_multi"), not the code's.
const facts = (yaml: string) => caseFacts(parseCase(`format: kretprobe-case/v1\nid: t\n${yaml}`, 't.yaml').data).values;

describe('the pool of a BPF return probe', () => {
  it.each([
    ['a kprobe_multi link of 2 functions on 6.12, 2 CPUs (lab: 8)', 'kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: bpftrace, bpf_attach: kprobe-multi, bpf_functions: 2 }', 8, true],
    ['the same link on 4 CPUs', 'kernel: { release: 6.12.95, possible_cpus: 4 }\nprobe: { interface: bpf-link, bpf_attach: kprobe-multi, bpf_functions: 3 }', 24, true],
    ['a kprobe_multi link on 7.3: no pool (lab: 12 of 12 returns)', 'kernel: { release: 7.3.4, possible_cpus: 2 }\nprobe: { interface: bpftrace, bpf_attach: kprobe-multi, bpf_functions: 2 }', undefined, false],
    ['fexit on 6.1: no pool', 'kernel: { release: 6.1.176, possible_cpus: 2 }\nprobe: { interface: other, bpf_attach: fexit }', undefined, false],
    ['a perf kretprobe: the kretprobe default (lab: 10)', 'kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: bpftrace, bpf_attach: perf-kretprobe }', 10, true],
    // Issue 20 (the oracle): unsaid, a trampoline completion has no pool and a kprobe_multi one its own.
    ['bpftrace with the attach unknown: no pool size, and whether it has one is open', 'kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: bpftrace }', undefined, undefined],
    ['a BPF link with the attach unknown: the same', 'kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: bpf-link }', undefined, undefined],
  ])('%s', (_, yaml, pool, hasPool) => {
    const v = facts(yaml);
    expect(v.get('capacity.effective_maxactive')).toBe(pool);
    expect(v.get('capacity.has_pool')).toBe(hasPool);
  });

  it('a kprobe_multi link with the function count unknown has no pool size, and no default is assumed', () => {
    const v = facts('kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: bpftrace, bpf_attach: kprobe-multi }');
    expect(v.get('capacity.effective_maxactive')).toBeUndefined();
    expect(v.get('capacity.has_pool')).toBe(true);
  });

  it('a module ignores bpf_attach: its pool is its own maxactive', () => {
    expect(facts('kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: module, bpf_attach: fexit, maxactive: { requested: 4 } }').get('capacity.effective_maxactive')).toBe(4);
  });

  it('with no pool there are no pool misses, counter read or not; no kretprobe counter is a trampoline\'s', () => {
    const v = facts('kernel: { release: 7.3.4, possible_cpus: 2 }\nprobe: { interface: bpftrace, bpf_attach: fexit }\ncounters: { source: bpf-link }');
    expect(v.get('counters.pool_missed')).toBe(false);
    expect(v.get('counters.delta.nmissed')).toBe(0);
    expect(v.get('counters.of_return_probe')).toBe(false);
    // A pooled probe with no counter read: unknown, as before.
    expect(facts('kernel: { release: 6.12.95, possible_cpus: 2 }\nprobe: { interface: module, maxactive: { requested: 4 } }').get('counters.pool_missed')).toBeUndefined();
  });
});

describe('fexit read as the interface `other` (as prose names it) is still a BPF program', () => {
  it('no entry-side filter, observational handlers, no kretprobe misses of either kind, recursion skips count as lost records', () => {
    const v = facts('kernel: { release: 6.1.176, possible_cpus: 2 }\nprobe: { interface: other, bpf_attach: fexit }\ncounters: { start: { recursion_misses: 0 }, end: { recursion_misses: 2 } }\nledger: { lost_events: 0, printk_dropped: 0, buffer_overruns: 0 }');
    expect(v.get('probe.interface_may_filter')).toBe(false);
    expect(v.get('probe.handlers_observational')).toBe(true);
    expect(v.get('counters.delta.kprobe_nmissed')).toBe(0);
    expect(v.get('ledger.records_lost')).toBe(2);
    // The same without the attach kind: another tool, nothing assumed.
    const w = facts('kernel: { release: 6.1.176, possible_cpus: 2 }\nprobe: { interface: other }');
    expect(w.get('probe.interface_may_filter')).toBeUndefined();
    expect(w.get('probe.handlers_observational')).toBeUndefined();
  });
});

describe('calls a return probe of the kernel\'s own kind cannot filter', () => {
  it.each([
    ['bpftrace', 0],
    ['tracefs', 0],
    ['perf-probe', 0],
    // Where the user's code may filter, the stated count stands.
    ['module', 2],
    ['bpf-link', 2],
  ])('%s: accounting.filtered %s with the handler unstated and 2 stated', (iface, want) => {
    expect(facts(`probe: { interface: ${iface} }\nledger: { filtered: 2 }`).get('accounting.filtered')).toBe(want);
  });
  it('a module that states its filtered count keeps it', () => {
    expect(facts('probe: { interface: module, entry_handler: { present: true, can_filter: true } }\nledger: { filtered: 2 }').get('accounting.filtered')).toBe(2);
  });
});

const fact = (facts: CitedFact[], path: string) => facts.find((f) => f.path === path)?.value;

describe('readers give the attach kind and the link\'s functions', () => {
  it('bpftool link show: a kprobe_multi link (6.12 lab paste)', () => {
    const text = '5: kprobe_multi  prog 13  \n\tkretprobe.multi  func_cnt 2  missed 4  \n\taddr             cookie           func [module]\n\tffffffffc05b3010 0                krtfix_target [krtfix]  \n\tffffffffc05b3760 0                krtfix_helper.isra.0 [krtfix]\n';
    const r = readArtifact('bpftool-link', text);
    expect(fact(r.facts, 'probe.bpf_attach')).toBe('kprobe-multi');
    expect(fact(r.facts, 'probe.bpf_functions')).toBe(2);
    expect(r.facts.find((f) => f.path === 'probe.bpf_functions')?.line).toBe(2);
  });
  it('bpftool -j link show: the same link in JSON', () => {
    const text = '[{"id":5,"type":"kprobe_multi","prog_id":24,"retprobe":true,"func_cnt":2,"missed":0,"funcs":[{"addr":1,"func":"krtfix_target","module":"krtfix","cookie":0},{"addr":2,"func":"krtfix_helper.isra.0","module":"krtfix","cookie":0}]}]';
    const r = readArtifact('bpftool-link-json', text);
    expect(fact(r.facts, 'probe.bpf_attach')).toBe('kprobe-multi');
    expect(fact(r.facts, 'probe.bpf_functions')).toBe(2);
  });
  it('bpftool link show: a perf kretprobe link', () => {
    const r = readArtifact('bpftool-link', '7: perf_event  prog 42  \n\tkretprobe ffffffff8d3b6c40 tcp_recvmsg  \n');
    expect(fact(r.facts, 'probe.bpf_attach')).toBe('perf-kretprobe');
    expect(fact(r.facts, 'probe.bpf_functions')).toBeUndefined();
  });
  it('bpftool perf show: a program on a kretprobe perf event is perf-kretprobe, registered, bound to its function', () => {
    // tools/bpf/bpftool/perf.c print_perf_plain, as bcc's tools leave it (a kprobe and a kretprobe on one symbol).
    const text = 'pid 1207  fd 5: prog_id 42  kprobe  func tcp_v4_connect  offset 0\npid 1207  fd 7: prog_id 43  kretprobe  func tcp_v4_connect  offset 0\npid 880  fd 9: prog_id 12  tracepoint  sched_switch\n';
    expect(sniffArtifact(text)).toBe('bpftool-perf');
    const r = readArtifact('bpftool-perf', text);
    expect(r.problems).toEqual([]);
    expect(r.facts.map((f) => [f.path, f.value, f.line, f.subject?.kind, f.subject?.symbol])).toEqual([
      ['probe.target', 'tcp_v4_connect', 2, 'return', 'tcp_v4_connect'],
      ['probe.registration.result', 'ok', 2, 'return', 'tcp_v4_connect'],
      ['probe.bpf_attach', 'perf-kretprobe', 2, 'return', 'tcp_v4_connect'],
    ]);
    // Only an entry kprobe listed: its registration is the entry probe's, and no return attach is read.
    const entry = readArtifact('bpftool-perf', 'pid 1207  fd 5: prog_id 42  kprobe  func do_sys_open  offset 0\n');
    expect(entry.facts.map((f) => [f.path, f.subject?.kind])).toEqual([['probe.target', 'entry'], ['probe.registration.result', 'entry']]);
    // A line that is not bpftool's is named, not guessed at.
    expect(readArtifact('bpftool-perf', 'pid 1  fd 2: prog_id 3  kretprobe  func\n').problems.map((p) => p.line)).toEqual([1]);
  });
  it('bpftool link show: a tracing link on the return is fexit, with no miss count', () => {
    const r = readArtifact('bpftool-link', '3: tracing  prog 9  \n\tprog_type tracing  attach_type trace_fexit  \n\ttarget_obj_id 1  target_btf_id 43978\n');
    expect(fact(r.facts, 'probe.bpf_attach')).toBe('fexit');
    expect(r.facts.find((f) => f.path === 'probe.bpf_attach')?.line).toBe(2);
    expect(fact(r.facts, 'counters.end.nmissed')).toBeUndefined();
  });
  it('a tracing link at entry (fentry) says nothing of the return', () => {
    const r = readArtifact('bpftool-link', '3: tracing  prog 9  \n\tprog_type tracing  attach_type trace_fentry  \n');
    expect(fact(r.facts, 'probe.bpf_attach')).toBeUndefined();
  });
  it.each(['kretfunc:vfs_write { @r = count(); }', 'fexit:vfs_write { @r = count(); }'])('a bpftrace script %j is fexit', (script) => {
    const r = readArtifact('bpftrace-script', script);
    expect(fact(r.facts, 'probe.bpf_attach')).toBe('fexit');
  });
  it('a bpftrace kretprobe script states no attach kind (bpftrace picks it)', () => {
    expect(fact(readArtifact('bpftrace-script', 'kretprobe:krtfix_* { @r = count(); }').facts, 'probe.bpf_attach')).toBeUndefined();
  });
});

describe('optional parts of an explanation', () => {
  const f: Facts = { values: new Map<string, number | string>([['a', 1], ['b', 'x']]), needs: new Map(), inputs: new Map() };
  it.each([
    ['A.[[ B {a}.]][[ C {zz}.]] D.', 'A. B 1. D.'],
    ['[[{a} and {b}]][[ and {c}]]', '1 and x'],
    ['{zz} outside stays unknown[[ {zz}]]', 'unknown outside stays unknown'],
  ])('%j -> %j', (template, want) => {
    expect(render(template, f)).toBe(want);
  });
  it('a rule whose optional marks do not pair is refused with its file and line', () => {
    const yaml = 'id: counters/x\ntitle: t\nsource: Read missed and filtered cases separately\nverdict: warning\nweight: 1\nwhen:\n  all:\n    - { fact: counters.pool_missed, operator: equal, value: true }\nexplains: "A [[ B"\nnext: n\n';
    expect(() => parseRuleFile(yaml, 'counters/x.yaml')).toThrow(/counters\/x\.yaml:9.*\[\[ \.\.\. \]\]/);
  });
});
