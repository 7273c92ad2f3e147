#!/usr/bin/env bash
# keel tests: the core alone. MIT licence, see LICENSE.
#
# Configures a project that adds this source tree with add_subdirectory and
# every part but keel::sim turned off (KEEL_BUILD_NET=OFF and the parts
# that need it follow), then builds keel_sim and examples/walk.c and runs
# walk. The configure must not look for ENet, libsodium, zstd, Criterion,
# threads or libmicrohttpd (none is in the cache afterwards), and walk must
# end with the scene hash.
#
# Registered in tests/CMakeLists.txt as test_core_only:
#   test_core_only.sh <source dir> <cmake> <C compiler>
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 <source dir> <cmake> <C compiler>" >&2
    exit 2
fi
src=$1 cmake=$2 cc=$3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/keel-core.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
test_name=test_core_only
# shellcheck source=tests/support/steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/support/steps.sh" # step, fail

mkdir -p "$tmp/game"
cat >"$tmp/game/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(keel_core_game LANGUAGES C)
add_subdirectory("$src" keel)
add_subdirectory("$src/examples" examples)
foreach(t keel_net keel_rec keel_client keel_server keel-sim keel-server keel_app)
  if(TARGET \${t})
    message(FATAL_ERROR "core only: \${t} is defined")
  endif()
endforeach()
CMAKE
# -O0: the point is the configure and that everything links
step configure "$cmake" -S "$tmp/game" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0 \
    -DCMAKE_C_COMPILER="$cc" -DKEEL_BUILD_NET=OFF -DKEEL_WERROR=ON
for var in ENET_LIBRARY SODIUM_LIBRARY ZSTD_LIBRARY CRITERION_LIBRARY MICROHTTPD_FOUND CMAKE_HAVE_LIBC_PTHREAD; do
    if grep -q "^$var:" "$tmp/build/CMakeCache.txt"; then
        fail "the core-only configure looked for $var"
    fi
done
for option in KEEL_BUILD_NET KEEL_BUILD_REC KEEL_BUILD_CLIENT KEEL_BUILD_SERVER KEEL_BUILD_PROGRAMS KEEL_BUILD_PLAY; do
    grep -q "^$option:BOOL=OFF$" "$tmp/build/CMakeCache.txt" || fail "$option is not off after -DKEEL_BUILD_NET=OFF"
done
step build "$cmake" --build "$tmp/build" --target walk -j 2
step run sh -c "'$tmp/build/examples/walk' >'$tmp/walk.txt'"
grep -q '^scene hash [0-9a-f]\{16\}$' "$tmp/walk.txt" || {
    cat "$tmp/walk.txt" >&2
    fail "walk printed no scene hash"
}
objects=$(find "$tmp/build" -name '*.o' | wc -l)
echo "test_core_only: ok (configured without ENet, libsodium, zstd, threads; $objects objects built;" \
    "$(tail -n 1 "$tmp/walk.txt"))"
