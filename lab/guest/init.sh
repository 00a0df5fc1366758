#!/bin/sh
# PID 1 of the lab guest (busybox ash). Runs the article's controlled overlap fixture on
# `pipe_read` through tracefs, one fresh registration per scenario, collects start/end bundles
# with the project's collector and prints each scenario's files on the console between markers
# (base64 of a gzipped tar) for the host to split. Then powers off.
#
# Rules this script keeps (kernel-notes.md):
# - disable every event before clearing kprobe_events, or the write fails with EBUSY and the old
#   registration (and its counters) silently stays;
# - while a probe on pipe_read is armed, the controller reads nothing through a pipe: no `|`, no
#   `$(...)` (command substitution is a pipe the shell reads), so every pipe_read record and
#   counter belongs to the fixture's readers. The collector does use pipes, so it runs only
#   while the events are disabled: a disabled kprobe runs no handler, so its counters stand still.
# - times in ops.jsonl are CLOCK_MONOTONIC ns ("now at" of /proc/timer_list), and the trace
#   clock is set to `mono`, so the ledger and the trace share one clock.

/bin/busybox mkdir -p /proc /sys /dev /tmp /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec 0</dev/console 1>/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tmpfs tmpfs /tmp
# Keep kernel messages off the console: they would tear the framed bundle lines.
echo 1 > /proc/sys/kernel/printk

T=/sys/kernel/tracing
[ -d /sys/kernel/debug/tracing ] && [ ! -f $T/kprobe_events ] && T=/sys/kernel/debug/tracing
OUT=/tmp/out
mkdir -p $OUT
SCENARIOS="constrained adequate stopped default failures"
[ -f /lab/run.conf ] && . /lab/run.conf
COLLECT=/lab/collect.sh

say() { echo "@@KRT-LOG $*"; }

NOW=0
now_ns() { # CLOCK_MONOTONIC in ns into $NOW, without forking or reading a pipe
  local a b c d
  NOW=0
  while read -r a b c d; do
    if [ "$a" = now ] && [ "$b" = at ]; then NOW=$c; return 0; fi
  done < /proc/timer_list
  return 1
}

HITS=""; MISSES=""
profile_get() { # EVENT -> $HITS $MISSES from kprobe_profile (read with the shell builtin)
  local pname h m
  HITS=""; MISSES=""
  while read -r pname h m; do
    if [ "$pname" = "$1" ]; then HITS=$h; MISSES=$m; fi
  done < $T/kprobe_profile
}

DEF_LINE=""
def_get() { # GRP/EVENT -> the matching kprobe_events line into $DEF_LINE
  local line
  DEF_LINE=""
  while read -r line; do
    case "$line" in
      *":$1 "*) DEF_LINE=$line ;;
    esac
  done < $T/kprobe_events
}

reset_tracing() {
  echo 0 > $T/tracing_on
  echo 0 > $T/events/enable 2>/dev/null
  # Per-event disable too: `events/enable` may leave a kprobe event that was enabled by name.
  for f in $T/events/kfix/*/enable; do [ -f "$f" ] && echo 0 > "$f"; done
  : > $T/kprobe_events || say "warning: clearing kprobe_events failed"
  : > $T/trace
  : > $T/error_log 2>/dev/null
  echo mono > $T/trace_clock 2>/dev/null
  echo 1 > $T/tracing_on
}

events_enable() { # 0|1
  for e in $EVENTS; do echo "$1" > $T/events/$e/enable; done
}

# Copy, while the probe is armed, every file the collector reads into a private tree, with cat
# into files (no pipe, so no pipe_read). The collector then reads that tree (--root) while the
# events are disabled: the snapshot shows the armed state, and the collector's own pipes touch
# neither the counters nor the trace.
stage() { # start|end -> $R
  local f e
  R=/tmp/root-$S_NAME-$1
  for f in proc/sys/kernel/osrelease proc/sys/kernel/arch proc/version proc/uptime \
    sys/devices/system/cpu/possible proc/kallsyms \
    sys/kernel/debug/kprobes/list sys/kernel/debug/kprobes/enabled sys/kernel/debug/kprobes/blacklist \
    sys/kernel/tracing/kprobe_events sys/kernel/tracing/kprobe_profile sys/kernel/tracing/error_log \
    sys/kernel/tracing/tracing_on sys/kernel/tracing/trace; do
    [ -e "/$f" ] || continue
    mkdir -p "$R/${f%/*}"
    cat "/$f" > "$R/$f"
  done
  for e in $EVENTS; do
    [ -e $T/events/$e/enable ] || continue
    mkdir -p $R/sys/kernel/tracing/events/$e
    cat $T/events/$e/enable > $R/sys/kernel/tracing/events/$e/enable
  done
  if [ -e /boot/config-$REL ]; then mkdir -p $R/boot; cp /boot/config-$REL $R/boot/; fi
}

collect() { # start|end: stage while armed, then the project's collector writes $S/start or $S/end
  local ev="" e armed=0
  stage "$1"
  for e in $EVENTS; do
    ev="$ev --event $e"
    if [ -e $T/events/$e/enable ]; then read -r v < $T/events/$e/enable; [ "$v" = 1 ] && armed=1; fi
  done
  [ $armed = 1 ] && events_enable 0
  sh $COLLECT snapshot "$1" $ev --symbol "$SYMBOL" --root "$R" --out "$S" > "$S/collect-$1.log" 2>&1
  echo $? > "$S/collect-$1.rc"
  rm -rf "$R"
  [ $armed = 1 ] && events_enable 1
}

emit() { # scenario-name: print $OUT/name as a framed base64 tar.gz
  say "emitting $1"
  echo "@@KRT-BUNDLE-BEGIN $1"
  tar -C $OUT -czf - "$1" | base64
  echo "@@KRT-BUNDLE-END $1"
}

json_str() { # escape for a JSON string value: backslash and double quote, drop newlines
  JS=$1
  JS=${JS//\\/\\\\}
  JS=${JS//\"/\\\"}
  JS=${JS//
/ }
}

meta() { # key value-as-json -> appended to scenario.json lines (assembled at the end)
  echo "\"$1\": $2," >> "$S/meta.part"
}

finish_meta() {
  {
    echo "{"
    cat "$S/meta.part"
    echo "\"format\": \"kretprobe-lab-scenario/v1\""
    echo "}"
  } > "$S/scenario.json"
  rm -f "$S/meta.part"
}

READERS=3
# One gated workload: three readers, each blocked in pipe_read on its own FIFO whose writer
# (this shell) stays open; each reader is admitted only after the previous one is verified
# blocked (entry event hit count), so all three truly overlap before the snapshot.
# $1 scenario, $2 stop-capture-while-gated (0|1)
gated_workload() {
  local name=$1 stop=$2 i n pid fd sub done_ state wchan line eh rh rm_ ok blocked stop_ns rel
  G=$S/gate
  mkdir -p $G
  i=1
  while [ $i -le $READERS ]; do mkfifo $G/fifo$i; i=$((i + 1)); done
  : > $S/ops.jsonl.part
  PIDS=""
  ok=1
  i=1
  while [ $i -le $READERS ]; do
    now_ns; sub=$NOW
    cat $G/fifo$i > $G/out$i &
    pid=$!
    # The writer end, held by this shell: opening blocks until the reader has opened.
    fd=$((i + 2))
    eval "exec $fd>$G/fifo$i"
    PIDS="$PIDS $pid"
    eval "SUB_$i=$sub PID_$i=$pid"
    # Wait until the reader's pipe_read entry is counted and it sleeps there.
    n=0
    while :; do
      profile_get gate_entry
      [ "${HITS:-0}" -ge $i ] && break
      n=$((n + 1))
      if [ $n -ge 3000 ]; then ok=0; say "reader $i never reached pipe_read in 30 s"; break; fi
      usleep 10000
    done
    state=""
    while read -r line; do case "$line" in State:*) state=$line ;; esac; done < /proc/$pid/status
    wchan=""
    [ -r /proc/$pid/wchan ] && read -r wchan < /proc/$pid/wchan
    echo "reader=$i pid=$pid entry_hits=$HITS $state wchan=$wchan" >> $S/gate.log
    i=$((i + 1))
  done
  profile_get gate_entry; eh=$HITS
  profile_get gate; rh=$HITS; rm_=$MISSES
  blocked=false; [ $ok = 1 ] && blocked=true
  meta gated "{\"entry_hits\": ${eh:-null}, \"return_hits\": ${rh:-null}, \"return_misses\": ${rm_:-null}, \"all_blocked\": $blocked}"
  cp $T/kprobe_profile $S/gated.kprobe_profile
  cp $T/trace $S/gated.trace
  stop_ns=null
  if [ "$stop" = 1 ]; then
    echo 0 > $T/tracing_on
    now_ns; stop_ns=$NOW
    say "capture stopped while gated"
  fi
  meta capture_stop_ns "$stop_ns"
  # Release: close every writer end at once; each reader sees EOF and returns from pipe_read.
  now_ns; rel=$NOW
  exec 3>&- 4>&- 5>&-
  meta released_ns "$rel"
  i=1
  while [ $i -le $READERS ]; do
    eval "pid=\$PID_$i sub=\$SUB_$i"
    wait $pid
    now_ns; done_=$NOW
    if [ "$stop" = 1 ]; then
      # Not completed when capture stopped: done_ns is null; when it did finish is kept apart.
      echo "{\"op\": \"$name-read-$i\", \"task\": $pid, \"submit_ns\": $sub, \"done_ns\": null, \"done_after_stop_ns\": $done_, \"reaches_target\": true}" >> $S/ops.jsonl.part
    else
      echo "{\"op\": \"$name-read-$i\", \"task\": $pid, \"submit_ns\": $sub, \"done_ns\": $done_, \"reaches_target\": true}" >> $S/ops.jsonl.part
    fi
    i=$((i + 1))
  done
  mv $S/ops.jsonl.part $S/ops.jsonl
  profile_get gate_entry; eh=$HITS
  profile_get gate; rh=$HITS; rm_=$MISSES
  meta released "{\"entry_hits\": ${eh:-null}, \"return_hits\": ${rh:-null}, \"return_misses\": ${rm_:-null}}"
  cp $T/kprobe_profile $S/released.kprobe_profile
}

# A fixture scenario: $1 name, $2 return-probe prefix (r2, r8, r), $3 stop capture while gated
fixture() {
  local name=$1 prefix=$2 stop=$3 t0 ret_def ent_def rc1 rc2
  SYMBOL=pipe_read
  S=$OUT/$name; S_NAME=$name; mkdir -p $S
  now_ns; t0=$NOW
  reset_tracing
  ret_def="$prefix:kfix/gate pipe_read arg1=\$retval"
  ent_def="p:kfix/gate_entry pipe_read"
  echo "$ret_def" >> $T/kprobe_events 2> $S/register.err; rc1=$?
  echo "$ent_def" >> $T/kprobe_events 2>> $S/register.err; rc2=$?
  json_str "$ret_def"; meta definition "\"$JS\""
  json_str "$ent_def"; meta entry_definition "\"$JS\""
  meta register_rc "[$rc1, $rc2]"
  cp $T/kprobe_events $S/registered.kprobe_events
  def_get kfix/gate; json_str "$DEF_LINE"; meta readback "\"$JS\""
  if [ $rc1 != 0 ] || [ $rc2 != 0 ]; then
    say "$name: registration failed"; cp $T/error_log $S/error_log 2>/dev/null
    finish_meta; emit $name; return
  fi
  EVENTS="kfix/gate kfix/gate_entry"
  # A fresh epoch with both counters at zero; armed from here to the end snapshot, except while
  # the collector itself runs (see stage).
  events_enable 1
  collect start
  gated_workload $name $stop
  collect end
  events_enable 0
  echo 1 > $T/tracing_on
  now_ns; meta elapsed_ns "$((NOW - t0))"
  meta scenario "\"$name\""
  finish_meta
  emit $name
}

# A registration that must be rejected: $1 name, $2 definition, $3 its symbol
failure() {
  local name=$1 def=$2 t0 rc err
  SYMBOL=$3
  S=$OUT/$name; S_NAME=$name; mkdir -p $S
  now_ns; t0=$NOW
  reset_tracing
  EVENTS="kfix/gate"
  collect start
  echo "$def" >> $T/kprobe_events 2> $S/register.err; rc=$?
  json_str "$def"; meta definition "\"$JS\""
  meta register_rc "[$rc]"
  read -r err < $S/register.err; json_str "$err"; meta register_err "\"$JS\""
  cp $T/error_log $S/error_log 2>/dev/null
  collect end
  now_ns; meta elapsed_ns "$((NOW - t0))"
  meta scenario "\"$name\""
  finish_meta
  emit $name
}

read -r REL < /proc/sys/kernel/osrelease
read -r CPUS < /sys/devices/system/cpu/possible
say "guest up: release=$REL possible=$CPUS tracefs=$T scenarios=$SCENARIOS"
for sc in $SCENARIOS; do
  say "scenario $sc begin"
  case $sc in
    constrained) fixture constrained r2 0 ;;
    adequate) fixture adequate r8 0 ;;
    stopped) fixture stopped r8 1 ;;
    default) fixture "${DEFAULT_NAME:-default}" r 0 ;;
    failures)
      failure fail-missing-symbol 'r:kfix/gate no_such_function_xyz' no_such_function_xyz
      failure fail-blacklisted 'r:kfix/gate do_int3' do_int3
      failure fail-r0 'r0:kfix/gate pipe_read' pipe_read
      failure fail-r9999 'r9999:kfix/gate pipe_read' pipe_read
      ;;
    *) say "unknown scenario $sc" ;;
  esac
  say "scenario $sc end"
done
reset_tracing
say "all done"
echo "@@KRT-DONE"
sync
poweroff -f
