#!/usr/bin/env bash
# keel: the libraries keel's core and recordings need, built for a target
# Debian packages no libraries for. MIT licence, see LICENSE.
#
# Usage: scripts/cross-deps.sh TARGET [OUT]
#   TARGET  win64 (x86_64-w64-mingw32-gcc) or wasm (emcc)
#   OUT     default build-cross/deps-TARGET
#
# What OUT holds afterwards:
#   include/libfixmath/  libfixmath's headers, copied from libfixmath-dev
#                        (keel uses only its header: sim_fx.h has its own
#                        inline arithmetic, so no libfixmath library is needed)
#   include/xxhash.h     from libxxhash-dev
#   include/zstd.h, zstd_errors.h
#   lib/libxxhash.a      xxhash.h's implementation (XXH_IMPLEMENTATION)
#   lib/libzstd.a        zstd from Debian's own source package (libzstd,
#                        fetched with `apt-get source`; a deb-src entry for
#                        the machine's suite is added when none is configured,
#                        as root), assembly off
#   stamp                what was built, so a second run does nothing
#
# Nothing is downloaded from outside Debian's archive. Exit 0 when OUT is
# ready; 77 when a tool or the source cannot be had (with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/cross-deps.sh win64|wasm [OUT]}
out=${2:-build-cross/deps-$target}
case $target in
win64)
    cc=(x86_64-w64-mingw32-gcc)
    ar=(x86_64-w64-mingw32-ar)
    ;;
wasm)
    # Debian's emcc finds its node modules only through NODE_PATH.
    export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
    cc=(emcc)
    ar=(emar)
    ;;
*)
    echo "usage: scripts/cross-deps.sh win64|wasm [OUT]" >&2
    exit 2
    ;;
esac
stamp="$target zstd=$(dpkg-query -W -f='${Version}' libzstd-dev 2>/dev/null | head -n 1)"
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ]; then
    exit 0
fi
command -v "${cc[0]}" >/dev/null || { echo "cross-deps: ${cc[0]} is not installed" >&2; exit 77; }
# For wasm, emcc's own clang with the flags emcc gives it: the same objects
# without emcc's Python start-up (a second or more) for every file.
[ "$target" = wasm ] && read -r -a cc <<<"clang $(emcc --cflags)"

rm -rf "$out"
mkdir -p "$out/include" "$out/lib" "$out/src" "$out/obj"
out=$(cd "$out" && pwd)

# ---- headers ------------------------------------------------------------------------
cp -r /usr/include/libfixmath "$out/include/"
cp /usr/include/xxhash.h "$out/include/"

# ---- xxHash: the header's own implementation ----------------------------------------
printf '#define XXH_STATIC_LINKING_ONLY\n#define XXH_IMPLEMENTATION\n#include "xxhash.h"\n' >"$out/src/xxhash.c"
"${cc[@]}" -O2 -I"$out/include" -c "$out/src/xxhash.c" -o "$out/obj/xxhash.o"
"${ar[@]}" rcs "$out/lib/libxxhash.a" "$out/obj/xxhash.o"

# ---- zstd: Debian's source package --------------------------------------------------
fetch_zstd() {
    (cd "$out/src" && apt-get source --download-only -qq libzstd >/dev/null 2>&1)
}
if ! fetch_zstd; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "cross-deps: apt-get source libzstd failed and this is not root (add a deb-src entry)" >&2
        exit 77
    fi
    # Same archive and suite as the machine's own entries.
    suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
    cat >/etc/apt/sources.list.d/keel-deb-src.sources <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    apt-get update -qq >/dev/null 2>&1 || echo "cross-deps: warning: apt-get update failed" >&2
    fetch_zstd || { echo "cross-deps: apt-get source libzstd failed" >&2; exit 77; }
fi
tarball=$(ls "$out"/src/libzstd_*.orig.tar.* | head -n 1)
tar xf "$tarball" -C "$out/src"
zsrc=$(ls -d "$out"/src/zstd-*/lib | head -n 1)
cp "$zsrc/zstd.h" "$zsrc/zstd_errors.h" "$out/include/"
# Single-threaded, no assembly, no legacy formats: what rec/ uses (one-shot
# compress and decompress contexts).
for f in "$zsrc"/common/*.c "$zsrc"/compress/*.c "$zsrc"/decompress/*.c; do
    echo "${cc[*]} -O2 -DZSTD_DISABLE_ASM -DZSTD_LEGACY_SUPPORT=0 -DZSTD_MULTITHREAD=0 -I$zsrc -I$zsrc/common -c $f -o $out/obj/zstd_$(basename "$f" .c).o"
done >"$out/compile.txt"
if ! xargs -P 2 -I{} sh -c '{}' <"$out/compile.txt" >"$out/build.log" 2>&1; then
    echo "cross-deps: building zstd for $target failed:" >&2
    tail -n 20 "$out/build.log" >&2
    exit 1
fi
"${ar[@]}" rcs "$out/lib/libzstd.a" "$out"/obj/zstd_*.o
echo "$stamp" >"$out/stamp"
echo "cross-deps: $target libraries in $out"
