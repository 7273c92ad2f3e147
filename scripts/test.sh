#!/usr/bin/env bash
# keel: set up, build and run every test. MIT licence, see LICENSE.
#
# Two build trees, each built with -j2 and tested with ctest:
#   build/       RelWithDebInfo, warnings are errors (KEEL_WERROR=ON)
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer (KEEL_SANITIZE=ON),
#                -O1 -g without NDEBUG, so assert() stays on and runtime stays low
# Both keep KEEL_CHECKS=ON. Exits non-zero if any configure, build or test fails.
# The real maps come from ../shared/levels or $KEEL_LEVELS_DIR; tests that need
# them are skipped when the folder is absent.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
jobs=2

section() {
    printf '\n==== %s ====\n' "$*"
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

# build_and_test <dir> <label> <cmake -D options...>
build_and_test() {
    local dir=$1 label=$2
    shift 2

    section "$label: configure ($dir/)"
    if ! cmake -S . -B "$dir" "$@"; then
        failures+=("$label: configure")
        return 0
    fi

    section "$label: build ($dir/, -j$jobs)"
    if ! cmake --build "$dir" -j "$jobs"; then
        failures+=("$label: build")
        return 0
    fi

    section "$label: ctest ($dir/)"
    local count
    count=$( (cd "$dir" && ctest -N) | sed -n 's/^Total Tests: *\([0-9][0-9]*\).*/\1/p' || true)
    if [ "${count:-0}" -eq 0 ]; then
        echo "WARNING: $label: no tests are registered in $dir/ (nothing to run)"
        return 0
    fi
    if ! (cd "$dir" && ctest --output-on-failure -j "$jobs"); then
        failures+=("$label: tests")
    fi
}

build_and_test build "normal" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF -DKEEL_CHECKS=ON

# Sanitizer reports abort the test (-fno-sanitize-recover=all is set by CMake);
# keep the caller's settings when given.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
build_and_test build-asan "asan+ubsan" \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-O1 -g" \
    -DKEEL_WERROR=OFF -DKEEL_SANITIZE=ON -DKEEL_CHECKS=ON

section "summary"
if [ "${#failures[@]}" -ne 0 ]; then
    for f in "${failures[@]}"; do
        echo "FAILED: $f"
    done
    exit 1
fi
echo "all builds and tests passed"
