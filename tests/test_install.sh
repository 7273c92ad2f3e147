#!/usr/bin/env bash
# keel tests: keel's libraries used the way C libraries are. MIT licence, see LICENSE.
#
# Installs the build tree into a temporary prefix, then builds examples/walk.c
# (keel::sim) three ways and runs each program:
#   1. CMake: find_package(keel COMPONENTS client) from the prefix
#      (CMAKE_PREFIX_PATH), which builds examples/client.c too;
#   2. pkg-config: cc walk.c $(pkg-config --cflags --libs keel-sim);
#   3. add_subdirectory: a consumer project that adds this source tree and
#      examples/ and builds keel::sim from source (-O0, for speed; not in
#      the sanitizer tree, see below).
# The three outputs must be equal (the simulation is deterministic, also
# across optimisation levels) and end with the scene hash.
# Besides: find_package(keel) alone defines keel::sim and no other
# component, a component keel does not have fails it, COMPONENTS rec brings
# keel::net along; a C++ program (g++) that includes every header installed
# under include/keel (listed from the prefix, so a new header is covered)
# links against keel-client; and examples/client.c, built with find_package
# and with pkg-config (keel-client), plays against this build tree's
# keel-server on loopback for 2 s, both builds side by side: each must print
# smoothed positions, leave and exit 0, and the server must count two joins
# and two clean leaves.
#
# Registered in CMakeLists.txt as test_install:
#   test_install.sh <source dir> <build dir> <cmake> <C compiler> <KEEL_SANITIZE>
# (the C++ compiler is $CXX, else g++). In the sanitizer tree the installed
# libraries and keel-server hold ASan and UBSan calls, so every program here
# is compiled and linked with the same -fsanitize flags.
set -euo pipefail

if [ $# -ne 5 ]; then
    echo "usage: $0 <source dir> <build dir> <cmake> <C compiler> <KEEL_SANITIZE ON|OFF>" >&2
    exit 2
fi
src=$1 build=$2 cmake=$3 cc=$4 sanitize=$5
cxx=${CXX:-g++}

for tool in "$cmake" "$cc" "$cxx" pkg-config timeout; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "test_install: $tool not found (scripts/setup.sh installs the Debian packages)" >&2
        exit 1
    fi
done

server_pid=""
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keel-install.XXXXXX")
cleanup() {
    if [ -n "$server_pid" ]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT

test_name=test_install
# shellcheck source=tests/support/steps.sh
. "$(dirname "${BASH_SOURCE[0]}")/support/steps.sh" # step, fail

san=""
case $sanitize in
ON | on | 1 | TRUE | true | YES | yes) san="-fsanitize=address,undefined -fno-sanitize-recover=all" ;;
esac
warn="-Wall -Wextra -Werror"
prefix="$tmp/prefix"

# ---- install --------------------------------------------------------------
step install "$cmake" --install "$build" --prefix "$prefix"
for f in include/keel/sim_version.h include/keel/sim_scene.h include/keel/sim_move_types.def \
    include/keel/net_host.h include/keel/rec.h include/keel/cl_client.h include/keel/cl_smooth.h \
    share/doc/keel/LICENSE; do
    [ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
for f in "$prefix"/include/keel/*; do
    case ${f##*/} in
    sim_* | net_* | rec.h | rec_* | cl_*) ;;
    *) fail "cmake --install installed ${f##*/}: only sim's, net's, rec's and client's headers are public" ;;
    esac
done
config=$(find "$prefix" -name keelConfig.cmake | head -n 1)
pcfile=$(find "$prefix" -name keel-sim.pc | head -n 1)
[ -n "$config" ] || fail "no keelConfig.cmake under the prefix"
[ -n "$pcfile" ] || fail "no keel-sim.pc under the prefix"
for pc in keel-net keel-rec keel-client; do
    [ -f "$(dirname "$pcfile")/$pc.pc" ] || fail "no $pc.pc beside keel-sim.pc"
done

# ---- 1. find_package(keel COMPONENTS client) ------------------------------
step cmake-configure "$cmake" -S "$src/examples" -B "$tmp/cmake-build" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_C_FLAGS="$warn $san" -DCMAKE_EXE_LINKER_FLAGS="$san" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
# the package found must be the one just installed
found=$(sed -n 's/^keel_DIR:PATH=//p' "$tmp/cmake-build/CMakeCache.txt")
[ "$found" = "$(dirname "$config")" ] || fail "find_package(keel) found '$found', not $(dirname "$config")"
step cmake-build "$cmake" --build "$tmp/cmake-build"
step cmake-run sh -c "'$tmp/cmake-build/walk' >'$tmp/out-cmake.txt'"

# the components: keel::sim alone without any, none that keel does not have,
# and each with the ones it needs
mkdir -p "$tmp/components"
printf '%s\n' \
    'cmake_minimum_required(VERSION 3.16)' \
    'project(keel_components LANGUAGES C)' \
    'find_package(keel 0.9 REQUIRED)' \
    'if(NOT TARGET keel::sim OR TARGET keel::net OR TARGET keel::client)' \
    '  message(FATAL_ERROR "find_package(keel) without components: keel::sim alone expected")' \
    'endif()' \
    'find_package(keel 0.9 QUIET COMPONENTS nonesuch)' \
    'if(keel_FOUND)' \
    '  message(FATAL_ERROR "find_package(keel COMPONENTS nonesuch) succeeded")' \
    'endif()' \
    'find_package(keel 0.9 REQUIRED COMPONENTS rec)' \
    'if(NOT TARGET keel::rec OR NOT TARGET keel::net OR TARGET keel::client)' \
    '  message(FATAL_ERROR "find_package(keel COMPONENTS rec): keel::rec and keel::net expected, no keel::client")' \
    'endif()' >"$tmp/components/CMakeLists.txt"
step cmake-components "$cmake" -S "$tmp/components" -B "$tmp/components-build" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF

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
libdir=$(pkg-config --variable=libdir keel-sim)
step pc-run env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    sh -c "'$tmp/walk-pc' >'$tmp/out-pc.txt'"
for pc in keel-net keel-rec keel-client; do
    step "pc-$pc" pkg-config --exists --print-errors "$pc"
    pc_version=$(pkg-config --modversion "$pc")
    [ "$pc_version" = "$version" ] || fail "$pc.pc says $pc_version, keel-sim.pc $version"
done
client_flags=$(pkg-config --cflags --libs keel-client)
# shellcheck disable=SC2086
step pc-build-client "$cc" -std=c11 $warn $san "$src/examples/client.c" $client_flags -o "$tmp/client-pc"

# ---- C++: every installed header, and a function of each library ----------
{
    for h in "$prefix"/include/keel/*.h; do
        echo "#include <keel/${h##*/}>"
    done
    printf '%s\n' \
        '#include <cstdio>' \
        'int main()' \
        '{' \
        '    net_host_config hc = net_host_default_config();' \
        '    rec_writer_config wc = rec_default_writer_config();' \
        '    cl_config cc = cl_default_config();' \
        '    cl_smooth_settings ss = cl_smooth_default_settings();' \
        '    std::printf("C++: keel %s: %u peers, threaded writer %d, prediction cap %u, half-life %.2f s\n",' \
        '                sim_version_string(), hc.max_peers, (int)wc.threaded, cc.prediction_cap,' \
        '                (double)ss.half_life_s);' \
        '    return 0;' \
        '}'
} >"$tmp/headers.cpp"
headers=$(grep -c '^#include <keel/' "$tmp/headers.cpp")
# shellcheck disable=SC2086
step cxx-build "$cxx" -std=c++11 $warn $san "$tmp/headers.cpp" $client_flags -o "$tmp/headers-cxx"
step cxx-run env LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    sh -c "'$tmp/headers-cxx' >'$tmp/out-cxx.txt'"

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
if(NOT TARGET keel::sim OR NOT TARGET keel::client)
  message(FATAL_ERROR "add_subdirectory(keel) defined no keel::sim or keel::client")
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

# ---- examples/client.c against a real keel-server on loopback -------------
server="$build/keel-server"
[ -x "$server" ] || fail "no keel-server in $build (cmake --build $build --target keel-server)"
: >"$tmp/server.err" # there before the first read below, however late the server starts
"$server" --bind 127.0.0.1 --port 0 --insecure --duration 60 --stats-json --stats-interval 0 \
    >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!
port=""
for _ in $(seq 1 200); do # 20 s at most for it to listen (a guard against hangs)
    port=$(sed -n 's/.*listening on [0-9.]*:\([0-9][0-9]*\).*/\1/p' "$tmp/server.err")
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
[ -n "$port" ] || {
    cat "$tmp/server.err" >&2
    fail "keel-server did not listen"
}
# both builds side by side, 2 s of play each (timeout: a guard against hangs)
timeout 60 "$tmp/cmake-build/client" 127.0.0.1 "$port" 2 >"$tmp/client-cmake.out" 2>"$tmp/client-cmake.err" &
cmake_client=$!
timeout 60 "$tmp/client-pc" 127.0.0.1 "$port" 2 >"$tmp/client-pc.out" 2>"$tmp/client-pc.err" &
pc_client=$!
for run in "cmake $cmake_client" "pc $pc_client"; do
    name=${run%% *}
    code=0
    wait "${run#* }" || code=$?
    out="$tmp/client-$name.out"
    if [ "$code" -ne 0 ] || ! grep -q '^connected to ' "$out" ||
        ! grep -q '^[0-9.]* s  tick [0-9]*  pos (' "$out" || ! grep -q '^left after ' "$out"; then
        cat "$out" "$tmp/client-$name.err" >&2
        fail "examples/client.c ($name build) exited $code without connecting, printing positions and leaving"
    fi
done
kill -INT "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=""
[ "$code" -eq 0 ] || fail "keel-server exited $code after SIGINT"
summary=$(grep '"summary":1' "$tmp/server.out" || true)
case $summary in
*'"joined":2,"left":2,"timed_out":0,'*) ;;
*) fail "keel-server did not count two joins and two clean leaves: $summary" ;;
esac

cat "$tmp/out-cmake.txt"
cat "$tmp/out-cxx.txt"
echo "examples/client.c (the find_package build) against keel-server on port $port:"
cat "$tmp/client-cmake.out"
echo "test_install: ok (the builds of walk agree; $headers installed headers compile as C++ and link;" \
    "both builds of the client example played and left; keel $version)"
