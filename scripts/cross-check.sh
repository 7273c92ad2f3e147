#!/usr/bin/env bash
# keel: cross-architecture determinism check. MIT licence, see LICENSE.
#
# Builds keel-sim for x86-64 (gcc and clang), i386 (32-bit; a cross compiler,
# since gcc-multilib and the other cross compilers exclude each other), arm64 and s390x
# (big-endian), runs the same scenarios on each (arm64 and s390x under
# qemu-user) and requires the same final state hash everywhere. Installs the
# cross compilers, qemu and the foreign-architecture libraries it needs when run
# as root; otherwise it says what is missing and skips: exit 77, or 1 with
# KEEL_CROSS_REQUIRED=1. Exit 0: all agree; 1: they disagree or a build failed.
#
# Usage: scripts/cross-check.sh [--ticks N]
set -euo pipefail
cd "$(dirname "$0")/.."
ticks=320
if [ "${1:-}" = "--ticks" ] && [ -n "${2:-}" ]; then
    ticks=$2
fi
out=build-cross
mkdir -p "$out"

skip() {
    echo "cross-check: skipped: $*" >&2
    if [ "${KEEL_CROSS_REQUIRED:-0}" = 1 ]; then
        exit 1
    fi
    exit 77
}

# ---- packages ---------------------------------------------------------------------
need=(gcc-i686-linux-gnu gcc-aarch64-linux-gnu gcc-s390x-linux-gnu qemu-user clang
      libc6-dev-i386-cross libc6-dev-arm64-cross libc6-dev-s390x-cross
      linux-libc-dev-i386-cross linux-libc-dev-arm64-cross linux-libc-dev-s390x-cross
      libfixmath-dev:i386 libxxhash-dev:i386 libfixmath-dev:arm64 libxxhash-dev:arm64
      libfixmath-dev:s390x libxxhash-dev:s390x)
missing=()
for p in "${need[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        skip "not root; to run it, as root: dpkg --add-architecture i386; dpkg --add-architecture arm64;" \
             "dpkg --add-architecture s390x; apt-get update; apt-get install ${missing[*]}"
    fi
    echo "cross-check: installing ${missing[*]}" >&2
    for a in i386 arm64 s390x; do
        dpkg --print-foreign-architectures | grep -qx "$a" || dpkg --add-architecture "$a"
    done
    # One index mid-sync can fail `update` while the install still works.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || echo "cross-check: warning: apt-get update failed" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        skip "could not install ${missing[*]}"
fi

# ---- builds -----------------------------------------------------------------------
common=(-std=c11 -O2 -Isim/include -Isim/src -DKEEL_CHECKS=1)
build() { # name compiler libdir sim-only-flags [-- flags for everything]
    local name=$1 cc=$2 libdir=$3 simflags=$4
    shift 4
    local dir="$out/obj-$name"
    rm -rf "$dir"
    mkdir -p "$dir"
    local f
    for f in sim/src/*.c; do
        # shellcheck disable=SC2086
        "$cc" "${common[@]}" $simflags "$@" -c "$f" -o "$dir/sim_$(basename "$f" .c).o"
    done
    for f in tools/keel-sim/*.c; do
        "$cc" "${common[@]}" "$@" -c "$f" -o "$dir/tool_$(basename "$f" .c).o"
    done
    "$cc" "$@" "$dir"/*.o -o "$out/keel-sim-$name" "$libdir/liblibfixmath.a" "$libdir/libxxhash.a" -static
}
# The core with no floating-point registers wherever the compiler can say so.
build x86_64-gcc gcc /usr/lib/x86_64-linux-gnu -mgeneral-regs-only
build x86_64-clang clang /usr/lib/x86_64-linux-gnu -mgeneral-regs-only
build i386 i686-linux-gnu-gcc /usr/lib/i386-linux-gnu ""
build arm64 aarch64-linux-gnu-gcc /usr/lib/aarch64-linux-gnu -mgeneral-regs-only
build s390x s390x-linux-gnu-gcc /usr/lib/s390x-linux-gnu ""

# Some x86-64 kernels are built without 32-bit support: run the i386 build
# under qemu-i386 there.
i386_runner=()
if ! "$out/keel-sim-i386" --help >/dev/null 2>&1; then
    echo "cross-check: note: this kernel does not run i386 binaries; using qemu-i386" >&2
    i386_runner=(qemu-i386)
fi

run() { # name args...
    local name=$1
    shift
    case $name in
    arm64) qemu-aarch64 "$out/keel-sim-$name" "$@" ;;
    s390x) qemu-s390x "$out/keel-sim-$name" "$@" ;;
    i386) "${i386_runner[@]}" "$out/keel-sim-$name" "$@" ;;
    *) "$out/keel-sim-$name" "$@" ;;
    esac
}

# ---- scenarios ----------------------------------------------------------------------
scenarios=("--level builtin --characters 8 --seed 1"
           "--level builtin --characters 8 --seed 2 --shape box"
           "--mode probes --level builtin --characters 16 --seed 3"
           "--level generated --characters 8 --seed 4")
maps=${KEEL_LEVELS_DIR:-../shared/levels}
if [ -f "$maps/sauerbraten_zdm2.obj" ]; then
    scenarios+=("--level $maps/sauerbraten_zdm2.obj --scale 0.12 --characters 8 --seed 5")
else
    echo "cross-check: note: $maps is absent; the real-map scenario is skipped" >&2
fi

fail=0
for sc in "${scenarios[@]}"; do
    ref=""
    line="cross-check: ${sc}:"
    for name in x86_64-gcc x86_64-clang i386 arm64 s390x; do
        # shellcheck disable=SC2086
        h=$(run "$name" $sc --ticks "$ticks" --quiet 2>/dev/null | sed -n 's/^final_hash //p')
        [ -n "$ref" ] || ref=$h
        line+=" $name=$h"
        if [ -z "$h" ] || [ "$h" != "$ref" ]; then
            fail=1
        fi
    done
    echo "$line"
done
if [ "$fail" -ne 0 ]; then
    echo "cross-check: FAILED: the architectures disagree" >&2
    exit 1
fi
echo "cross-check: all architectures agree (x86-64 gcc and clang, i386, arm64, big-endian s390x)"
