#!/usr/bin/env bash
# keel: set up, build and run the main job. MIT licence, see LICENSE.
#
# Builds build/ (RelWithDebInfo, the same configuration scripts/test.sh uses, so
# the two never force each other to rebuild) and runs keel-sim. With no
# arguments it runs the default job:
#   keel-sim --level builtin --ticks 640 --characters 8 --seed 1 --format jsonl
# Any arguments replace those defaults and are passed to keel-sim unchanged.
# keel-sim's output is the only thing written to stdout; setup and build
# messages go to stderr.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh >&2

shopt -s nullglob
sources=(tools/keel-sim/*.c)
shopt -u nullglob
if [ "${#sources[@]}" -eq 0 ]; then
    echo "keel run: keel-sim is not written yet (no tools/keel-sim/*.c); nothing to run." >&2
    exit 1
fi

echo "==== build: keel-sim (build/, -j2) ====" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF \
    -DKEEL_CHECKS=ON >&2
cmake --build build -j 2 --target keel-sim >&2

if [ ! -x build/keel-sim ]; then
    echo "keel run: build/keel-sim was not produced by the build; nothing to run." >&2
    exit 1
fi

if [ "$#" -eq 0 ]; then
    set -- --level builtin --ticks 640 --characters 8 --seed 1 --format jsonl
fi
echo "==== run: build/keel-sim $* ====" >&2
exec build/keel-sim "$@"
