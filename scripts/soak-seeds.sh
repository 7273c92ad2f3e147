#!/usr/bin/env bash
# keel: the soak test over any range of seeds, gathered into a table.
# MIT licence, see LICENSE.
#
#   scripts/soak-seeds.sh [--jobs N] 1-1000 [OUT [CRITERION-OPTIONS...]]
#   scripts/soak-seeds.sh --table FILE...   # the table of lines already made
#
# Runs build/test_soak (tests/test_soak.c) with KEEL_SOAK_SEEDS set to the
# first argument ("1-1000", "3,7,20-40"): every seed's capsule, box and
# cylinder runs and its pile of 200, on the built-in level, on the real
# maps in ../shared/levels (or $KEEL_LEVELS_DIR) and on the LibreQuake .map
# levels in its librequake folder, with the maps' respawn variant, the five
# levels side by side (--jobs N: how many levels at once,
# default 3; 1 on a machine others share; --filter soak/zdm2 after OUT runs
# one level). Every run's line is kept in OUT (default build/soak-seeds.txt);
# the table printed at the end counts, per level and shape, the runs that
# broke each check and the worst figures, and two outcomes that are not
# failures: "open", walkers that left the level through open space (off an
# open edge: their path crossed no surface), and "respawns" (the respawn
# variant). One seed costs about 13 s of CPU on the development VM, so
# 1-1000 takes about two hours on two cores. Build first (scripts/test.sh, or cmake --build build --target
# test_soak). Exits 1 when any run failed.
set -euo pipefail

# The table: one row per level and shape, from the soak-table lines of the
# files named.
table() {
    awk '
/^soak-table/ {
    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
    key = f["level"] " " f["shape"]
    if (!(key in runs)) order[++n] = key
    runs[key]++
    if (f["verdict"] != "ok") {
        failed[key]++
        v = f["verdict"]; gsub(/FAIL\(|\)/, "", v)
        m = split(v, c, ",")
        for (j = 1; j <= m; j++) { bad[key, c[j]]++; classes[c[j]] = 1 }
        if (length(first[key]) < 60) first[key] = first[key] " " f["seed"]
    }
    opened[key] += f["open"]; resp[key] += f["respawns"]
    if (f["ref_mm"] + 0 > worst_ref[key]) worst_ref[key] = f["ref_mm"] + 0
    if (f["pair_mm"] + 0 > worst_pair[key]) worst_pair[key] = f["pair_mm"] + 0
}
END {
    printf "%-20s %6s %6s %8s %8s %7s %6s %6s %8s %6s %7s %10s %10s %6s %8s  %s\n", "level shape", "runs", "failed", "depth", "depth_ref", "crossing", "fall", "escape", "pair_1mm", "stuck", "respawn", "worst mm", "pair mm", "open", "respawns", "first failing seeds"
    total = 0; totalf = 0
    for (i = 1; i <= n; i++) {
        k = order[i]
        printf "%-20s %6d %6d %8d %8d %7d %6d %6d %8d %6d %7d %10.3f %10.3f %6d %8d %s\n", k, runs[k], failed[k], bad[k, "depth_keel"], bad[k, "depth_ref"], bad[k, "crossing"], bad[k, "fall"], bad[k, "escape"], bad[k, "pair_1mm"], bad[k, "stuck"], bad[k, "respawn"], worst_ref[k], worst_pair[k], opened[k], resp[k], first[k]
        total += runs[k]; totalf += failed[k]
    }
    printf "%d runs, %d failed\n", total, totalf
}' "$@"
}

if [ "${1:-}" = --table ]; then
    shift
    [ $# -gt 0 ] || {
        echo "soak-seeds: --table FILE... (the lines of earlier runs)" >&2
        exit 2
    }
    table "$@"
    exit 0
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=3
if [ "${1:-}" = --jobs ]; then
    jobs=${2:?soak-seeds: --jobs N}
    shift 2
fi
case $jobs in '' | *[!0-9]* | 0)
    echo "soak-seeds: --jobs takes a count of 1 or more, not '$jobs'" >&2
    exit 2
    ;;
esac
seeds=${1:?usage: scripts/soak-seeds.sh [--jobs N] SEEDS [OUT]   (SEEDS: 1-1000, 3,7,20-40)}
out=${2:-build/soak-seeds.txt}
shift $(($# < 2 ? $# : 2))
bin=${KEEL_SOAK_BIN:-build/test_soak}
[ -x "$bin" ] || {
    echo "soak-seeds: $bin is not built (cmake --build build --target test_soak)" >&2
    exit 2
}
rc=0
KEEL_SOAK_SEEDS=$seeds "$bin" --jobs "$jobs" "$@" 2>"$out.log" | grep --line-buffered '^soak-' >"$out" || rc=$?
table "$out"
grep -h '^soak-summary' "$out" || true
echo "lines: $out; the test log: $out.log"
exit $((rc != 0))
