#!/bin/sh
# kretprobe-triage collector: copies, read-only, the kernel artifacts a kretprobe investigation
# needs into a bundle that `kretprobe-triage case from-bundle DIR` turns into a case.
#
#   collect.sh snapshot start|end --event GRP/EVENT [--event GRP/EVENT2] --symbol SYM --out DIR
#              [--root PREFIX] [--trace-lines N] [--kallsyms-lines N] [--module-dir D]
#
# POSIX sh: runs under busybox ash, dash and bash with coreutils-level tools only. Run it as root
# on the machine under investigation. It never registers, enables, disables or clears a probe:
# it only reads. --root prefixes every absolute path it reads (tests use a fake tree).
#
# Bundle layout (one directory per snapshot, files named after their source):
#   DIR/PHASE/manifest            key=value: format, phase, time_utc, epoch_s, uptime_s, release,
#                                 events, symbol, tracefs, debugfs, totals of filtered files
#   DIR/PHASE/missing             one line per source that could not be read: NAME<TAB>PATH<TAB>why
#   DIR/PHASE/uname_r             /proc/sys/kernel/osrelease (what `uname -r` prints)
#   DIR/PHASE/uname_m             /proc/sys/kernel/arch, or `uname -m` on the live system
#   DIR/PHASE/proc_version        /proc/version
#   DIR/PHASE/cpu_possible        /sys/devices/system/cpu/possible
#   DIR/PHASE/config              CONFIG_ lines that matter, from /proc/config.gz or /boot/config-RELEASE
#   DIR/PHASE/kprobe_events       tracefs kprobe_events
#   DIR/PHASE/kprobe_profile      tracefs kprobe_profile
#   DIR/PHASE/error_log           tracefs error_log
#   DIR/PHASE/trace               the last --trace-lines lines of tracefs trace (default 5000)
#   DIR/PHASE/buffer_stats        tracefs per_cpu/cpuN/stats, each after a `CPU: N` line
#   DIR/PHASE/tracing_on          tracefs tracing_on
#   DIR/PHASE/events/GRP/EVENT/enable   tracefs events/GRP/EVENT/enable, per --event
#   DIR/PHASE/kprobes_list        debugfs kprobes/list
#   DIR/PHASE/kprobes_enabled     debugfs kprobes/enabled
#   DIR/PHASE/kprobes_blacklist   debugfs kprobes/blacklist lines of SYM and its clones
#   DIR/PHASE/kallsyms            /proc/kallsyms lines of SYM, its clones and __pfx_ padding
#   DIR/PHASE/module_counters     with --module-dir D: D/counters, a probe module's own counters
#                                 ("name value" lines, e.g. the lab module's nmissed, kp_nmissed)
# PHASE is `start` or `end`. A snapshot is written to a temporary directory and renamed into
# place, so a bundle never holds half a snapshot; an existing snapshot is never overwritten.
# One run at a time per DIR (DIR/.collect.lock names the holder's pid; a second run exits 2).

COLLECTOR_VERSION=1

usage() {
  cat <<'USAGE'
usage: collect.sh snapshot start|end --event GRP/EVENT --symbol SYM --out DIR
                  [--event GRP/EVENT ...] [--root PREFIX] [--trace-lines N] [--kallsyms-lines N]
                  [--module-dir DEBUGFS_DIR]   (a probe module's counters; --event then optional)
Copies (read-only) tracefs, debugfs kprobes, kallsyms, cpu and kernel facts into DIR/start or DIR/end.
USAGE
}

die() {
  printf 'collect.sh: %s\n' "$1" >&2
  exit 2
}

is_number() {
  case $1 in
    '' | *[!0-9]*) return 1 ;;
    *) return 0 ;;
  esac
}

is_name() {
  # A name, never a path component: . and .. would lead the copies out of the snapshot.
  case $1 in
    '' | . | .. | *[!A-Za-z0-9_.-]*) return 1 ;;
    *) return 0 ;;
  esac
}

[ "$#" -ge 1 ] || { usage >&2; exit 2; }
case $1 in
  -h | --help | help) usage; exit 0 ;;
  version | --version) printf 'kretprobe-triage collector %s\n' "$COLLECTOR_VERSION"; exit 0 ;;
  snapshot) shift ;;
  *) usage >&2; die "unknown command: $1" ;;
esac

PHASE=${1-}
case $PHASE in
  start | end) shift ;;
  *) die "expected start or end after snapshot; got '${PHASE}'" ;;
esac

EVENTS=
SYMBOL=
OUT=
ROOT=
TRACE_LINES=5000
KALLSYMS_LINES=2000
MODULE_DIR=
while [ "$#" -gt 0 ]; do
  case $1 in
    --event)
      [ "$#" -ge 2 ] || die '--event needs GRP/EVENT'
      case $2 in
        */*) is_name "${2%%/*}" && is_name "${2#*/}" || die "expected --event GRP/EVENT; got '$2'" ;;
        *) die "expected --event GRP/EVENT; got '$2'" ;;
      esac
      EVENTS="${EVENTS:+$EVENTS }$2"
      shift 2 ;;
    --symbol)
      [ "$#" -ge 2 ] || die '--symbol needs a function name'
      case $2 in
        '' | *[!A-Za-z0-9_]*) die "expected --symbol NAME (letters, digits, _); got '$2'" ;;
      esac
      SYMBOL=$2
      shift 2 ;;
    --out)
      [ "$#" -ge 2 ] || die '--out needs a directory'
      OUT=$2
      shift 2 ;;
    --root)
      [ "$#" -ge 2 ] || die '--root needs a directory'
      ROOT=${2%/}
      shift 2 ;;
    --trace-lines)
      [ "$#" -ge 2 ] && is_number "$2" || die '--trace-lines needs a number'
      TRACE_LINES=$2
      shift 2 ;;
    --kallsyms-lines)
      [ "$#" -ge 2 ] && is_number "$2" || die '--kallsyms-lines needs a number'
      KALLSYMS_LINES=$2
      shift 2 ;;
    --module-dir)
      [ "$#" -ge 2 ] || die '--module-dir needs a directory'
      MODULE_DIR=${2%/}
      shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
[ -n "$EVENTS" ] || [ -n "$MODULE_DIR" ] || die 'missing --event GRP/EVENT'
[ -n "$SYMBOL" ] || die 'missing --symbol SYM'
[ -n "$OUT" ] || die 'missing --out DIR'

FINAL="$OUT/$PHASE"
[ -e "$FINAL" ] && die "$FINAL already exists: use a new --out, or remove it yourself"
mkdir -p "$OUT" || die "cannot create $OUT"
TMP="$OUT/.$PHASE.tmp.$$"
LOCK="$OUT/.collect.lock"
LOCKED=
JOB=
# A signal ends the run: stop the read in progress, remove the half-written snapshot, release
# the lock and exit non-zero (a trap that only cleaned up would let the script go on, recreate
# part of it and publish it). Every read of a source runs as a background job the shell waits
# for: `wait` returns at once on a trapped signal, where a foreground read blocked on a FIFO or
# a hung file would hold `kill PID` until the read ends. The traps are set before the temporary
# directory exists: a signal right after mkdir must not leave it behind.
cleanup() {
  [ -n "$JOB" ] && kill "$JOB" 2>/dev/null
  rm -rf "$TMP"
  [ -n "$LOCKED" ] && rm -f "$LOCK"
}
interrupted() {
  cleanup
  trap - EXIT
  printf 'collect.sh: interrupted; no snapshot written\n' >&2
  exit "$1"
}
trap cleanup EXIT
trap 'interrupted 129' HUP
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

# One run per bundle directory: the lock is a symbolic link whose target names the holder,
# created whole (ln fails if it exists). One left by a run killed with SIGKILL names a process
# that is gone and is taken over; so are the temporary directories such a run left.
holder_of() {
  h=$(readlink "$1" 2>/dev/null) || return 1
  h=${h#collect.sh-pid-}
  is_number "$h" || return 1
  printf '%s' "$h"
}
tries=0
until ln -s "collect.sh-pid-$$" "$LOCK" 2>/dev/null; do
  tries=$((tries + 1))
  held=$(holder_of "$LOCK") || held=
  if [ -n "$held" ] && ! kill -0 "$held" 2>/dev/null && [ "$tries" -le 3 ]; then
    # Renamed away first: of two runs that found it stale, one takes it.
    if mv "$LOCK" "$LOCK.stale.$$" 2>/dev/null; then
      again=$(holder_of "$LOCK.stale.$$") || again=
      # Another run took it over meanwhile: its lock goes back.
      [ "$again" = "$held" ] || ln -s "collect.sh-pid-$again" "$LOCK" 2>/dev/null
      rm -f "$LOCK.stale.$$"
    fi
    continue
  fi
  [ -n "$held" ] || held='unknown'
  die "$OUT is being written by another collect.sh run (pid $held); wait for it to end, or remove $LOCK if that process is gone"
done
LOCKED=1
# Under the lock: no other run is writing, so a temporary directory here is a killed run's.
for d in "$OUT"/.start.tmp.* "$OUT"/.end.tmp.*; do
  [ -d "$d" ] && rm -rf "$d"
done
[ -e "$FINAL" ] && die "$FINAL already exists: use a new --out, or remove it yourself"
mkdir "$TMP" || die "cannot create $TMP"

MISSING="$TMP/missing"
: > "$MISSING"

note_missing() {
  # $1 bundle name, $2 path as on the target, $3 why
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$MISSING"
}

# read_to SRC DST [CMD ARGS...]: run CMD (default cat) on SRC into DST as a background job and
# wait for it (see the traps above); its status is the command's.
read_to() {
  src=$1
  dst=$2
  shift 2
  [ "$#" -gt 0 ] || set -- cat
  "$@" "$src" > "$dst" 2>/dev/null &
  JOB=$!
  wait "$JOB"
  st=$?
  JOB=
  return "$st"
}

# copy NAME PATH: the whole file.
copy() {
  if [ ! -e "$ROOT$2" ]; then
    note_missing "$1" "$2" 'absent'
  elif read_to "$ROOT$2" "$TMP/$1"; then
    :
  else
    rm -f "$TMP/$1"
    note_missing "$1" "$2" 'unreadable'
  fi
}

# Real symbol names are [A-Za-z0-9_] (checked above), so SYMBOL is safe inside a regex.
# A family member is SYM itself, SYM.<suffix> (clones, .cold) and __pfx_ padding of either.
FAMILY_KALLSYMS="^[0-9a-fA-F]+ [A-Za-z] (__pfx_)?$SYMBOL(\.[A-Za-z0-9_.]+)?([[:space:]]|\$)"
FAMILY_BLACKLIST="[[:space:]]$SYMBOL(\.[A-Za-z0-9_.]+)?([[:space:]]|\$)"

# filtered NAME PATH REGEX MAX: lines matching REGEX, at most MAX; the source's line count goes to the manifest.
filtered() {
  if [ ! -e "$ROOT$2" ]; then
    note_missing "$1" "$2" 'absent'
    return
  fi
  if ! read_to "$ROOT$2" "$TMP/.raw" cat; then
    rm -f "$TMP/.raw"
    note_missing "$1" "$2" 'unreadable'
    return
  fi
  total=$(wc -l < "$TMP/.raw" | tr -d ' ')
  grep -E "$3" "$TMP/.raw" | head -n "$4" > "$TMP/$1"
  rm -f "$TMP/.raw"
  printf '%s_total=%s\n' "$1" "$total" >> "$TMP/manifest.extra"
}

# Kernel identity. /proc/sys/kernel/osrelease is what `uname -r` prints and honours --root.
if [ -e "$ROOT/proc/sys/kernel/osrelease" ]; then
  copy uname_r /proc/sys/kernel/osrelease
elif [ -z "$ROOT" ]; then
  uname -r > "$TMP/uname_r" 2>/dev/null || { rm -f "$TMP/uname_r"; note_missing uname_r 'uname -r' 'failed'; }
else
  note_missing uname_r /proc/sys/kernel/osrelease 'absent'
fi
if [ -e "$ROOT/proc/sys/kernel/arch" ]; then
  copy uname_m /proc/sys/kernel/arch
elif [ -z "$ROOT" ]; then
  uname -m > "$TMP/uname_m" 2>/dev/null || { rm -f "$TMP/uname_m"; note_missing uname_m 'uname -m' 'failed'; }
else
  note_missing uname_m /proc/sys/kernel/arch 'absent'
fi
RELEASE=
[ -s "$TMP/uname_r" ] && RELEASE=$(head -n 1 "$TMP/uname_r")
copy proc_version /proc/version
copy cpu_possible /sys/devices/system/cpu/possible

# Kernel config, only the lines that decide what kprobes can do.
CONFIG_RE='^(# )?CONFIG_(KPROBES|KRETPROBES|KPROBE_EVENTS|KRETPROBE_ON_RETHOOK|FPROBE|KPROBES_ON_FTRACE|OPTPROBES|HAVE_KRETPROBES|HAVE_RETHOOK|RETHOOK|KPROBE_EVENTS_ON_NOTRACE|FUNCTION_TRACER|DYNAMIC_FTRACE|BPF_EVENTS|PREEMPT|PREEMPT_DYNAMIC|PREEMPT_RT|PREEMPT_NONE|PREEMPT_VOLUNTARY|SMP|NR_CPUS)[= ]'
if [ -e "$ROOT/proc/config.gz" ]; then
  if read_to "$ROOT/proc/config.gz" "$TMP/.raw" gzip -dc && grep -E "$CONFIG_RE" "$TMP/.raw" > "$TMP/config"; then
    rm -f "$TMP/.raw"
    printf 'config_source=/proc/config.gz\n' >> "$TMP/manifest.extra"
  else
    rm -f "$TMP/config" "$TMP/.raw"
    note_missing config /proc/config.gz 'unreadable'
  fi
elif [ -n "$RELEASE" ] && [ -e "$ROOT/boot/config-$RELEASE" ]; then
  if read_to "$ROOT/boot/config-$RELEASE" "$TMP/.raw" && grep -E "$CONFIG_RE" "$TMP/.raw" > "$TMP/config"; then
    rm -f "$TMP/.raw"
    printf 'config_source=/boot/config-%s\n' "$RELEASE" >> "$TMP/manifest.extra"
  else
    rm -f "$TMP/config" "$TMP/.raw"
    note_missing config "/boot/config-$RELEASE" 'unreadable'
  fi
else
  note_missing config "/proc/config.gz /boot/config-${RELEASE:-RELEASE}" 'absent'
fi

# tracefs: the mount point since 4.1, or the legacy path under debugfs.
TRACEFS=
for dir in /sys/kernel/tracing /sys/kernel/debug/tracing; do
  if [ -e "$ROOT$dir/kprobe_events" ]; then
    TRACEFS=$dir
    break
  fi
done
if [ -n "$TRACEFS" ]; then
  copy kprobe_events "$TRACEFS/kprobe_events"
  copy kprobe_profile "$TRACEFS/kprobe_profile"
  copy error_log "$TRACEFS/error_log"
  copy tracing_on "$TRACEFS/tracing_on"
  if [ -e "$ROOT$TRACEFS/trace" ]; then
    # Reading `trace` does not consume the buffer (trace_pipe would).
    if read_to "$ROOT$TRACEFS/trace" "$TMP/trace" tail -n "$TRACE_LINES"; then
      :
    else
      rm -f "$TMP/trace"
      note_missing trace "$TRACEFS/trace" 'unreadable'
    fi
  else
    note_missing trace "$TRACEFS/trace" 'absent'
  fi
  # The ring buffer's own per-CPU counts, read after the trace: what it overwrote or dropped since
  # it was cleared, which no tail of the trace can show. `CPU: N` before each file, as trace-cmd
  # prints them.
  found=
  for f in "$ROOT$TRACEFS"/per_cpu/cpu*/stats; do
    [ -e "$f" ] || continue
    found=1
    n=${f%/stats}
    n=${n##*/cpu}
    if read_to "$f" "$TMP/.stats"; then
      { printf 'CPU: %s\n' "$n"; cat "$TMP/.stats"; } >> "$TMP/buffer_stats"
    else
      note_missing buffer_stats "$TRACEFS/per_cpu/cpu$n/stats" 'unreadable'
    fi
    rm -f "$TMP/.stats"
  done
  [ -n "$found" ] || note_missing buffer_stats "$TRACEFS/per_cpu/cpu*/stats" 'absent'
  for ev in $EVENTS; do
    mkdir -p "$TMP/events/$ev"
    copy "events/$ev/enable" "$TRACEFS/events/$ev/enable"
    # Relative, so removing empty parents stops inside the snapshot.
    [ -e "$TMP/events/$ev/enable" ] || (cd "$TMP" && rmdir -p "events/$ev" 2>/dev/null)
  done
else
  note_missing tracefs '/sys/kernel/tracing /sys/kernel/debug/tracing' 'no kprobe_events (tracefs not mounted, or CONFIG_KPROBE_EVENTS off)'
fi

# debugfs kprobes.
DEBUGFS=
if [ -e "$ROOT/sys/kernel/debug/kprobes/list" ]; then
  DEBUGFS=/sys/kernel/debug
  copy kprobes_list /sys/kernel/debug/kprobes/list
  copy kprobes_enabled /sys/kernel/debug/kprobes/enabled
  filtered kprobes_blacklist /sys/kernel/debug/kprobes/blacklist "$FAMILY_BLACKLIST" 1000
else
  note_missing kprobes '/sys/kernel/debug/kprobes' 'absent (debugfs not mounted, or CONFIG_KPROBES off)'
fi

filtered kallsyms /proc/kallsyms "$FAMILY_KALLSYMS" "$KALLSYMS_LINES"

# A probe module's own counters (struct kretprobe nmissed, kp.nmissed, ...), when asked for.
if [ -n "$MODULE_DIR" ]; then
  copy module_counters "$MODULE_DIR/counters"
  printf 'module_dir=%s\n' "$MODULE_DIR" >> "$TMP/manifest.extra"
fi

# Time last-but-one: the manifest says when the copy finished, with a boot-relative stamp that
# does not jump with the wall clock.
UPTIME=
if [ -r "$ROOT/proc/uptime" ] && read_to "$ROOT/proc/uptime" "$TMP/.uptime"; then
  read -r UPTIME _rest < "$TMP/.uptime" || UPTIME=
fi
rm -f "$TMP/.uptime"
{
  printf 'format=kretprobe-bundle/v1\n'
  printf 'collector_version=%s\n' "$COLLECTOR_VERSION"
  printf 'phase=%s\n' "$PHASE"
  printf 'time_utc=%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  printf 'epoch_s=%s\n' "$(date +%s)"
  printf 'uptime_s=%s\n' "$UPTIME"
  printf 'release=%s\n' "$RELEASE"
  printf 'events=%s\n' "$EVENTS"
  printf 'symbol=%s\n' "$SYMBOL"
  printf 'tracefs=%s\n' "$TRACEFS"
  printf 'debugfs=%s\n' "$DEBUGFS"
  printf 'trace_lines=%s\n' "$TRACE_LINES"
  printf 'root=%s\n' "$ROOT"
  [ -f "$TMP/manifest.extra" ] && cat "$TMP/manifest.extra"
} > "$TMP/manifest"
rm -f "$TMP/manifest.extra"

# Still under the lock: nothing else has published this phase, so the rename lands as $FINAL,
# never inside it.
[ -e "$FINAL" ] && die "$FINAL already exists: use a new --out, or remove it yourself"
mv "$TMP" "$FINAL" || die "cannot move the snapshot into $FINAL"
rm -f "$LOCK"
trap - EXIT HUP INT TERM
printf 'collect.sh: %s snapshot in %s\n' "$PHASE" "$FINAL" >&2
exit 0
