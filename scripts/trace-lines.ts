/**
 * Generated kernel trace lines with their truth, for the property test of the trace-line scanner
 * (test/ledger/trace-lines.test.ts) and the `trace lines` family of `npm run fuzz`: ftrace text
 * as trace_print_context writes it (`%16s-%-7d`, an optional `(%7d)` tgid column, `[%03d]`, the
 * irq-info flags, `%5llu.%06lu: `) and perf script's `comm pid[/tid] [cpu] s.us[ns]: `, with task
 * names of 1-15 bytes that hold spaces, dashes, digits and brackets (` [3]` too), pids up to
 * PID_MAX_LIMIT and stamps over the whole u64 range of nanoseconds.
 */
import { parseTraceLine, scanTraceBytes, SCAN_ENTRY, SCAN_LOST, SCAN_OTHER, SCAN_PROBLEM, SCAN_RETURN, SCAN_SKIP, traceScan, type TraceLineOptions } from '../src/evidence/trace.js';

export interface GeneratedLine {
  text: string;
  kind: 'entry' | 'return';
  source: 'ftrace' | 'perf';
  comm: string;
  pid: number;
  tgid: number | undefined;
  cpu: number;
  sec: number;
  fracNs: number;
  event: string;
  func: string;
}

const COMM_BYTES = 'abcdefghijklmnopqrstuvwxyz0123456789_-.:/<>[]()+@ ';
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
const int = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1));

/** A task name of 1-15 bytes; the first byte not blank (ftrace right-aligns it, so leading blanks are padding). */
function comm(r: () => number): string {
  const shapes = [
    () => pick(r, ['cat', 'kworker/u8:2', 'bash', '<...>', 'systemd-journal', 'my task', 'rcu_preempt']),
    // A ` [N]` inside the name: what broke the prefix before it was read from its fixed parts.
    () => `${pick(r, ['worker', 'io', 'a-1', 'x'])} [${int(r, 0, 99)}]`,
    () => `${pick(r, ['q', 'pool', 'n'])}-${int(r, 0, 9999)} ${pick(r, ['[1]', '2', '-3', 'x'])}`,
    () => {
      let s = pick(r, [...'abcdefghijklmnopqrstuvwxyz']);
      const n = int(r, 0, 14);
      for (let i = 0; i < n; i++) s += pick(r, [...COMM_BYTES]);
      return s;
    },
  ];
  return pick(r, shapes)().slice(0, 15);
}

/** Seconds over the u64 ns range: small, around 2^53 ns, and up to its end. */
function seconds(r: () => number): number {
  return pick(r, [() => int(r, 0, 99_999), () => int(r, 9_000_000, 9_300_000), () => int(r, 0, 18_446_744_072)])();
}

function args(r: () => number): string {
  const out: string[] = [];
  const n = int(r, 0, 3);
  for (let i = 0; i < n; i++) out.push(pick(r, ['arg1=0x0', 'arg1=0', 'ret=0xfffffffffffffff5', 'count=4096', 'name="a b"', 'path="/tmp/x y"']));
  return out.length === 0 ? '' : ` ${out.join(' ')}`;
}

export function generateTraceLine(r: () => number): GeneratedLine {
  const source = r() < 0.8 ? 'ftrace' : 'perf';
  const kind = r() < 0.5 ? 'entry' : 'return';
  const c = comm(r);
  const pid = int(r, 0, 4_194_304);
  const cpu = int(r, 0, 8191);
  const sec = seconds(r);
  const func = pick(r, ['pipe_read', 'vfs_read', 'ext4_sync_file', 'do_sys_openat2']);
  if (source === 'ftrace') {
    const us = int(r, 0, 999_999);
    const tgid = r() < 0.3 ? int(r, 1, 4_194_304) : undefined;
    const tgidCol = tgid === undefined ? (r() < 0.1 ? ' (-------)' : '') : ` (${String(tgid).padStart(7)})`;
    const flags = r() < 0.9 ? ` ${pick(r, ['.....', 'd..1.', '...1', 'dNs2.', 'd.h1.'])}` : '';
    const event = kind === 'entry' ? pick(r, ['gate_entry', 'p_pipe_read_0', 'myprobe']) : pick(r, ['gate', 'r_pipe_read_0', 'myretprobe']);
    const body = kind === 'entry' ? `(${func}+0x4/0x470)` : `(vfs_read+0x338/0x370 <- ${func})`;
    const text = `${c.padStart(16)}-${String(pid).padEnd(7)}${tgidCol} [${String(cpu).padStart(3, '0')}]${flags} ${String(sec).padStart(5)}.${String(us).padStart(6, '0')}: ${event}: ${body}${args(r)}`;
    return { text, kind, source, comm: c, pid, tgid: tgid, cpu, sec, fracNs: us * 1000, event, func };
  }
  const ns = r() < 0.5;
  const frac = ns ? int(r, 0, 999_999_999) : int(r, 0, 999_999);
  const tgid = r() < 0.3 ? int(r, 1, 4_194_304) : undefined;
  const who = tgid === undefined ? `${pid}` : `${tgid}/${pid}`;
  const event = kind === 'entry' ? 'probe:vfs_read' : 'probe:vfs_read__return';
  const addr = 'ffffffff811e6f30';
  const body = kind === 'entry' ? `(${addr})` : `(${addr} <- ffffffff81240a0f)`;
  const text = `${c.padStart(16)} ${who.padStart(7)} [${String(cpu).padStart(3, '0')}] ${sec}.${String(frac).padStart(ns ? 9 : 6, '0')}: ${event}: ${body}${args(r)}`;
  return { text, kind, source: 'perf', comm: c.trim(), pid, tgid, cpu, sec, fracNs: ns ? frac : frac * 1000, event, func: addr };
}

/** What kind of line the scanner and the parser each say, as one word. */
function scanWord(k: number): string {
  return k === SCAN_ENTRY ? 'entry' : k === SCAN_RETURN ? 'return' : k === SCAN_OTHER ? 'other' : k === SCAN_LOST ? 'lost' : k === SCAN_PROBLEM ? 'problem' : k === SCAN_SKIP ? 'skip' : `?${k}`;
}

const OPTIONS: TraceLineOptions[] = [{}, { entryEvent: 'gate_entry', returnEvent: 'gate' }];

/**
 * The ledger's scanner (over the line's bytes) and parseTraceLine must say the same of a line:
 * the same kind, and for a record the same task, CPU and stamp. A disagreement, or undefined.
 */
export function traceLineAgreement(line: string): string | undefined {
  const b = Buffer.from(line, 'utf8');
  for (const o of OPTIONS) {
    const k = scanTraceBytes(b, 0, b.length, o);
    const scanned = scanWord(k);
    const pid = traceScan.pid;
    const cpu = traceScan.cpu;
    const sec = traceScan.sec;
    const frac = traceScan.fracNs;
    const p = parseTraceLine(line, o);
    const parsed = p === null ? 'skip' : p.kind;
    if (scanned !== parsed) return `scanner says ${scanned}, parseTraceLine ${parsed}${p !== null && p.kind === 'problem' ? ` (${p.expected})` : ''}`;
    if (p !== null && (p.kind === 'entry' || p.kind === 'return')) {
      if (p.pid !== pid || p.cpu !== cpu || traceScan.sec !== sec || traceScan.fracNs !== frac) return 'scanner and parseTraceLine read different prefixes';
    }
  }
  return undefined;
}

/** A generated line read back: undefined when every field is the generator's, else what differs. */
export function traceLineTruth(g: GeneratedLine): string | undefined {
  const b = Buffer.from(g.text, 'utf8');
  const k = scanTraceBytes(b, 0, b.length);
  if (scanWord(k) !== g.kind) return `scanned as ${scanWord(k)}${k === SCAN_PROBLEM ? ` (${traceScan.expected})` : ''}`;
  const st = traceScan;
  if (st.source !== g.source || st.pid !== g.pid || st.cpu !== g.cpu || st.sec !== g.sec || st.fracNs !== g.fracNs || st.tgid !== (g.tgid ?? -1)) {
    return `read ${st.source} pid ${st.pid} tgid ${st.tgid} cpu ${st.cpu} stamp ${st.sec}.${st.fracNs}`;
  }
  const p = parseTraceLine(g.text);
  if (p === null || (p.kind !== 'entry' && p.kind !== 'return')) return `parsed as ${p === null ? 'nothing' : p.kind}`;
  if (p.comm !== g.comm || p.event !== g.event || p.func !== g.func) return `parsed comm ${JSON.stringify(p.comm)} event ${p.event} func ${p.func}`;
  return undefined;
}
