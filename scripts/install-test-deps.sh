#!/bin/sh
# Installs the Debian tools the tests run against, saying each package and why.
#
# `.ci/run` runs it as its install step. `npm test` runs it too (the `pretest` script), so the
# README's test command works on a fresh machine with nothing done before it; there it changes
# the system only when it runs as root (a fresh container or CI image, where root is who runs
# the README's commands). It never escalates: without root it installs nothing, names what is
# missing and the command that installs it, and exits 0; the test run then fails in one test
# (test/deps.test.ts) with the same cause.
#
# KRETPROBE_TRIAGE_NO_INSTALL=1 (any non-empty value but 0) turns installing off even as root:
# the script only reports what is missing.
#
# Idempotent and quick: with everything present it only checks PATH; apt is touched only for
# what is missing, and `apt-get update` only when the package lists cannot supply it.
set -eu

missing=""
why=""
need() {
  # $1: a command that must exist; $2: the Debian package that provides it; $3: what needs it.
  # One `need` line per tool (test/support/tools.ts reads these lines too).
  if ! command -v "$1" >/dev/null 2>&1; then
    missing="$missing $2"
    why="$why
  $2 (for $1): $3"
  fi
}

need busybox busybox-static "the collector must run under busybox ash"
need dash dash "the collector must run under dash"
need tmux tmux "the triage test drives a real terminal"
need chromium chromium "the report's browser test measures its layout"
need xmllint libxml2-utils "the JUnit output is validated against a published XSD"

if [ -z "$missing" ]; then
  exit 0
fi

say() { echo "install-test-deps: $*" >&2; }
by_hand="run: sudo sh scripts/install-test-deps.sh"

if [ -n "${KRETPROBE_TRIAGE_NO_INSTALL:-}" ] && [ "${KRETPROBE_TRIAGE_NO_INSTALL}" != 0 ]; then
  say "missing:$missing; not installed (KRETPROBE_TRIAGE_NO_INSTALL is set; $by_hand)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  say "missing:$missing; not installed without root ($by_hand)"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "missing:$missing; no apt-get here, install these packages by hand"
  exit 0
fi

say "installing with apt-get (set KRETPROBE_TRIAGE_NO_INSTALL=1 to only report):$why"
export DEBIAN_FRONTEND=noninteractive
# apt's own output goes to stderr, in full: what it installs, from where, and why it fails.
# shellcheck disable=SC2086  # word splitting of the package list is intended
if ! apt-get install -y -q --no-install-recommends $missing >&2; then
  # The package lists are absent or stale (a fresh container): refresh them once and retry.
  say "refreshing the package lists (apt-get update) and trying once more"
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends $missing >&2
fi
say "installed:$missing"
