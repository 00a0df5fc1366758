#!/bin/sh
# Set up the kernel lab (issue 6): QEMU, a static busybox and cpio from Debian's packages, plus
# two Debian kernels (6.12 from bookworm-backports, 6.1 from bookworm) unpacked into a cache
# outside the repository. Nothing is installed from the kernel packages: `apt-get download` +
# `dpkg -x` only. The host's apt configuration is never changed: the mirror is read from it,
# and the backports suite is reached through a temporary source list and a private lists dir.
#
# Usage: scripts/lab-setup.sh [--refresh]
#   --refresh  look the kernel packages up again even when the cache already has kernels
# Prints where the kernels are; the lab reads "$CACHE/kernels.tsv" (series, release, vmlinuz).
set -eu

say() { printf 'lab-setup: %s\n' "$*"; }
die() { printf 'lab-setup: error: %s\n' "$*" >&2; exit 1; }

REFRESH=0
for arg in "$@"; do
  case "$arg" in
    --refresh) REFRESH=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) die "unknown argument '$arg' (expected --refresh)" ;;
  esac
done

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kretprobe-triage/lab"
mkdir -p "$CACHE"

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot install qemu-system-x86 busybox-static cpio"
  SUDO="sudo"
fi

# --- host tools -------------------------------------------------------------------------------
missing=""
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing="$missing qemu-system-x86"
# The initramfs needs a statically linked busybox: the dynamic one would need its libraries.
[ -x /bin/busybox ] && dpkg -s busybox-static >/dev/null 2>&1 || missing="$missing busybox-static"
command -v cpio >/dev/null 2>&1 || missing="$missing cpio"
if [ -n "$missing" ]; then
  say "installing:$missing"
  # A machine whose package lists were never fetched finds nothing: update first when empty.
  if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
    $SUDO apt-get update -qq || die "apt-get update failed"
  fi
  # shellcheck disable=SC2086
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
    $SUDO apt-get update -qq || die "apt-get update failed"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null \
      || die "cannot install$missing from the machine's Debian sources"
  fi
else
  say "host tools present: qemu-system-x86_64, busybox (static), cpio"
fi

# --- kernels ----------------------------------------------------------------------------------
MANIFEST="$CACHE/kernels.tsv"
manifest_ok() {
  [ -s "$MANIFEST" ] || return 1
  for series in 6.12 6.1; do
    line=$(awk -F '\t' -v s="$series" '$1 == s' "$MANIFEST")
    [ -n "$line" ] || return 1
    img=$(printf '%s\n' "$line" | cut -f3)
    [ -s "$img" ] || return 1
  done
  return 0
}

if [ "$REFRESH" = 0 ] && manifest_ok; then
  say "kernels already cached (use --refresh to look for newer packages):"
  sed 's/^/  /' "$MANIFEST"
  exit 0
fi

# The mirror of the machine's own Debian source (deb822 first, then a one-line sources.list).
MIRROR=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  MIRROR=$(awk '
    /^[[:space:]]*$/ { if (uri != "" && suites ~ /(^|[[:space:]])bookworm([[:space:]]|$)/) { print uri; exit } uri=""; suites=""; next }
    /^URIs:/ { uri=$2 }
    /^Suites:/ { $1=""; suites=$0 }
    END { if (uri != "" && suites ~ /(^|[[:space:]])bookworm([[:space:]]|$)/) print uri }
  ' "$f" | head -n1)
  [ -n "$MIRROR" ] && break
done
if [ -z "$MIRROR" ] && [ -f /etc/apt/sources.list ]; then
  MIRROR=$(awk '$1 == "deb" && $0 ~ / bookworm / { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list | head -n1)
fi
[ -n "$MIRROR" ] || die "no Debian bookworm mirror found in /etc/apt/sources.list.d/*.sources (URIs: line) or /etc/apt/sources.list"
say "mirror from the machine's apt config: $MIRROR"

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$KEYRING" ] || die "missing $KEYRING (package debian-archive-keyring)"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
LISTS="$CACHE/apt-lists"
mkdir -p "$LISTS/partial"
cat >"$WORK/sources.list" <<EOF
deb [signed-by=$KEYRING] $MIRROR bookworm main
deb [signed-by=$KEYRING] $MIRROR bookworm-backports main
EOF
# Private lists, no shared binary caches: the host's own apt state stays as it was.
APT_OPTS="-o Dir::Etc::SourceList=$WORK/sources.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$LISTS -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root"
say "fetching package lists for bookworm + bookworm-backports (temporary source list)"
# shellcheck disable=SC2086
apt-get $APT_OPTS update -qq >"$WORK/update.log" 2>&1 || { cat "$WORK/update.log" >&2; die "apt-get update of the temporary bookworm-backports source failed"; }

newest() { # newest package name matching a regex, by Debian version order of the name
  # shellcheck disable=SC2086
  apt-cache $APT_OPTS search --names-only "$1" | cut -d' ' -f1 | sort -V | tail -n1
}

: >"$WORK/kernels.tsv"
fetch_kernel() { # series regex
  series=$1
  pkg=$(newest "$2")
  [ -n "$pkg" ] || die "no package matching $2 in the mirror's bookworm/bookworm-backports lists"
  dest="$CACHE/kernels/$pkg"
  if ! ls "$dest"/boot/vmlinuz-* >/dev/null 2>&1; then
    say "downloading $pkg"
    mkdir -p "$CACHE/debs"
    # shellcheck disable=SC2086
    (cd "$CACHE/debs" && apt-get $APT_OPTS download -qq "$pkg" >/dev/null 2>"$WORK/dl.log") \
      || { cat "$WORK/dl.log" >&2; die "apt-get download $pkg failed"; }
    deb=$(ls -t "$CACHE/debs/${pkg}_"*.deb | head -n1)
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    dpkg -x "$deb" "$dest.tmp" || die "dpkg -x $deb failed"
    # Only the image and its config are used; the modules are not needed by the lab's guest.
    rm -rf "$dest.tmp/lib" "$dest.tmp/usr"
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
    rm -f "$deb"
  else
    say "$pkg already unpacked"
  fi
  img=$(ls "$dest"/boot/vmlinuz-* | head -n1)
  [ -s "$img" ] || die "no /boot/vmlinuz-* in $pkg"
  release=${img##*/vmlinuz-}
  printf '%s\t%s\t%s\n' "$series" "$release" "$img" >>"$WORK/kernels.tsv"
  say "kernel $series: $release -> $img"
}

fetch_kernel 6.12 '^linux-image-6\.12\.[^-]*-amd64-unsigned$'
fetch_kernel 6.1 '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$'
mv "$WORK/kernels.tsv" "$MANIFEST"
say "wrote $MANIFEST"
