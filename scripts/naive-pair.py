#!/usr/bin/env python3
"""The pairing script a user would write first: the reference `npm run bench:ledger` times the
ledger against. It reads ops.jsonl (json.loads per line), reads kernel trace text line by line
with a regular expression, pairs entries and returns per task with a stack, binds each entry to
the operation of its task whose window holds it, and prints the counts per class as JSON.

It makes the mistakes the ledger is built to avoid (a missed call's entry event counts as an
admitted instance until the operation ends; no resolution of ambiguous bindings): it is a speed
reference, not a correctness one.

    python3 scripts/naive-pair.py ops.jsonl trace.txt [stop_ns]
"""
import bisect
import json
import re
import sys

LINE = re.compile(r'^\s*(.+)-(\d+)\s+(?:\(\s*[\d-]+\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+):\s+(\S+):\s+\((.*)\)')


def main():
    ops_file, trace_file = sys.argv[1], sys.argv[2]
    stop = int(sys.argv[3]) if len(sys.argv) > 3 else None
    ops = []
    by_task = {}
    with open(ops_file) as f:
        for line in f:
            if not line.strip():
                continue
            o = json.loads(line)
            rec = {'op': o['op'], 'submit': o['submit_ns'], 'done': o.get('done_ns'), 'eligible': o.get('reaches_target', True) is not False,
                   'entries': 0, 'open': 0, 'returned': 0}
            ops.append(rec)
            by_task.setdefault(o.get('task'), []).append(rec)
    starts = {}
    for task, lst in by_task.items():
        lst.sort(key=lambda r: r['submit'])
        starts[task] = [r['submit'] for r in lst]

    def find_op(task, ts):
        lst = by_task.get(task)
        if not lst:
            return None
        i = bisect.bisect_right(starts[task], ts) - 1
        while i >= 0:
            r = lst[i]
            if r['done'] is None or r['done'] >= ts:
                return r
            i -= 1
            break
        return None

    stacks = {}
    open_now = 0
    high = 0
    pairs = 0
    foreign = 0
    last = 0
    with open(trace_file) as f:
        for line in f:
            if line.startswith('#'):
                continue
            m = LINE.match(line)
            if not m:
                continue
            pid = int(m.group(2))
            ts = int(m.group(4)) * 1000000000 + int(m.group(5).ljust(9, '0'))
            last = ts
            body = m.group(7)
            st = stacks.setdefault(pid, [])
            if ' <- ' in body:
                if st:
                    ets, op = st.pop()
                    open_now -= 1
                    pairs += 1
                    if op is not None:
                        op['open'] -= 1
                        op['returned'] += 1
            else:
                op = find_op(pid, ts)
                if op is None:
                    foreign += 1
                else:
                    op['entries'] += 1
                    op['open'] += 1
                st.append((ts, op))
                open_now += 1
                if open_now > high:
                    high = open_now
    stop = stop if stop is not None else last
    cls = {'returned': 0, 'in_flight_at_stop': 0, 'completed_without_return': 0, 'no_probe_evidence': 0}
    eligible = 0
    for r in ops:
        if not r['eligible']:
            continue
        eligible += 1
        if r['entries'] > 0:
            if r['open'] == 0:
                cls['returned'] += 1
            elif r['done'] is not None and r['done'] <= stop:
                cls['completed_without_return'] += 1
            else:
                cls['in_flight_at_stop'] += 1
        elif r['returned'] > 0:
            cls['returned'] += 1
        else:
            cls['no_probe_evidence'] += 1
    print(json.dumps({'eligible': eligible, 'classification': cls, 'high_water': high, 'pairs': pairs, 'foreign': foreign}))


if __name__ == '__main__':
    main()
