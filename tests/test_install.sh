#!/usr/bin/env bash
# keel tests: keel::sim used the way C libraries are. MIT licence, see LICENSE.
#
# Installs the build tree into a temporary prefix, then builds examples/walk.c
# three ways and runs each program:
#   1. CMake: find_package(keel) from the prefix (CMAKE_PREFIX_PATH);
#   2. pkg-config: cc walk.c $(pkg-config --cflags --libs keel-sim);
#   3. add_subdirectory: a consumer project that adds this source tree and
#      examples/ and builds keel::sim from source (-O0, for speed; not in
#      the sanitizer tree, see below).
# The three outputs must be equal (the simulation is deterministic, also
# across optimisation levels) and end with the scene hash.
#
# Registered in CMakeLists.txt as test_install:
#   test_install.sh <source dir> <build dir> <cmake> <C compiler> <KEEL_SANITIZE>
# In the sanitizer tree the installed library holds ASan and UBSan calls, so
# every program here is compiled and linked with the same -fsanitize flags.
set -euo pipefail

if [ $# -ne 5 ]; then
    echo "usage: $0 <source dir> <build dir> <cmake> <C compiler> <KEEL_SANITIZE ON|OFF>" >&2
    exit 2
fi
src=$1 build=$2 cmake=$3 cc=$4 sanitize=$5

for tool in "$cmake" "$cc" pkg-config; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_install: $tool not found (scripts/setup.sh installs the Debian packages)" >&2
        exit 1
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/keel-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# step <name> <command...>: runs quietly; on failure prints the command and its output
step() {
    local name=$1
    shift
    if ! "$@" >"$tmp/$name.log" 2>&1; then
        echo "test_install: FAILED: $name: $*" >&2
        cat "$tmp/$name.log" >&2
        exit 1
    fi
}
fail() {
    echo "test_install: FAILED: $*" >&2
    exit 1
}

san=""
case $sanitize in
ON | on | 1 | TRUE | true | YES | yes) san="-fsanitize=address,undefined -fno-sanitize-recover=all" ;;
esac
warn="-Wall -Wextra -Werror"
prefix="$tmp/prefix"

# ---- install --------------------------------------------------------------
step install "$cmake" --install "$build" --prefix "$prefix"
for f in include/keel/sim_version.h include/keel/sim_scene.h include/keel/sim_move_types.def \
    share/doc/keel/LICENSE; do
    [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
for f in "$prefix"/include/keel/*; do
    case ${f##*/} in
    sim_*) ;;
    *) fail "cmake --install installed ${f##*/}: only sim's headers are public" ;;
    esac
done
config=$(find "$prefix" -name keelConfig.cmake | head -n 1)
pcfile=$(find "$prefix" -name keel-sim.pc | head -n 1)
[ -n "$config" ] || fail "no keelConfig.cmake under the prefix"
[ -n "$pcfile" ] || fail "no keel-sim.pc under the prefix"

# ---- 1. find_package(keel) ------------------------------------------------
step cmake-configure "$cmake" -S "$src/examples" -B "$tmp/cmake-build" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="$warn $san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
# the package found must be the one just installed
found=$(sed -n 's/^keel_DIR:PATH=//p' "$tmp/cmake-build/CMakeCache.txt")
[ "$found" = "$(dirname "$config")" ] || fail "find_package(keel) found '$found', not $(dirname "$config")"
step cmake-build "$cmake" --build "$tmp/cmake-build"
step cmake-run sh -c "'$tmp/cmake-build/walk' >'$tmp/out-cmake.txt'"

# ---- 2. pkg-config --------------------------------------------------------
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pcfile")
step pkg-config pkg-config --exists --print-errors keel-sim
version=$(pkg-config --modversion keel-sim)
header_version=$(sed -n 's/^#define KEEL_VERSION_\(MAJOR\|MINOR\|PATCH\) *\([0-9][0-9]*\)$/\2/p' \
    "$prefix/include/keel/sim_version.h" | paste -sd.)
[ "$version" = "$header_version" ] || fail "keel-sim.pc says $version, sim_version.h says $header_version"
flags=$(pkg-config --cflags --libs keel-sim)
# shellcheck disable=SC2086 # word splitting of the flags is the point
step pc-build "$cc" -std=c11 $warn $san "$src/examples/walk.c" $flags -o "$tmp/walk-pc"
# a shared keel (BUILD_SHARED_LIBS=ON) is not on the loader's path: pkg-config
# gives no rpath, so the program is run as a user would run it
step pc-run env LD_LIBRARY_PATH="$(pkg-config --variable=libdir keel-sim)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    sh -c "'$tmp/walk-pc' >'$tmp/out-pc.txt'"

# ---- 3. add_subdirectory --------------------------------------------------
# This one builds keel from source and does not use the tree under test, so
# the sanitizer tree leaves it to the normal tree (it is the slow part).
compare="pc"
if [ -n "$san" ]; then
    echo "test_install: add_subdirectory: skipped in the sanitizer tree (the normal tree checks it)"
else
    mkdir -p "$tmp/consumer"
    cat >"$tmp/consumer/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(keel_consumer LANGUAGES C)
add_subdirectory("$src" keel)
add_subdirectory("$src/examples" examples)
if(NOT TARGET keel::sim)
  message(FATAL_ERROR "add_subdirectory(keel) defined no keel::sim")
endif()
EOF
    step sub-configure "$cmake" -S "$tmp/consumer" -B "$tmp/sub-build" \
        -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O0" -DCMAKE_C_COMPILER="$cc"
    step sub-build "$cmake" --build "$tmp/sub-build" --target walk -j 2
    step sub-run sh -c "'$tmp/sub-build/examples/walk' >'$tmp/out-sub.txt'"
    compare="pc sub"
fi

# ---- the runs agree ------------------------------------------------------
grep -q '^scene hash [0-9a-f]\{16\}$' "$tmp/out-cmake.txt" || {
    cat "$tmp/out-cmake.txt" >&2
    fail "walk printed no scene hash"
}
for other in $compare; do
    if ! cmp -s "$tmp/out-cmake.txt" "$tmp/out-$other.txt"; then
        diff "$tmp/out-cmake.txt" "$tmp/out-$other.txt" >&2 || true
        fail "the find_package and the $other builds of walk print different output"
    fi
done
cat "$tmp/out-cmake.txt"
echo "test_install: ok (the builds of walk agree; keel $version)"
