#!/bin/sh
# Installs the Debian tools the tests run against. `npm test` runs this first (the `pretest`
# script), so the README's test command works on a fresh machine with nothing done before it.
# Idempotent and quick: with everything present it only checks PATH; apt is touched only for
# what is missing, and `apt-get update` only when the package lists cannot supply it.
# Without root (and without passwordless sudo) it says what is missing and exits 0: the test
# run then fails in one test (test/deps.test.ts) with the same one-line cause.
set -eu

missing=""
need() {
  # $1: a command that must exist; $2: the Debian package that provides it.
  # One `need` line per tool (test/support/tools.ts reads these lines too).
  if ! command -v "$1" >/dev/null 2>&1; then
    missing="$missing $2"
  fi
}

# The collector must run under busybox ash and dash; the triage test drives a real terminal.
need busybox busybox-static
need dash dash
need tmux tmux
need chromium chromium

if [ -z "$missing" ]; then
  exit 0
fi

if [ "$(id -u)" = 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root="sudo -n"
else
  echo "install-test-deps: cannot install without root:$missing (run: sudo sh scripts/install-test-deps.sh)" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-deps: no apt-get here; install these packages by hand:$missing" >&2
  exit 0
fi

echo "install-test-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086  # word splitting of the package list is intended
if ! $as_root apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
  # The package lists are absent or stale (a fresh container): refresh them once and retry.
  $as_root apt-get update -q >/dev/null
  $as_root apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
