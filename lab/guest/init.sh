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

# wait_count VAR MIN GETTER ARGS...: run GETTER (a function that sets VAR, without forking or
# reading a pipe) every 10 ms until VAR >= MIN; false after 30 s.
wait_count() {
  local var=$1 min=$2 n=0 v
  shift 2
  while :; do
    "$@"
    eval "v=\${$var:-0}"
    [ "$v" -ge "$min" ] && return 0
    n=$((n + 1))
    [ $n -ge 3000 ] && return 1
    usleep 10000
  done
}

DEF_LINE=""
def_get() { # GRP/EVENT [FILE] -> the matching kprobe_events (or FILE) line into $DEF_LINE
  local line
  DEF_LINE=""
  while read -r line; do
    case "$line" in
      *":$1 "*) DEF_LINE=$line ;;
    esac
  done < ${2:-$T/kprobe_events}
}

reset_tracing() {
  echo 0 > $T/tracing_on
  echo 0 > $T/events/enable 2>/dev/null
  # Per-event disable too: `events/enable` may leave a kprobe event that was enabled by name.
  for f in $T/events/kfix/*/enable; do [ -f "$f" ] && echo 0 > "$f"; done
  : > $T/kprobe_events || say "warning: clearing kprobe_events failed"
  [ -f $T/dynamic_events ] && { : > $T/dynamic_events || say "warning: clearing dynamic_events failed"; }
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
  # The ring buffer's per-CPU counts (the collector's buffer_stats).
  for f in /sys/kernel/tracing/per_cpu/cpu*/stats; do
    [ -e "$f" ] || continue
    mkdir -p "$R${f%/*}"
    cat "$f" > "$R$f"
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
    wait_count HITS $i profile_get gate_entry || { ok=0; say "reader $i never reached $PIPE_SYM in 30 s"; }
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

# A fixture scenario: $1 name, $2 return-probe prefix (r2, r8, r; f2, f with $4 = fprobe),
# $3 stop capture while gated, $4 `fprobe`: the return event is an fprobe exit event
# (`fN:kfix/gate pipe_read%return`, written to dynamic_events); the entry event stays a kprobe.
fixture() {
  local name=$1 prefix=$2 stop=$3 kind=${4:-kprobe} t0 ret_def ent_def rc1 rc2 defs=$T/kprobe_events
  SYMBOL=$PIPE_SYM
  S=$OUT/$name; S_NAME=$name; mkdir -p $S
  now_ns; t0=$NOW
  reset_tracing
  ret_def="$prefix:kfix/gate $PIPE_SYM arg1=\$retval"
  if [ "$kind" = fprobe ]; then
    ret_def="$prefix:kfix/gate $PIPE_SYM%return arg1=\$retval"
    defs=$T/dynamic_events
  fi
  ent_def="p:kfix/gate_entry $PIPE_SYM"
  if [ -f "$defs" ]; then
    echo "$ret_def" >> $defs 2> $S/register.err; rc1=$?
  else
    echo "no $defs" > $S/register.err; rc1=1
  fi
  echo "$ent_def" >> $T/kprobe_events 2>> $S/register.err; rc2=$?
  json_str "$ret_def"; meta definition "\"$JS\""
  json_str "$ent_def"; meta entry_definition "\"$JS\""
  meta register_rc "[$rc1, $rc2]"
  cp $T/kprobe_events $S/registered.kprobe_events
  [ -f $T/dynamic_events ] && cp $T/dynamic_events $S/registered.dynamic_events
  def_get kfix/gate $defs; json_str "$DEF_LINE"; meta readback "\"$JS\""
  meta probe_kind "\"$kind\""
  if [ $rc1 != 0 ] || [ $rc2 != 0 ]; then
    say "$name: registration failed"; cp $T/error_log $S/error_log 2>/dev/null
    # Snapshots of the rejected state, so the bundle makes a case (a setup failure) like failure().
    EVENTS="kfix/gate"
    collect start
    collect end
    now_ns; meta elapsed_ns "$((NOW - t0))"
    meta scenario "\"$name\""
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

# --- the lab module (lab/module/krtfix.c): a gated test function under a kretprobe --------------
# The probe sits on krtfix_target, which only writes to debugfs krtfix/call reach, so here the
# controller may use pipes freely and the collector reads the live system (no staging copy).
D=/sys/kernel/debug/krtfix
KO=/lab/krtfix.ko

CV=""
counter_get() { # NAME -> $CV, from the module's debugfs counters
  local k v
  CV=""
  while read -r k v; do [ "$k" = "$1" ] && CV=$v; done < $D/counters
}

mod_load() { # EPOCH PARAMS... -> $LOAD_RC; the exact insmod line goes to scenario.json
  local ep=$1 line l
  shift
  dmesg -c > /dev/null 2>&1
  insmod $KO epoch=$ep "$@" 2>> $S/register.err; LOAD_RC=$?
  line="insmod krtfix.ko epoch=$ep $*"
  json_str "$line"; echo "\"$JS\"" >> $S/loads.part
  echo $LOAD_RC >> $S/load_rc.part
  # The errno register_kretprobe returned is in the module's kernel log line (insmod shows only
  # strerror): the host reads register.dmesg with the project's dmesg reader.
  if [ $LOAD_RC != 0 ]; then
    dmesg > $S/register.dmesg 2>&1
    read -r l < $S/register.err; json_str "$l"; meta register_err "\"$JS\""
  fi
}

mod_load_failed() { # SYMBOL: snapshots of the refused registration, so the bundle makes a case
  # The module never loaded: its counters directory is absent, and the manifest says so.
  sh $COLLECT snapshot start --module-dir $D --symbol "$1" --out "$S" > "$S/collect-start.log" 2>&1
  echo $? > "$S/collect-start.rc"
  sh $COLLECT snapshot end --module-dir $D --symbol "$1" --out "$S" > "$S/collect-end.log" 2>&1
  echo $? > "$S/collect-end.rc"
  : > $S/probe.jsonl
}

mod_unload() {
  rmmod krtfix 2>> $S/register.err || say "$S_NAME: rmmod krtfix failed"
}

mod_snapshot() { # start|end: the project's collector, with the module's counters, then its records
  sh $COLLECT snapshot "$1" --module-dir $D --symbol krtfix_target --out "$S" > "$S/collect-$1.log" 2>&1
  echo $? > "$S/collect-$1.rc"
  [ -d "$S/$1" ] && cat $D/records > "$S/$1/module_records"
  # The scenario's probe.jsonl: the counters as the start snapshot read them, then every record
  # of this registration up to the end snapshot (a bounded ring: dropped lines are counted).
  if [ "$1" = end ]; then
    grep '"ev": "counter"' "$S/start/module_records" > "$S/probe.jsonl" 2>/dev/null
    cat "$S/end/module_records" >> "$S/probe.jsonl"
  fi
}

# Enter one call per spec "OP:DEPTH:TAG", each from its own task (a background write to
# krtfix/call), admitting the next only when the module counts this one held at the gate.
mod_calls() {
  local spec op rest depth tag i=0 n pid sub
  : > $S/ops.part
  MOD_OK=1
  for spec in "$@"; do
    i=$((i + 1))
    op=${spec%%:*}; rest=${spec#*:}; depth=${rest%%:*}; tag=${rest#*:}
    now_ns; sub=$NOW
    echo "$op $depth $tag" > $D/call &
    pid=$!
    eval "SUB_$i=$sub PID_$i=$pid OP_$i=$op"
    wait_count CV $i counter_get held || { MOD_OK=0; say "call $i ($op) never reached the gate in 30 s"; }
    echo "call=$i op=$op depth=$depth tag=$tag pid=$pid held=$CV" >> $S/gate.log
  done
  NCALLS=$i
}

mod_release() { # stopped(0|1): open the gate, wait for every caller, write ops.jsonl
  local i pid sub op done_ rc
  now_ns; meta released_ns "$NOW"
  echo 1 > $D/release
  i=1
  while [ $i -le $NCALLS ]; do
    eval "pid=\$PID_$i sub=\$SUB_$i op=\$OP_$i"
    wait $pid; rc=$?
    now_ns; done_=$NOW
    [ $rc = 0 ] || say "$S_NAME: call $op failed ($rc)"
    if [ "$1" = 1 ]; then
      echo "{\"op\": \"$op\", \"task\": $pid, \"submit_ns\": $sub, \"done_ns\": null, \"done_after_stop_ns\": $done_, \"reaches_target\": true}" >> $S/ops.part
    else
      echo "{\"op\": \"$op\", \"task\": $pid, \"submit_ns\": $sub, \"done_ns\": $done_, \"reaches_target\": true}" >> $S/ops.part
    fi
    i=$((i + 1))
  done
  cat $S/ops.part >> $S/ops.jsonl
  rm -f $S/ops.part
}

mod_gated_meta() {
  local held
  counter_get held; held=$CV
  cp $D/counters $S/gated.counters
  local all=false
  [ "$MOD_OK" = 1 ] && [ "${held:-0}" -ge "$NCALLS" ] && all=true
  meta gated "{\"held\": ${held:-null}, \"calls\": $NCALLS, \"all_blocked\": $all}"
}

mod_begin() { # NAME
  S=$OUT/$1; S_NAME=$1; mkdir -p $S
  : > $S/loads.part; : > $S/load_rc.part; : > $S/ops.jsonl
  now_ns; T0=$NOW
}

mod_finish() {
  local l sep="" loads="" rcs=""
  while read -r l; do loads="$loads$sep$l"; sep=", "; done < $S/loads.part
  sep=""
  while read -r l; do rcs="$rcs$sep$l"; sep=", "; done < $S/load_rc.part
  rm -f $S/loads.part $S/load_rc.part
  meta loads "[$loads]"
  meta register_rc "[$rcs]"
  now_ns; meta elapsed_ns "$((NOW - T0))"
  meta scenario "\"$S_NAME\""
  finish_meta
  emit $S_NAME
}

# One registration: NAME STOPPED(0|1) "PARAMS" CALLSPEC...
mod_fixture() {
  local name=$1 stop=$2 params=$3 sym p
  shift 3
  mod_begin $name
  # shellcheck disable=SC2086
  mod_load $name-1 $params
  if [ $LOAD_RC != 0 ]; then
    say "$name: insmod failed"
    sym=krtfix_target
    for p in $params; do case $p in symbol=*) sym=${p#symbol=} ;; esac; done
    mod_load_failed $sym
    mod_finish; return
  fi
  cp $D/counters $S/registered.counters
  mod_snapshot start
  mod_calls "$@"
  mod_gated_meta
  if [ "$stop" = 1 ]; then
    # Capture stops while the calls are still in the function: the end snapshot comes first.
    now_ns; meta capture_stop_ns "$NOW"
    mod_snapshot end
    mod_release 1
  else
    meta capture_stop_ns null
    mod_release 0
    mod_snapshot end
  fi
  cp $D/counters $S/released.counters
  mod_unload
  mod_finish
}

# The probe reloaded between the snapshots: a constrained round under epoch 1, start snapshot,
# rmmod + insmod (epoch 2), the same round again, end snapshot. Same counts, new baseline.
mod_reload() {
  local name=mod-reload
  mod_begin $name
  mod_load $name-1 maxactive=2
  if [ $LOAD_RC != 0 ]; then say "$name: insmod failed"; mod_finish; return; fi
  mod_calls warm-1:1: warm-2:1: warm-3:1:
  mod_release 0
  : > $S/ops.jsonl
  mod_snapshot start
  cp $D/records $S/epoch1.records
  mod_unload
  mod_load $name-2 maxactive=2
  if [ $LOAD_RC != 0 ]; then say "$name: second insmod failed"; mod_finish; return; fi
  cp $D/counters $S/registered.counters
  mod_calls r2-1:1: r2-2:1: r2-3:1:
  mod_gated_meta
  meta capture_stop_ns null
  mod_release 0
  mod_snapshot end
  cp $D/counters $S/released.counters
  mod_unload
  mod_finish
}

module_scenario() { # guest name
  if [ ! -f $KO ]; then say "scenario $1: no /lab/krtfix.ko in this initramfs"; return; fi
  case $1 in
    mod-constrained) mod_fixture $1 0 "maxactive=2" c1:1: c2:1: c3:1: c4:1: ;;
    mod-adequate) mod_fixture $1 0 "maxactive=8" c1:1: c2:1: c3:1: c4:1: ;;
    mod-default) mod_fixture $1 0 "maxactive=0" c1:1: c2:1: c3:1: c4:1: ;;
    mod-filtering) mod_fixture $1 0 "maxactive=8 filter_tag=skip" c1:1: c2:1: c3:1:skip c4:1: c5:1: c6:1:skip ;;
    mod-filter-overflow) mod_fixture $1 0 "maxactive=2 filter_tag=skip" c1:1:skip c2:1: c3:1: c4:1: c5:1: ;;
    mod-recursion) mod_fixture $1 0 "maxactive=2" nest:3: ;;
    mod-reenter) mod_fixture $1 0 "maxactive=8 reenter=1" c1:1: c2:1: c3:1: ;;
    mod-stopped) mod_fixture $1 1 "maxactive=8" c1:1: c2:1: c3:1: ;;
    mod-reload) mod_reload ;;
    # Registrations at and past the C API's limits (kernel-facts.md §1): each either refused,
    # with the errno register_kretprobe returned, or accepted and run like mod-adequate.
    mod-maxactive-4097) mod_fixture $1 0 "maxactive=4097" c1:1: c2:1: c3:1: c4:1: ;;
    mod-data-size-4097) mod_fixture $1 0 "maxactive=8 data_size=4097" c1:1: c2:1: c3:1: c4:1: ;;
    mod-blacklisted) mod_fixture $1 0 "maxactive=8 symbol=$NOKPROBE_SYM" c1:1: ;;
    mod-missing-symbol) mod_fixture $1 0 "maxactive=8 symbol=no_such_function_xyz" c1:1: ;;
  esac
}

# --- bpftrace on the module's gate (issue 22): Debian's bpftrace and bpftool in /usr/bin, /usr/sbin
# with their libraries under /lib/x86_64-linux-gnu (lab-setup.sh), only in boots that need them.
BT_CALLS=12
kp_on_target() { # -> $KPN: kprobes/list lines on krtfix_target (the module's own, then bpftrace's)
  local l
  KPN=0
  while read -r l; do case "$l" in *krtfix_target*) KPN=$((KPN + 1)) ;; esac; done < /sys/kernel/debug/kprobes/list
}

# Per-step guest timeout: a step that never ends fails with one clear line (and a note in the
# scenario's meta) instead of holding the boot until the host's QEMU timeout.
STEP_FAILS=""
DEADLINE=""
UPS=0
uptime_s() { # whole seconds since boot into $UPS (no fork, no pipe)
  local u r
  read -r u r < /proc/uptime
  UPS=${u%%.*}
}
wait_pid() { # PID SECONDS STEP: wait for PID up to SECONDS; on timeout kill it and say so
  local pid=$1 max=$2 step=$3 n=0
  while kill -0 $pid 2>/dev/null; do
    n=$((n + 1))
    if [ $n -gt $((max * 2)) ] || { [ -n "$DEADLINE" ] && uptime_s && [ $UPS -ge $DEADLINE ]; }; then
      say "STEP-TIMEOUT $S_NAME: $step did not end in $max s (pid $pid killed)"
      STEP_FAILS="$STEP_FAILS $step"
      # Where it was stuck, every thread: the kernel stack, wchan and state.
      stacks $pid > "$S/stuck-$step.txt" 2>&1
      kill -KILL $pid 2>/dev/null
      # A task in uninterruptible sleep outlives SIGKILL: never wait for it unbounded.
      wait_alive $pid 60
      if [ $ALIVE = 1 ]; then say "$S_NAME: $step: pid $pid survives SIGKILL (uninterruptible)"; WAIT_RC=255; return; fi
      break
    fi
    usleep 500000
  done
  wait $pid
  WAIT_RC=$?
}

# The links bpftool shows into $S/$1 (text); true when there is at least one.
bt_links() {
  bpftool link show > "$S/$1" 2>&1
  [ -s "$S/$1" ]
}

# bpftrace on the module's gate (issue 22). NAME SCRIPT: run the script against BT_CALLS callers
# held at once; the module's own kretprobe (maxactive 32) counts every call as ground truth.
# The script is attached when kprobes/list shows a second probe on krtfix_target (a perf
# kretprobe) or bpftool shows a link (kprobe_multi, tracing): bpftrace compiles under TCG for a
# while first. Every step that waits has its own timeout (wait_pid).
bt_run() {
  local name=$1 script=$2 i specs="" bpid n=0 attached=0
  mod_begin $name
  STEP_FAILS=""
  export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
  bpftrace --version > $S/bpftrace.version 2>&1
  bpftool version > $S/bpftool.version 2>&1
  mod_load $name-1 maxactive=32
  if [ $LOAD_RC != 0 ]; then say "$name: insmod failed"; mod_load_failed krtfix_target; mod_finish; return; fi
  cp $D/counters $S/registered.counters
  echo "$script" > $S/script.bt
  bpftrace $S/script.bt > $S/bpftrace.out 2>&1 &
  bpid=$!
  while :; do
    kp_on_target
    # bpftool is polled every 2 s only: under TCG it competes with bpftrace's compile.
    if [ $KPN -ge 2 ]; then attached=1; break; fi
    if [ $((n % 4)) = 3 ] && bt_links attach-poll.txt; then attached=1; break; fi
    n=$((n + 1))
    if [ $n -ge 600 ]; then say "STEP-TIMEOUT $name: bpftrace did not attach in 600 s"; STEP_FAILS="$STEP_FAILS attach"; break; fi
    if ! kill -0 $bpid 2>/dev/null; then say "$name: bpftrace exited before it attached"; break; fi
    usleep 500000
  done
  rm -f $S/attach-poll.txt
  sleep 1
  cp /sys/kernel/debug/kprobes/list $S/kprobes.list
  meta bpftrace_attached "$KPN"
  meta bpftrace_attach_seen "$attached"
  mod_snapshot start
  i=1
  while [ $i -le $BT_CALLS ]; do specs="$specs c$i:1:"; i=$((i + 1)); done
  # shellcheck disable=SC2086
  mod_calls $specs
  mod_gated_meta
  say "$name: calls held"
  # What a user would paste while the calls are held: the links, as text and JSON, and the programs.
  bpftool link show > $S/bpftool-link.txt 2>&1
  bpftool -j link show > $S/bpftool-link.json 2>&1
  bpftool prog show > $S/bpftool-prog.txt 2>&1
  meta capture_stop_ns null
  bt_release
  say "$name: calls released"
  bpftool link show > $S/bpftool-link-released.txt 2>&1
  bpftool -j link show > $S/bpftool-link-released.json 2>&1
  # The programs after the returns: a run the kernel skipped (recursion_misses) shows only here.
  bpftool prog show > $S/bpftool-prog-released.txt 2>&1
  uptime_s; local t_int=$UPS
  bt_stop $bpid
  uptime_s; meta bpftrace_exit_s "$((UPS - t_int))"
  echo $WAIT_RC > $S/bpftrace.rc
  mod_snapshot end
  cp $D/counters $S/released.counters
  mod_unload
  local sf=""
  for i in $STEP_FAILS; do sf="$sf${sf:+, }\"$i\""; done
  meta step_timeouts "[$sf]"
  mod_finish
}

# Stop bpftrace as a user does (Ctrl-C: SIGINT), so that it prints its maps. It exits within a
# second or two; observed on 6.12 with bpftrace 0.17 (fexit), once in several boots, it did not
# react at all and sat until the step timeout. So: SIGINT; after 30 s the threads' stacks go to
# stuck-sigint.txt and SIGINT is sent again; after 30 s more SIGTERM (the same handler in
# bpftrace); after 60 s more the step has failed: SIGKILL. meta bpftrace_stop says which ended it.
bt_stop() { # PID
  local pid=$1 how=int
  if ! kill -0 $pid 2>/dev/null; then wait $pid; WAIT_RC=$?; meta bpftrace_stop '"exited-before"'; return; fi
  kill -INT $pid
  wait_alive $pid 30
  if [ $ALIVE = 1 ]; then
    stacks $pid > $S/stuck-sigint.txt 2>&1
    say "$S_NAME: bpftrace still running 30 s after SIGINT: SIGINT again (stacks in stuck-sigint.txt)"
    how=int2; kill -INT $pid
    wait_alive $pid 30
  fi
  if [ $ALIVE = 1 ]; then how=term; kill -TERM $pid; wait_alive $pid 60; fi
  if [ $ALIVE = 1 ]; then
    how=kill
    say "STEP-TIMEOUT $S_NAME: bpftrace-exit: bpftrace ignored SIGINT twice and SIGTERM for 120 s (killed)"
    STEP_FAILS="$STEP_FAILS bpftrace-exit"
    stacks $pid > $S/stuck-bpftrace-exit.txt 2>&1
    kill -KILL $pid
    # A task in uninterruptible sleep outlives SIGKILL: never wait for it unbounded.
    wait_alive $pid 60
    if [ $ALIVE = 1 ]; then say "$S_NAME: bpftrace survives SIGKILL (uninterruptible)"; WAIT_RC=255; meta bpftrace_stop '"unkillable"'; return; fi
  fi
  wait $pid; WAIT_RC=$?
  meta bpftrace_stop "\"$how\""
}

ALIVE=0
wait_alive() { # PID SECONDS -> $ALIVE 1 when PID still runs after SECONDS
  local n=0
  ALIVE=0
  while kill -0 $1 2>/dev/null; do
    n=$((n + 1))
    [ $n -gt $(($2 * 2)) ] && { ALIVE=1; return; }
    usleep 500000
  done
}

stacks() { # PID: every thread's name, wchan, kernel stack and signal state
  local t
  for t in /proc/$1/task/*; do
    echo "== ${t##*/}"
    cat $t/comm $t/wchan $t/stack 2>&1
    echo
    grep -E '^(State|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt):' $t/status
  done
}

# mod_release with a timeout per caller: a caller that never comes back is a failed step, not a hang.
bt_release() {
  local i pid sub op done_
  now_ns; meta released_ns "$NOW"
  echo 1 > $D/release
  # One deadline for all the callers together: 120 s from the release.
  uptime_s; DEADLINE=$((UPS + 120))
  i=1
  while [ $i -le $NCALLS ]; do
    eval "pid=\$PID_$i sub=\$SUB_$i op=\$OP_$i"
    wait_pid $pid 120 "release-$op"
    now_ns; done_=$NOW
    [ $WAIT_RC = 0 ] || say "$S_NAME: call $op failed ($WAIT_RC)"
    echo "{\"op\": \"$op\", \"task\": $pid, \"submit_ns\": $sub, \"done_ns\": $done_, \"reaches_target\": true}" >> $S/ops.part
    i=$((i + 1))
  done
  DEADLINE=""
  cat $S/ops.part >> $S/ops.jsonl
  rm -f $S/ops.part
}

# fexit on a core function the fixture drives: krtfix_target itself has no BTF (the module is
# built without it), so the fexit is on vfs_write, counted only for writes to debugfs krtfix/call
# (the held callers). bpftrace before 0.20 knows fexit only as kretfunc (observed: 0.17 says
# "FATAL: Invalid probe type made it to attachpoint parser" for fexit:) and reads a kfunc's
# arguments as args->; from 0.20 it is fexit:, and args. (a record from 0.19).
bt_fexit_script() {
  local p='fexit' a='args.'
  case "$BT_VERSION" in v0.1[0-9].*) p='kretfunc'; a='args->' ;; esac
  BT_SCRIPT="$p:vfs_write /str(${a}file->f_path.dentry->d_name.name) == \"call\"/ { @returns = count(); }"
}

read -r REL < /proc/sys/kernel/osrelease
read -r CPUS < /sys/devices/system/cpu/possible
# The FIFO read path: pipe_read until 6.x; newer kernels split it into anon_pipe_read and the
# FIFO's own read_iter fifo_pipe_read (reached through file_operations, so never inlined, and
# blocking inside its body's call to anon_pipe_read). Nothing is probed yet: grep may use pipes.
PIPE_SYM=pipe_read
if ! grep -q -E ' [tT] pipe_read$' /proc/kallsyms && grep -q -E ' [tT] fifo_pipe_read$' /proc/kallsyms; then
  PIPE_SYM=fifo_pipe_read
fi
# A function the architecture marks NOKPROBE_SYMBOL (its breakpoint/debug exception handler).
NOKPROBE_SYM=do_int3
case "$(uname -m)" in aarch64) NOKPROBE_SYM=do_debug_exception ;; esac
say "guest up: arch=$(uname -m) release=$REL possible=$CPUS tracefs=$T pipe read symbol=$PIPE_SYM scenarios=$SCENARIOS"
for sc in $SCENARIOS; do
  say "scenario $sc begin"
  case $sc in
    constrained) fixture constrained r2 0 ;;
    adequate) fixture adequate r8 0 ;;
    stopped) fixture stopped r8 1 ;;
    default) fixture "${DEFAULT_NAME:-default}" r 0 ;;
    fprobe)
      fixture fprobe-f2 f2 0 fprobe
      fixture fprobe-default f 0 fprobe
      ;;
    failures)
      failure fail-missing-symbol 'r:kfix/gate no_such_function_xyz' no_such_function_xyz
      failure fail-blacklisted "r:kfix/gate $NOKPROBE_SYM" $NOKPROBE_SYM
      failure fail-r0 "r0:kfix/gate $PIPE_SYM" $PIPE_SYM
      failure fail-r9999 "r9999:kfix/gate $PIPE_SYM" $PIPE_SYM
      ;;
    mod-*) module_scenario $sc ;;
    bt-kretprobe) bt_run $sc 'kretprobe:krtfix_target { @returns = count(); }' ;;
    bt-fexit)
      BT_VERSION=""
      LD_LIBRARY_PATH=/lib/x86_64-linux-gnu bpftrace --version > /tmp/bt.version 2>&1
      read -r _b BT_VERSION < /tmp/bt.version
      bt_fexit_script
      bt_run $sc "$BT_SCRIPT"
      ;;
    # Several kretprobe targets in one probe (a wildcard: krtfix_target and krtfix_helper, the
    # module's traceable functions): a kprobe_multi link where the kernel has CONFIG_FPROBE.
    bt-multi) bt_run $sc 'kretprobe:krtfix_* { @returns = count(); }' ;;
    *) say "unknown scenario $sc" ;;
  esac
  say "scenario $sc end"
done
reset_tracing
say "all done"
echo "@@KRT-DONE"
sync
# The serial console drains asynchronously: on a loaded host, powering off at once cut the last
# bundle short. Give the UART time to send what the tty layer still holds.
sleep 3
poweroff -f
