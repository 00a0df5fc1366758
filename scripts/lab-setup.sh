#!/bin/sh
# Set up the kernel lab (issues 6, 12, 22): QEMU, a static busybox, cpio and debootstrap from
# Debian's packages on the host; then, into a cache outside the repository, Debian kernels of four
# series (5.10 from bullseye, 6.1 from bookworm, 6.12 from bookworm-backports, and the newest of
# trixie-backports and sid), each one's headers, and the lab module (lab/module/) built against
# them with the compiler that kernel was built with: the host's GCC when it has that one and the
# kernel comes from the host's own suite, else inside a debootstrap build root of the kernel's
# suite (cached too). Then the arm64 guest: one kernel series, cross-built module
# (scripts/lab-setup-arm64.sh). Nothing from the kernel packages is installed: `apt-get download` +
# `dpkg -x` only. The host's apt configuration is never changed: the mirror is read from it, and
# every suite is reached through a temporary source list and private lists dirs.
# Package names are found with apt-cache at run time; no ABI number is written here.
#
# Usage: scripts/lab-setup.sh [--refresh]
#   --refresh  look the kernel packages up again even when the cache already has kernels
# Prints the time of each step; the lab reads "$CACHE/kernels.tsv"
# (series, release, vmlinuz, krtfix.ko, upstream version, suite, role, bpftrace tools root or -).
set -eu

T_START=$(date +%s)
say() { printf 'lab-setup: [%ss] %s\n' "$(( $(date +%s) - T_START ))" "$*"; }
die() { printf 'lab-setup: error: %s\n' "$*" >&2; exit 1; }

REFRESH=0
for arg in "$@"; do
  case "$arg" in
    --refresh) REFRESH=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) die "unknown argument '$arg' (expected --refresh)" ;;
  esac
done

CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/kretprobe-triage/lab"
mkdir -p "$CACHE"

SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || die "not root and no sudo: cannot install qemu-system-x86 busybox-static cpio debootstrap"
  SUDO="sudo"
fi

# --- host tools -------------------------------------------------------------------------------
missing=""
command -v qemu-system-x86_64 >/dev/null 2>&1 || missing="$missing qemu-system-x86"
# The initramfs needs a statically linked busybox: the dynamic one would need its libraries.
[ -x /bin/busybox ] && dpkg -s busybox-static >/dev/null 2>&1 || missing="$missing busybox-static"
command -v cpio >/dev/null 2>&1 || missing="$missing cpio"
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing="$missing debootstrap"
command -v make >/dev/null 2>&1 || missing="$missing make"
install_host() { # " PKG..." from the machine's own Debian sources
  say "installing:$1"
  # A machine whose package lists were never fetched finds nothing: update first when empty.
  if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then
    $SUDO apt-get update -qq || die "apt-get update failed"
  fi
  # shellcheck disable=SC2086
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $1 >/dev/null; then
    $SUDO apt-get update -qq || die "apt-get update failed"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $1 >/dev/null \
      || die "cannot install$1 from the machine's Debian sources"
  fi
}
if [ -n "$missing" ]; then
  install_host "$missing"
else
  say "host tools present: qemu-system-x86_64, busybox (static), cpio, debootstrap, make"
fi

# --- kernels, headers, module builds ------------------------------------------------------------
MANIFEST="$CACHE/kernels.tsv"
HERE=$(cd "$(dirname "$0")/.." && pwd)
MODSRC="$HERE/lab/module"
[ -f "$MODSRC/krtfix.c" ] || die "missing $MODSRC/krtfix.c (the lab module's source)"
# The module build is cached per kernel release and per source: a changed krtfix.c rebuilds.
MODHASH=$(cat "$MODSRC/krtfix.c" "$MODSRC/Kbuild" | sha256sum | cut -c1-16)
SERIES_WANTED="5.10 6.1 6.12 newest"

manifest_ok() {
  [ -s "$MANIFEST" ] || return 1
  for series in $SERIES_WANTED; do
    if [ "$series" = newest ]; then
      line=$(awk -F '\t' '$7 == "newest"' "$MANIFEST")
    else
      line=$(awk -F '\t' -v s="$series" '$1 == s' "$MANIFEST")
    fi
    [ -n "$line" ] || return 1
    img=$(printf '%s\n' "$line" | cut -f3)
    ko=$(printf '%s\n' "$line" | cut -f4)
    [ -s "$img" ] || return 1
    [ -s "$ko" ] || return 1
    case "$ko" in */"$MODHASH"/krtfix.ko) ;; *) return 1 ;; esac
    # bpftrace and bpftool for the guest, on every series but 5.10 (issue 22).
    if [ "$series" != 5.10 ]; then
      tools=$(printf '%s\n' "$line" | cut -f8)
      [ -n "$tools" ] && [ -f "$tools/.krt-ready" ] || return 1
    fi
  done
  return 0
}

# The arm64 guest (issue 22): its own manifest under $CACHE/arm64 (lab-setup-arm64.sh).
. "$HERE/scripts/lab-setup-arm64.sh"

AMD64_OK=0
if [ "$REFRESH" = 0 ] && manifest_ok; then
  AMD64_OK=1
  say "kernels and module builds already cached (use --refresh to look for newer packages):"
  sed 's/^/  /' "$MANIFEST"
  if arm64_ok; then
    say "arm64 kernel and module build already cached:"
    sed 's/^/  /' "$ARM64_MANIFEST"
    exit 0
  fi
fi

# The mirror of the machine's own Debian source (deb822 first, then a one-line sources.list).
HOST_SUITE=$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")
[ -n "$HOST_SUITE" ] || die "cannot read VERSION_CODENAME from /etc/os-release (a Debian host is needed)"
MIRROR=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  MIRROR=$(awk -v want="$HOST_SUITE" '
    function ok() { return uri != "" && suites ~ ("(^|[[:space:]])" want "([[:space:]]|$)") }
    /^[[:space:]]*$/ { if (ok()) { print uri; exit } uri=""; suites=""; next }
    /^URIs:/ { uri=$2 }
    /^Suites:/ { $1=""; suites=$0 }
    END { if (ok()) print uri }
  ' "$f" | head -n1)
  [ -n "$MIRROR" ] && break
done
if [ -z "$MIRROR" ] && [ -f /etc/apt/sources.list ]; then
  MIRROR=$(awk -v want="$HOST_SUITE" '$1 == "deb" && $0 ~ (" " want " ") { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list | head -n1)
fi
[ -n "$MIRROR" ] || die "no Debian $HOST_SUITE mirror found in /etc/apt/sources.list.d/*.sources (URIs: line) or /etc/apt/sources.list"
say "mirror from the machine's apt config: $MIRROR (host suite $HOST_SUITE)"

KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$KEYRING" ] || die "missing $KEYRING (package debian-archive-keyring)"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM

# One private lists dir per suite, so a name found in a suite is downloaded from that suite.
suite_opts() { # SUITE -> $APT_OPTS for that suite alone
  mkdir -p "$CACHE/apt-lists/$1/partial" "$CACHE/apt-cache/$1/archives/partial"
  printf 'deb [signed-by=%s] %s %s main\n' "$KEYRING" "$MIRROR" "$1" > "$WORK/$1.list"
  # Private lists and a private binary cache per suite (each apt-cache call would otherwise
  # parse the whole Packages file again); the host's own apt state stays as it was.
  APT_OPTS="-o Dir::Etc::SourceList=$WORK/$1.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$CACHE/apt-lists/$1 -o Dir::Cache=$CACHE/apt-cache/$1 -o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin -o APT::Sandbox::User=root"
}
update_suite() {
  suite_opts "$1"
  # shellcheck disable=SC2086
  apt-get $APT_OPTS update -qq >"$WORK/update.log" 2>&1 || { cat "$WORK/update.log" >&2; die "apt-get update of the temporary $1 source failed"; }
}
if [ "$AMD64_OK" = 0 ]; then
  for suite in bullseye "$HOST_SUITE" bookworm-backports trixie trixie-backports sid; do
    say "package lists of $suite (temporary source list)"
    update_suite "$suite"
  done
fi

newest() { # SUITE REGEX -> newest package name matching, by Debian version order of the name
  suite_opts "$1"
  # shellcheck disable=SC2086
  apt-cache $APT_OPTS search --names-only "$2" | cut -d' ' -f1 | grep -E "$2" | sort -V | tail -n1
}
field() { # SUITE PKG FIELD
  suite_opts "$1"
  # shellcheck disable=SC2086
  apt-cache $APT_OPTS show "$2" 2>/dev/null | awk -v f="$3:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }'
}
deps() { # SUITE PKG -> first alternative of each Depends, names only
  field "$1" "$2" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$'
}
download() { # SUITE DIR PKG...
  suite=$1 dir=$2
  shift 2
  suite_opts "$suite"
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  (cd "$dir" && apt-get $APT_OPTS download -qq "$@" >/dev/null 2>"$WORK/dl.log") \
    || { cat "$WORK/dl.log" >&2; die "apt-get download $* from $suite failed"; }
}

# A kernel: its image and config into $CACHE/kernels/PKG/boot/{vmlinuz,config}-RELEASE, whether
# the package holds them itself (linux-image-*-unsigned) or through linux-binary-*/linux-base-*.
fetch_kernel() { # SUITE PKG -> $RELEASE $IMG
  suite=$1 pkg=$2
  dest="$CACHE/kernels/$pkg"
  if ! ls "$dest"/boot/vmlinuz-* >/dev/null 2>&1; then
    say "downloading $pkg ($suite)"
    rm -rf "$WORK/k" && mkdir -p "$WORK/k/x"
    extra=$(deps "$suite" "$pkg" | grep -E '^linux-(binary|base)-' || true)
    # shellcheck disable=SC2086
    download "$suite" "$WORK/k" "$pkg" $extra
    for deb in "$WORK/k"/*.deb; do dpkg -x "$deb" "$WORK/k/x" || die "dpkg -x $deb failed"; done
    img=$(ls "$WORK/k/x"/boot/vmlinuz-* "$WORK/k/x"/usr/lib/modules/*/vmlinuz 2>/dev/null | head -n1)
    [ -n "$img" ] || die "no vmlinuz in $pkg (or its linux-binary/linux-base packages)"
    case "$img" in
      */boot/vmlinuz-*) rel=${img##*/vmlinuz-}; cfg="$WORK/k/x/boot/config-$rel" ;;
      *) rel=$(basename "$(dirname "$img")"); cfg="$(dirname "$img")/config" ;;
    esac
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp/boot"
    # Only the image and its config are used; the guest needs none of the kernel's modules.
    cp "$img" "$dest.tmp/boot/vmlinuz-$rel"
    [ -f "$cfg" ] && cp "$cfg" "$dest.tmp/boot/config-$rel"
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
  else
    say "$pkg already unpacked"
  fi
  IMG=$(ls "$dest"/boot/vmlinuz-* | head -n1)
  [ -s "$IMG" ] || die "no /boot/vmlinuz-* in $pkg"
  RELEASE=${IMG##*/vmlinuz-}
}

# The GCC major a kernel was built with, from its headers package's Depends
# (gcc-N, gcc-N-for-host or linux-compiler-gcc-N-x86).
gcc_of() { # SUITE HEADERS_PKG
  deps "$1" "$2" | sed -n 's/^gcc-\([0-9][0-9]*\)\(-for-host\)\{0,1\}$/\1/p; s/^linux-compiler-gcc-\([0-9][0-9]*\)-x86$/\1/p' | head -n1
}

# A debootstrap build root of SUITE with gcc-N and the kbuild tools' libraries, cached.
buildroot() { # BASE_SUITE GCC KBUILD_PKG KBUILD_SUITE -> $BR
  base=$1 gcc=$2
  BR="$CACHE/buildroot/$base-gcc$gcc"
  if [ -f "$BR/.krt-ready" ]; then
    say "build root $base (gcc-$gcc) already made"
    return
  fi
  # debootstrap, chroot and mount need root; the project's CI runs as root (install-test-deps.sh).
  [ "$(id -u)" = 0 ] || die "a $base build root (gcc-$gcc for this kernel) needs root for debootstrap, chroot and mount: run the set-up as root"
  libs=$(deps "$4" "$3" | grep -v -E '^(libc6|linux-)' | tr '\n' ',' | sed 's/,$//')
  say "making a build root of $base with gcc-$gcc (debootstrap --variant=minbase; extra: ${libs:-none})"
  rm -rf "$BR.tmp"
  mkdir -p "$CACHE/buildroot"
  if ! debootstrap --variant=minbase --include="gcc-$gcc,make,libc6-dev${libs:+,$libs}" "$base" "$BR.tmp" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
    tail -n 20 "$WORK/debootstrap.log" >&2
    die "debootstrap of a $base build root with gcc-$gcc failed (log above)"
  fi
  touch "$BR.tmp/.krt-ready"
  rm -rf "$BR" && mv "$BR.tmp" "$BR"
}

# Headers + kbuild of RELEASE unpacked under ROOT (the real paths, /usr/src/linux-headers-*).
unpack_headers() { # SUITE RELEASE ROOT
  hdr="linux-headers-$2"
  common=$(deps "$1" "$hdr" | grep -E '^linux-(headers-.*-common|kbuild-|base-)' | tr '\n' ' ')
  [ -n "$common" ] || die "cannot read the Depends of $hdr in $1"
  rm -rf "$WORK/h" && mkdir -p "$WORK/h"
  # shellcheck disable=SC2086
  download "$1" "$WORK/h" "$hdr" $common
  # Only usr/: the packages also hold /lib/modules/RELEASE/build, and unpacking that over a
  # merged-/usr build root would turn its /lib symlink into a directory.
  rm -rf "$WORK/hx" && mkdir -p "$WORK/hx" "$3/usr"
  for deb in "$WORK/h"/*.deb; do dpkg -x "$deb" "$WORK/hx" || die "dpkg -x $deb failed"; done
  cp -a "$WORK/hx/usr/." "$3/usr/"
  [ -f "$3/usr/src/$hdr/Makefile" ] || die "$hdr has no /usr/src/$hdr/Makefile"
}

# No BTF for the module: it would need pahole and the kernel's vmlinux, and the lab reads no BTF.
NO_BTF="CONFIG_DEBUG_INFO_BTF_MODULES="

build_module() { # SERIES SUITE BASE_SUITE RELEASE -> $KO
  series=$1 suite=$2 base=$3 rel=$4
  out="$CACHE/modules/$rel/$MODHASH"
  KO="$out/krtfix.ko"
  if [ -s "$KO" ]; then
    say "module for $rel already built ($KO)"
    return
  fi
  hdr="linux-headers-$rel"
  [ -n "$(field "$suite" "$hdr" Package)" ] || die "no package $hdr in $suite: the kernel's headers cannot be had"
  gcc=$(gcc_of "$suite" "$hdr")
  [ -n "$gcc" ] || die "cannot tell which GCC built $rel (no gcc-N in the Depends of $hdr)"
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  t0=$(date +%s)
  if [ "$base" = "$HOST_SUITE" ] && command -v "gcc-$gcc" >/dev/null 2>&1; then
    # The host's own suite and compiler: headers under the cache, their absolute include rewritten.
    root="$CACHE/headers/$rel"
    if [ ! -f "$root/usr/src/$hdr/Makefile" ]; then
      rm -rf "$root" && mkdir -p "$root"
      unpack_headers "$suite" "$rel" "$root"
      sed -i "s|^include /usr/src/|include $root/usr/src/|" "$root/usr/src/$hdr/Makefile"
    fi
    cp "$MODSRC/krtfix.c" "$MODSRC/Kbuild" "$out.tmp/"
    say "building krtfix.ko for $rel with the host's gcc-$gcc"
    make -C "$root/usr/src/$hdr" M="$out.tmp" $NO_BTF modules >"$out.tmp/build.log" 2>&1 \
      || { tail -n 20 "$out.tmp/build.log" >&2; die "building the lab module for $rel failed (log above)"; }
  else
    kb=$(deps "$suite" "$hdr" | grep -E '^linux-kbuild-' | head -n1)
    buildroot "$base" "$gcc" "$kb" "$suite"
    if [ ! -f "$BR/usr/src/$hdr/Makefile" ]; then
      unpack_headers "$suite" "$rel" "$BR"
    fi
    rm -rf "$BR/build/$rel" && mkdir -p "$BR/build/$rel"
    cp "$MODSRC/krtfix.c" "$MODSRC/Kbuild" "$BR/build/$rel/"
    say "building krtfix.ko for $rel with gcc-$gcc in the $base build root"
    # objtool reads /proc/self: a private proc mount for the length of the build.
    mount -t proc proc "$BR/proc" || die "cannot mount proc in the $base build root"
    rc=0
    chroot "$BR" /usr/bin/make -C "/usr/src/$hdr" M="/build/$rel" $NO_BTF modules >"$out.tmp/build.log" 2>&1 || rc=$?
    umount "$BR/proc" || die "cannot unmount $BR/proc"
    [ "$rc" = 0 ] || { tail -n 20 "$out.tmp/build.log" >&2; die "building the lab module for $rel in the $base build root failed (log above)"; }
    cp "$BR/build/$rel/krtfix.ko" "$out.tmp/"
  fi
  [ -s "$out.tmp/krtfix.ko" ] || die "the build for $rel made no krtfix.ko"
  rm -rf "$out" && mv "$out.tmp" "$out"
  say "module for $rel built in $(( $(date +%s) - t0 )) s"
}

# bpftrace and bpftool for the guest's initramfs (issue 22): Debian's bpftrace of the kernel's
# base suite and the bpftool of the kernel's own suite (built from that kernel's source), with
# every shared library they load, resolved by the suite's own dynamic loader. Cached per pair.
closure_download() { # SUITE DIR PKG...: PKG and its whole Depends closure, as apt resolves it for an empty system
  suite=$1 dir=$2
  shift 2
  suite_opts "$suite"
  mkdir -p "$dir/archives/partial" "$WORK/status"
  : > "$WORK/status/empty"
  # shellcheck disable=SC2086
  apt-get $APT_OPTS -o Dir::State::status="$WORK/status/empty" -o Dir::Cache::Archives="$dir/archives" -o Debug::NoLocking=1 \
    install -d -y -qq --no-install-recommends "$@" >"$WORK/dl.log" 2>&1 \
    || { tail -n 20 "$WORK/dl.log" >&2; die "cannot download $* and its dependencies from $suite"; }
}

fetch_tools() { # BPFTRACE_SUITE BPFTOOL_SUITE -> $TOOLS (a root: usr/bin/bpftrace, usr/sbin/bpftool, their libraries)
  bts=$1 tos=$2
  TOOLS="$CACHE/tools/$bts+$tos"
  if [ -f "$TOOLS/.krt-ready" ]; then
    say "bpftrace ($bts) and bpftool ($tos) already extracted"
    return
  fi
  t0=$(date +%s)
  say "downloading bpftrace and its libraries ($bts), bpftool ($tos)"
  d="$WORK/tools" && rm -rf "$d" && mkdir -p "$d/x"
  closure_download "$bts" "$d" bpftrace bpftool
  if [ "$tos" != "$bts" ]; then
    # The kernel's own suite's bpftool over the base suite's (its libraries are the base suite's).
    rm -f "$d"/archives/bpftool_*.deb
    download "$tos" "$d/archives" bpftool
  fi
  for deb in "$d"/archives/*.deb; do dpkg -x "$deb" "$d/x" || die "dpkg -x $deb failed"; done
  x="$d/x"
  ldso=$(ls "$x"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$x"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 2>/dev/null | head -n1)
  [ -n "$ldso" ] || die "no ld-linux-x86-64.so.2 in the libc6 of $bts"
  rm -rf "$TOOLS.tmp" && mkdir -p "$TOOLS.tmp/lib64" "$TOOLS.tmp/lib/x86_64-linux-gnu" "$TOOLS.tmp/usr/bin" "$TOOLS.tmp/usr/sbin"
  for bin in usr/bin/bpftrace usr/sbin/bpftool; do
    [ -x "$x/$bin" ] || die "no /$bin in the packages of $bts/$tos"
    "$ldso" --library-path "$x/usr/lib/x86_64-linux-gnu:$x/lib/x86_64-linux-gnu" --list "$x/$bin" >"$WORK/ldd.txt" 2>&1 \
      || { cat "$WORK/ldd.txt" >&2; die "the $bts loader cannot resolve /$bin"; }
    if grep -q 'not found' "$WORK/ldd.txt"; then grep 'not found' "$WORK/ldd.txt" >&2; die "/$bin needs a library its packages do not hold"; fi
    awk '$2 == "=>" && $1 !~ /^\// && $3 ~ /^\// { print $1, $3 }' "$WORK/ldd.txt" | while read -r soname lib; do
      cp -L "$lib" "$TOOLS.tmp/lib/x86_64-linux-gnu/$soname"
    done
    cp -L "$x/$bin" "$TOOLS.tmp/$bin"
  done
  cp -L "$ldso" "$TOOLS.tmp/lib64/ld-linux-x86-64.so.2"
  for pkg in bpftrace bpftool; do
    v=$(dpkg-deb -f "$(ls "$d"/archives/${pkg}_*.deb | head -n1)" Version)
    printf '%s\t%s\n' "$pkg" "$v" >>"$TOOLS.tmp/versions.tsv"
  done
  touch "$TOOLS.tmp/.krt-ready"
  rm -rf "$TOOLS" && mv "$TOOLS.tmp" "$TOOLS"
  say "bpftrace tools for the guest: $(du -sm "$TOOLS" | cut -f1) MB in $TOOLS ($(( $(date +%s) - t0 )) s)"
}

upstream() { # Debian version 6.12.95-1~bpo12+1 -> 6.12.95
  printf '%s\n' "$1" | sed 's/-[^-]*$//; s/+.*//; s/~.*//'
}

: >"$WORK/kernels.tsv"
kernel_series() { # SERIES SUITE BASE_SUITE IMAGE_PKG ROLE
  series=$1 suite=$2 base=$3 pkg=$4 role=$5
  t0=$(date +%s)
  fetch_kernel "$suite" "$pkg"
  build_module "$series" "$suite" "$base" "$RELEASE"
  ver=$(upstream "$(field "$suite" "$pkg" Version)")
  TOOLS=-
  [ "$series" = 5.10 ] || fetch_tools "$base" "$suite"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$series" "$RELEASE" "$IMG" "$KO" "$ver" "$suite" "$role" "$TOOLS" >>"$WORK/kernels.tsv"
  say "kernel $series: $RELEASE ($ver, $suite) -> $IMG; module $KO ($(( $(date +%s) - t0 )) s)"
}

pick() { # SERIES SUITE REGEX
  pkg=$(newest "$2" "$3")
  [ -n "$pkg" ] || die "no package matching $3 in the mirror's $2 list: kernel $1 cannot be had"
  PKG=$pkg
}

if [ "$AMD64_OK" = 0 ]; then
  pick 5.10 bullseye '^linux-image-5\.10\.[0-9]+-[0-9]+-amd64-unsigned$'
  kernel_series 5.10 bullseye bullseye "$PKG" series
  pick 6.1 "$HOST_SUITE" '^linux-image-6\.1\.[0-9]+-[0-9]+-amd64-unsigned$'
  kernel_series 6.1 "$HOST_SUITE" "$HOST_SUITE" "$PKG" series
  pick 6.12 bookworm-backports '^linux-image-6\.12\.[0-9]+[^-]*-amd64-unsigned$'
  kernel_series 6.12 bookworm-backports bookworm "$PKG" series
  # The newest series Debian carries: trixie-backports or sid, whichever has the higher version.
  NEWEST_RE='^linux-image-[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+-amd64(-unsigned)?$'
  best="" best_suite=""
  for suite in trixie-backports sid; do
    cand=$(newest "$suite" "$NEWEST_RE")
    [ -n "$cand" ] || continue
    if [ -z "$best" ] || [ "$(printf '%s\n%s\n' "$best" "$cand" | sort -V | tail -n1)" = "$cand" ]; then best=$cand best_suite=$suite; fi
  done
  [ -n "$best" ] || die "no kernel package matching $NEWEST_RE in trixie-backports or sid"
  case "$best_suite" in *-backports) base=${best_suite%-backports} ;; *) base=$best_suite ;; esac
  nseries=$(printf '%s\n' "$best" | sed 's/^linux-image-\([0-9]*\.[0-9]*\).*/\1/')
  kernel_series "$nseries" "$best_suite" "$base" "$best" newest
  mv "$WORK/kernels.tsv" "$MANIFEST"
  say "wrote $MANIFEST"
fi

arm64_setup
say "set-up took $(( $(date +%s) - T_START )) s"
