# Sourced by scripts/lab-setup.sh (issue 22, item 5): the lab's second architecture. One Debian
# arm64 kernel series (6.1 from bookworm), its headers, and the lab module cross-built for it with
# the aarch64 cross compiler of the GCC the headers ask for (gcc-N-aarch64-linux-gnu, on the host)
# and the host-architecture kbuild tools (linux-kbuild-*, fixdep and modpost run on the host);
# busybox-static:arm64 for the guest's initramfs; qemu-system-arm (qemu-system-aarch64, -M virt
# -cpu max, TCG, -kernel direct boot: no firmware) on the host. Everything goes to $CACHE/arm64,
# apart from the amd64 files; its manifest is $CACHE/arm64/kernels.tsv (the amd64 columns, then
# arch and the guest's busybox). Uses say, die, install_host, $CACHE, $SUDO, $MODSRC and $MODHASH
# of lab-setup.sh; arm64_setup also $MIRROR, $KEYRING and $WORK.

ARM64="$CACHE/arm64"
ARM64_MANIFEST="$ARM64/kernels.tsv"
# The series and suite of the arm64 guest: the one the CI's time allows (lab/README.md, Time).
ARM64_SERIES=6.1
ARM64_SUITE=bookworm

arm64_ok() {
  [ -s "$ARM64_MANIFEST" ] || return 1
  line=$(awk -F '\t' -v s="$ARM64_SERIES-arm64" '$1 == s' "$ARM64_MANIFEST")
  [ -n "$line" ] || return 1
  for col in 3 4 10; do
    f=$(printf '%s\n' "$line" | cut -f$col)
    [ -s "$f" ] || return 1
  done
  case "$(printf '%s\n' "$line" | cut -f4)" in */"$MODHASH"/krtfix.ko) ;; *) return 1 ;; esac
  command -v qemu-system-aarch64 >/dev/null 2>&1 || return 1
  return 0
}

# The suite's lists for arm64 and the host's architecture together (the kbuild tools run on the
# host), private to $ARM64 like the amd64 ones.
arm64_opts() {
  mkdir -p "$ARM64/apt-lists/$ARM64_SUITE/partial" "$ARM64/apt-cache/$ARM64_SUITE/archives/partial"
  printf 'deb [signed-by=%s arch=arm64,%s] %s %s main\n' "$KEYRING" "$HOST_ARCH" "$MIRROR" "$ARM64_SUITE" > "$WORK/arm64.list"
  APT_OPTS="-o Dir::Etc::SourceList=$WORK/arm64.list -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$ARM64/apt-lists/$ARM64_SUITE -o Dir::Cache=$ARM64/apt-cache/$ARM64_SUITE -o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin -o APT::Sandbox::User=root -o APT::Architectures::=$HOST_ARCH -o APT::Architectures::=arm64"
}
arm64_field() { # PKG:ARCH FIELD
  # shellcheck disable=SC2086
  apt-cache $APT_OPTS show "$1" 2>/dev/null | awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }'
}
arm64_download() { # DIR PKG:ARCH...
  dir=$1
  shift
  mkdir -p "$dir"
  # shellcheck disable=SC2086
  (cd "$dir" && apt-get $APT_OPTS download -qq "$@" >/dev/null 2>"$WORK/dl.log") \
    || { cat "$WORK/dl.log" >&2; die "apt-get download $* from $ARM64_SUITE failed"; }
}

arm64_setup() {
  t0=$(date +%s)
  HOST_ARCH=$(dpkg --print-architecture)
  command -v qemu-system-aarch64 >/dev/null 2>&1 || install_host " qemu-system-arm"
  arm64_opts
  say "package lists of $ARM64_SUITE for arm64 and $HOST_ARCH (temporary source list)"
  # shellcheck disable=SC2086
  apt-get $APT_OPTS update -qq >"$WORK/update.log" 2>&1 || { cat "$WORK/update.log" >&2; die "apt-get update of the temporary $ARM64_SUITE arm64 source failed"; }
  re="^linux-image-$(printf '%s' "$ARM64_SERIES" | sed 's/\./\\./g')\\.[0-9]+-[0-9]+-arm64-unsigned\$"
  # shellcheck disable=SC2086
  pkg=$(apt-cache $APT_OPTS search --names-only "$re" | cut -d' ' -f1 | grep -E "$re" | sort -V | tail -n1)
  [ -n "$pkg" ] || die "no package matching $re in the mirror's $ARM64_SUITE arm64 list: the arm64 kernel cannot be had"
  rel=${pkg#linux-image-}
  rel=${rel%-unsigned}
  ver=$(arm64_field "$pkg:arm64" Version)
  kdir="$ARM64/kernels/$pkg/boot"
  if [ ! -s "$kdir/vmlinuz-$rel" ]; then
    say "downloading $pkg (arm64, $ARM64_SUITE)"
    rm -rf "$WORK/a" && mkdir -p "$WORK/a/x"
    arm64_download "$WORK/a" "$pkg:arm64"
    dpkg -x "$WORK/a"/*.deb "$WORK/a/x" || die "dpkg -x of $pkg failed"
    [ -s "$WORK/a/x/boot/vmlinuz-$rel" ] || die "no /boot/vmlinuz-$rel in $pkg"
    rm -rf "$kdir.tmp" && mkdir -p "$kdir.tmp"
    cp "$WORK/a/x/boot/vmlinuz-$rel" "$WORK/a/x/boot/config-$rel" "$kdir.tmp/"
    rm -rf "$kdir" && mv "$kdir.tmp" "$kdir"
  fi
  # The guest's busybox: the static one of the suite, for arm64.
  bb="$ARM64/busybox/bin/busybox"
  if [ ! -s "$bb" ]; then
    say "downloading busybox-static (arm64, $ARM64_SUITE)"
    rm -rf "$WORK/b" && mkdir -p "$WORK/b/x"
    arm64_download "$WORK/b" busybox-static:arm64
    dpkg -x "$WORK/b"/*.deb "$WORK/b/x" || die "dpkg -x of busybox-static:arm64 failed"
    [ -s "$WORK/b/x/bin/busybox" ] || die "no /bin/busybox in busybox-static:arm64"
    mkdir -p "$ARM64/busybox/bin" && cp "$WORK/b/x/bin/busybox" "$bb.tmp" && mv "$bb.tmp" "$bb"
  fi
  out="$ARM64/modules/$rel/$MODHASH"
  ko="$out/krtfix.ko"
  if [ ! -s "$ko" ]; then
    hdr="linux-headers-$rel"
    depends=$(arm64_field "$hdr:arm64" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/[[:space:]]//g' | grep -v '^$')
    [ -n "$depends" ] || die "no package $hdr in $ARM64_SUITE for arm64: the arm64 kernel's headers cannot be had"
    gcc=$(printf '%s\n' "$depends" | sed -n 's/^gcc-\([0-9][0-9]*\)$/\1/p' | head -n1)
    [ -n "$gcc" ] || die "cannot tell which GCC built $rel (no gcc-N in the Depends of $hdr)"
    cc="aarch64-linux-gnu-gcc-$gcc"
    command -v "$cc" >/dev/null 2>&1 || install_host " gcc-$gcc-aarch64-linux-gnu"
    root="$ARM64/headers/$rel"
    if [ ! -f "$root/usr/src/$hdr/Makefile" ]; then
      # The headers and their -common package for arm64; the kbuild tools for the host.
      # (-common is Architecture: all, so no :arch for it).
      common=$(printf '%s\n' "$depends" | grep -E '^linux-headers-.*-common$')
      kbuild=$(printf '%s\n' "$depends" | grep -E '^linux-kbuild-' | sed "s/\$/:$HOST_ARCH/")
      [ -n "$kbuild" ] || die "no linux-kbuild-* in the Depends of $hdr"
      rm -rf "$WORK/h" "$WORK/hx" && mkdir -p "$WORK/h" "$WORK/hx"
      # shellcheck disable=SC2086
      arm64_download "$WORK/h" "$hdr:arm64" $common $kbuild
      for deb in "$WORK/h"/*.deb; do dpkg -x "$deb" "$WORK/hx" || die "dpkg -x $deb failed"; done
      [ -f "$WORK/hx/usr/src/$hdr/Makefile" ] || die "$hdr has no /usr/src/$hdr/Makefile"
      rm -rf "$root" && mkdir -p "$root/usr"
      cp -a "$WORK/hx/usr/." "$root/usr/"
      sed -i "s|^include /usr/src/|include $root/usr/src/|" "$root/usr/src/$hdr/Makefile"
    fi
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    cp "$MODSRC/krtfix.c" "$MODSRC/Kbuild" "$out.tmp/"
    say "cross-building krtfix.ko for $rel with $cc"
    make -C "$root/usr/src/$hdr" M="$out.tmp" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC="$cc" $NO_BTF modules >"$out.tmp/build.log" 2>&1 \
      || { tail -n 20 "$out.tmp/build.log" >&2; die "cross-building the lab module for $rel failed (log above)"; }
    [ -s "$out.tmp/krtfix.ko" ] || die "the build for $rel made no krtfix.ko"
    rm -rf "$out" && mv "$out.tmp" "$out"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$ARM64_SERIES-arm64" "$rel" "$ARM64/kernels/$pkg/boot/vmlinuz-$rel" "$ko" "$(upstream "$ver")" "$ARM64_SUITE" series - arm64 "$bb" >"$ARM64_MANIFEST.tmp"
  mv "$ARM64_MANIFEST.tmp" "$ARM64_MANIFEST"
  say "kernel $ARM64_SERIES-arm64: $rel ($ver, $ARM64_SUITE); module $ko ($(( $(date +%s) - t0 )) s); wrote $ARM64_MANIFEST"
}
