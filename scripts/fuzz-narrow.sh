#!/usr/bin/env bash
# keel: a long run of the narrow-phase fuzzer (tests/test_narrow_fuzz.c,
# docs/shapes.md). MIT licence, see LICENSE.
#
#   scripts/fuzz-narrow.sh                        10 minutes, seed from the clock
#   scripts/fuzz-narrow.sh --seconds 3600 --seed 7
#   scripts/fuzz-narrow.sh --build build-asan     another build tree
#
# Builds test_narrow_fuzz in the tree (default build/, configured as in
# docs/building.md if absent) and runs its random part for the given time.
# Failures print their configuration in raw Q16.16 integers.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
seed=$(date +%s)
tree=build
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --build) tree="$2"; shift 2 ;;
    *) echo "fuzz-narrow.sh: unknown option '$1' (--seconds N, --seed S, --build DIR)" >&2; exit 2 ;;
    esac
done
if [ ! -f "$tree/CMakeCache.txt" ]; then
    cmake -S . -B "$tree" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_CHECKS=ON
fi
cmake --build "$tree" --target test_narrow_fuzz -j"$(nproc)"
echo "narrow fuzz: seed $seed, $seconds s"
KEEL_FUZZ_SECONDS="$seconds" KEEL_FUZZ_SEED="$seed" "$tree/test_narrow_fuzz" --filter 'narrow_fuzz/*'
