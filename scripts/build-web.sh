#!/usr/bin/env bash
# keel: the browser verifier, a static page around keel-replay built for
# WebAssembly. MIT licence, see LICENSE.
#
# Usage: scripts/build-web.sh [OUT]      (OUT: default build-web)
#
# Compiles keel's core, recordings, protocol encoders and client library
# and keel-replay's own files with emcc (Emscripten, Debian's package;
# web/build.mk has the file list and flags), no threads, no ENet, no
# libsodium (net/src/absent/host_enet_absent.c stands in for the socket host), against zstd
# and xxHash built for wasm by scripts/cross-deps.sh. keel-replay's main() is kept and the page calls it
# with arguments (`info FILE --json`, `verify FILE --json [--level OBJ]`)
# on files it writes into Emscripten's in-memory file system.
#
# OUT holds afterwards:
#   index.html, verifier.js,            the page (sources in web/)
#   replay-call.js, keel.css
#   keel-replay.js                      the module, its wasm inlined
#                                       (SINGLE_FILE), so the page works
#                                       from file:// as well as from any
#                                       static server
#   obj/                                the objects (make rebuilds what
#                                       changed); build.log, the build's output
#
# Exit 0 built; 1 a compile or link failed; 77 emcc or the libraries
# cannot be had (the reason on stderr).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-web}
# Debian's emcc finds its node modules only through NODE_PATH.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
if ! command -v emcc >/dev/null; then
    echo "build-web: emcc is not installed (Debian: apt-get install emscripten)" >&2
    exit 77
fi
deps=build-cross/deps-wasm
rc=0
scripts/cross-deps.sh wasm "$deps" || rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

# emcc's clang and flags: compiling with them directly saves emcc's start-up
# (about a second a file); without them make uses emcc itself.
wasm_cc=()
about=$(emcc -v 2>&1 || true)
clang=$(echo "$about" | sed -n 's/^InstalledDir: //p' | head -n 1)/clang
version=$(echo "$about" | sed -n 's/.*clang version \([0-9][0-9]*\)\..*/\1/p' | head -n 1)
[ -x "$clang-$version" ] && clang=$clang-$version
if [ -x "$clang" ] && cflags=$(emcc --cflags 2>/dev/null); then
    wasm_cc=(WASM_CC="$clang" WASM_CFLAGS="$cflags")
fi
mkdir -p "$out"
started=$(date +%s)
if ! make -s -f web/build.mk -j2 OUT="$out" DEPS="$deps" "${wasm_cc[@]}" >"$out/build.log" 2>&1; then
    echo "build-web: the build failed (web/build.mk):" >&2
    tail -n 30 "$out/build.log" >&2
    exit 1
fi
echo "build-web: $out/index.html ($(du -k "$out/keel-replay.js" | cut -f1) KiB module, $(($(date +%s) - started)) s)"
