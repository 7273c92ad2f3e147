#!/usr/bin/env bash
# keel: format the C sources with clang-format (.clang-format). MIT licence, see LICENSE.
#
# Usage: scripts/format.sh           format every tracked .c and .h file in place
#        scripts/format.sh --check   change nothing; list the files that differ
#                                    from the style and exit 1 if any does
# Generated files are left as their generator writes them
# (sim/src/angle_table.c: tools/gen_angle_table.py). Needs clang-format
# (Debian clang-format, 14; scripts/setup.sh installs it) and git.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

check=0
case ${1:-} in
"") ;;
--check) check=1 ;;
*)
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
    ;;
esac
if ! command -v clang-format >/dev/null 2>&1; then
    echo "format: clang-format not found (apt-get install clang-format, or scripts/setup.sh)" >&2
    exit 2
fi

# the tracked C files, without the generated ones
mapfile -t files < <(git ls-files -- '*.c' '*.h' | grep -v -x -e 'sim/src/angle_table.c')

if [ "$check" -eq 0 ]; then
    printf '%s\0' "${files[@]}" | xargs -0 -n 32 -P 2 clang-format -i --style=file
    echo "format: ${#files[@]} files formatted"
    exit 0
fi

# 64 files per clang-format, one run at a time (their lines never
# interleave); a file that differs is named in its "FILE:LINE:COL: error:"
# lines
mapfile -t differ < <(printf '%s\0' "${files[@]}" | xargs -0 -n 64 sh -c \
    'clang-format --dry-run -Werror --style=file "$@" 2>&1 >/dev/null | sed -n "s/^\([^:]*\):[0-9]*:[0-9]*: error: .*/\1/p"' check |
    sort -u)
if [ "${#differ[@]}" -ne 0 ]; then
    printf '%s\n' "${differ[@]}"
    echo "format: ${#differ[@]} of ${#files[@]} files differ from .clang-format (scripts/format.sh formats them)" >&2
    exit 1
fi
echo "format: ${#files[@]} files follow .clang-format"
