#!/usr/bin/env bash
# keel: set up, build and run every test. MIT licence, see LICENSE.
#
# Two build trees, each built with -j2 and tested with ctest:
#   build/       RelWithDebInfo, warnings are errors (KEEL_WERROR=ON)
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer (KEEL_SANITIZE=ON),
#                -O1 -g1 without NDEBUG, so assert() stays on and runtime stays low
#                (-g1: line tables for the reports, less to compile and link);
#                no benchmarks, and `ctest -LE normal_only` (tests/CMakeLists.txt)
# Both keep KEEL_CHECKS=ON. Exits non-zero if any configure, build or test fails.
# KEEL_NET_STRICT=1 also fails the real-socket tests (test_netplay_enet) on
# figures that depend on timing (late commands, substitutions, how fast the
# input margin settles): use it on a quiet machine; the in-memory tests check
# them exactly either way.
# The real maps come from ../shared/levels or $KEEL_LEVELS_DIR; tests that need
# them are skipped when the folder is absent.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=2

# Each section's heading gives the seconds since the start, so a slow CI run
# shows where its time went.
section() {
    printf '\n==== %s (at %d s) ====\n' "$*" "$SECONDS"
}

failures=()

section "setup: Debian packages"
scripts/setup.sh
echo "ok"

levels="${KEEL_LEVELS_DIR:-$root/../shared/levels}"
if [ -d "$levels" ]; then
    echo "real maps: $(cd "$levels" && pwd -P)"
else
    echo "real maps: $levels is absent; tests that need them will be skipped"
fi

# Work that needs only the CPU (building the sanitizer tree, the
# cross-architecture matrix) runs in the background at a lower priority
# (nice 10) while a tree's tests run: several of those mostly wait on
# real-time sessions of real processes (alone on a quiet machine:
# test_netplay_enet 91 s of wall time for 34 s of CPU, test_attack 53 s for
# 13 s), and the niced work takes the cores they leave idle; a test that
# wants a core gets it first. Its output is printed, whole, when it ends.
bg_dir=$(mktemp -d)
trap 'rm -rf "$bg_dir"' EXIT
# background <name> <command...>
background() {
    local name=$1
    shift
    (
        set +e
        renice -n 10 -p "$BASHPID" >/dev/null 2>&1 # and every process it starts
        "$@" >"$bg_dir/$name.log" 2>&1
        echo $? >"$bg_dir/$name.status"
    ) &
    eval "bg_pid_$name=$!"
}
# finish <name>: waits for it, prints its output, returns its exit status.
finish() {
    local name=$1 pid
    eval "pid=\$bg_pid_$name"
    wait "$pid" || true
    cat "$bg_dir/$name.log"
    return "$(cat "$bg_dir/$name.status" 2>/dev/null || echo 1)"
}

# configure_and_build <dir> <label> <cmake -D options...>: exit status 1 when
# the configure failed, 2 when the build failed.
configure_and_build() {
    local dir=$1 label=$2
    shift 2
    section "$label: configure ($dir/)"
    cmake -S . -B "$dir" "$@" || return 1
    section "$label: build ($dir/, -j$jobs)"
    cmake --build "$dir" -j "$jobs" || return 2
}
built() { # built <label> <status of configure_and_build>
    case $2 in
    0) return 0 ;;
    1) failures+=("$1: configure") ;;
    *) failures+=("$1: build") ;;
    esac
    return 1
}

# run_tests <dir> <label>
run_tests() {
    local dir=$1 label=$2
    section "$label: ctest ($dir/)"
    local count
    count=$( (cd "$dir" && ctest -N) | sed -n 's/^Total Tests: *\([0-9][0-9]*\).*/\1/p' || true)
    if [ "${count:-0}" -eq 0 ]; then
        echo "WARNING: $label: no tests are registered in $dir/ (nothing to run)"
        return 0
    fi
    local log="$dir/ctest-output.log"
    if ! (cd "$dir" && ctest --output-on-failure -j "$ctest_jobs" "${ctest_args[@]}") 2>&1 | tee "$log"; then
        failures+=("$label: tests")
    fi
    # "N% tests passed, F tests failed out of T"
    local line t f
    line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)
    t=$(echo "$line" | sed -n 's/.*out of \([0-9][0-9]*\).*/\1/p')
    f=$(echo "$line" | sed -n 's/.*, \([0-9][0-9]*\) tests\{0,1\} failed.*/\1/p')
    total_passed=$((total_passed + ${t:-0} - ${f:-0}))
    total_failed=$((total_failed + ${f:-0}))
}
total_passed=0
total_failed=0
total_skipped=0

# The flags of both trees are those of CMakePresets.json's presets default
# and asan (cmake --preset default builds the same build/).
# ctest runs three tests at a time on two cores: the longest tests mostly
# wait on real-time sessions of real processes, so a third slot keeps the
# cores busy. Tests that load both cores themselves count as two in the
# sanitizer tree (PROCESSORS in tests/CMakeLists.txt).
ctest_jobs=3
normal_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF -DKEEL_CHECKS=ON)
# Sanitizer reports abort the test (-fno-sanitize-recover=all is set by CMake);
# keep the caller's settings when given.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The benchmarks are built (and warning-free) in build/; no test runs them,
# so the sanitizer tree leaves them out. It also leaves out the tests labelled
# normal_only (tests/CMakeLists.txt: the longest real-time sessions and map
# computations, whose code runs under the sanitizers in shorter tests).
asan_flags=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g1"
    -DKEEL_WERROR=OFF -DKEEL_SANITIZE=ON -DKEEL_CHECKS=ON -DKEEL_BUILD_BENCH=OFF)

normal_status=0
configure_and_build build "normal" "${normal_flags[@]}" || normal_status=$?
# The sanitizer tree builds while the normal tree's tests run.
background asan_build configure_and_build build-asan "asan+ubsan" "${asan_flags[@]}"
if built "normal" "$normal_status"; then
    ctest_args=()
    run_tests build "normal"
fi
asan_status=0
finish asan_build || asan_status=$?

# The same scenarios built for x86-64 (gcc, clang), i386, arm64 and big-endian
# s390x must end in the same state hash (installs cross compilers and qemu as
# root; skips with a message otherwise). It runs while the sanitizer tree's
# tests do.
background cross scripts/cross-check.sh
if built "asan+ubsan" "$asan_status"; then
    ctest_args=(-LE normal_only)
    run_tests build-asan "asan+ubsan"
fi
section "cross-architecture determinism (ran beside the sanitizer tree's tests)"
cross=0
finish cross || cross=$?
case $cross in
0) total_passed=$((total_passed + 1)) ;;
77) total_skipped=1 ;;
*)
    failures+=("cross-architecture determinism")
    total_failed=$((total_failed + 1))
    ;;
esac

# keel-replay built for WebAssembly, in a static page in headless Chromium,
# must give native keel-replay's verdicts (installs emscripten and chromium
# as root; skips with a message otherwise).
section "browser verifier (WebAssembly in headless Chromium)"
web=0
scripts/web-check.sh || web=$?
case $web in
0) total_passed=$((total_passed + 1)) ;;
77) total_skipped=$((total_skipped + 1)) ;;
*)
    failures+=("browser verifier")
    total_failed=$((total_failed + 1))
    ;;
esac

# The C sources must follow .clang-format (scripts/format.sh formats them).
section "format (scripts/format.sh --check)"
if scripts/format.sh --check; then
    total_passed=$((total_passed + 1))
else
    failures+=("format: scripts/format.sh --check")
    total_failed=$((total_failed + 1))
fi

section "summary"
for f in "${failures[@]}"; do
    echo "FAILED: $f"
done
# ctest executables in both trees plus the cross-architecture, browser and format checks
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "${#failures[@]}" -eq 0 ]
