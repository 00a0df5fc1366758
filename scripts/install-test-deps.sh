#!/bin/sh
# Installs the shells and tools the tests run against: busybox (ash) and dash for the collector
# tests, tmux for the lab's interactive tests. Idempotent: installs only what is missing and
# touches apt only then, so CI re-runs cost nothing once the machine has them.
set -eu

missing=""
need() {
  # $1: a command that must exist; $2: the Debian package that provides it.
  if ! command -v "$1" >/dev/null 2>&1; then
    missing="$missing $2"
  fi
}

need busybox busybox-static
need dash dash
need tmux tmux
need chromium chromium

if [ -z "$missing" ]; then
  echo "install-test-deps: nothing to install"
  exit 0
fi

if [ "$(id -u)" != 0 ]; then
  echo "install-test-deps: need root to install:$missing" >&2
  exit 1
fi

echo "install-test-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086  # word splitting of the package list is intended
apt-get install -y -q --no-install-recommends $missing
