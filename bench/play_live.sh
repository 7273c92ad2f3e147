#!/usr/bin/env bash
# keel benchmark: keel-play live on a crowded real map. MIT licence, see LICENSE.
#
# One keel-server on 127.0.0.1 with the map zdm2, 63 light clients driven by
# bots (keel-client --bots 0 --light 63: they walk the map's polygons), and
# keel-play connected as the 64th character, in a 1280x720 window on a
# virtual display (Xvfb) drawn by Mesa's software renderer (llvmpipe), for a
# bounded time (keel-play --quit-after). keel-play measures itself and
# reports in its summary line; this script prints those figures beside their
# targets:
#   - the client's simulation work per frame (prediction, rollback
#     re-simulation and smoothing, on the monotonic clock): median and p99,
#     target p99 <= 4 ms;
#   - draw calls per frame (median, max);
#   - frame time (median, p99): the time from the start of a frame to its
#     swap, with software rendering -- it says what this machine's CPU
#     renders, not what a GPU would.
# Never run by ctest (figures, not pass/fail).
#
#   bench/play_live.sh                    20 s of play
#   bench/play_live.sh --seconds 60 --light 31
#
# Options: --build DIR (default build), --seconds S (default 20), --light N
# (default 63), --out DIR (default a temporary folder, kept).
# Needs keel-server, keel-client and keel-play built, Xvfb, and the shared map
# (../shared/levels or $KEEL_LEVELS_DIR, docs/levels.md).
# Exit status: 0 the run completed (the table says which targets were met),
# 1 something failed to start or finish, 2 bad usage.
set -u
cd "$(dirname "$0")/.."
BUILD=build SECONDS_RUN=20 LIGHT=63 OUT=""
usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?}; shift ;;
    --seconds) SECONDS_RUN=${2:?}; shift ;;
    --light) LIGHT=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    --help) usage; exit 0 ;;
    *) echo "play_live.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for v in "$SECONDS_RUN" "$LIGHT"; do
    case "$v" in '' | *[!0-9]*) echo "play_live.sh: bad number '$v'" >&2; exit 2 ;; esac
done
[ "$SECONDS_RUN" -ge 5 ] && [ "$LIGHT" -le 250 ] || { echo "play_live.sh: --seconds >= 5, --light <= 250" >&2; exit 2; }
for p in keel-server keel-client keel-play; do
    [ -x "$BUILD/$p" ] || { echo "play_live.sh: $BUILD/$p is not built (cmake --build $BUILD --target $p)" >&2; exit 1; }
done
command -v Xvfb >/dev/null || { echo "play_live.sh: Xvfb is not installed (scripts/setup.sh)" >&2; exit 1; }
LEVEL="${KEEL_LEVELS_DIR:-$(pwd)/../shared/levels}/sauerbraten_zdm2.obj"
[ -f "$LEVEL" ] || { echo "play_live.sh: no map at $LEVEL (docs/levels.md)" >&2; exit 1; }
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/keel_play_live_XXXXXX)
mkdir -p "$OUT"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    sleep 0.5
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    wait 2>/dev/null
}
trap cleanup EXIT

# The virtual display: Xvfb picks a free number and writes it to fd 3.
exec 3>"$OUT/display"
Xvfb -displayfd 3 -screen 0 1280x720x24 -nolisten tcp 2>"$OUT/xvfb.err" &
PIDS+=($!)
for _ in $(seq 1 500); do grep -q . "$OUT/display" && break; sleep 0.02; done
exec 3>&-
DISPLAY_NUM=$(head -n 1 "$OUT/display")
[ -n "$DISPLAY_NUM" ] || { echo "play_live.sh: Xvfb did not start: $(cat "$OUT/xvfb.err")" >&2; exit 1; }

LIMIT=$((SECONDS_RUN + 60))
"$BUILD/keel-server" --bind 127.0.0.1 --port 0 --insecure --level "$LEVEL" --max-clients 256 --max-per-address 256 --duration "$LIMIT" \
    >"$OUT/server.out" 2>&1 &
PIDS+=($!)
SV_PORT=""
for _ in $(seq 1 1500); do
    SV_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$OUT/server.out" | head -n 1)
    [ -n "$SV_PORT" ] && break
    kill -0 "${PIDS[1]}" 2>/dev/null || break
    sleep 0.02
done
[ -n "$SV_PORT" ] || { echo "play_live.sh: keel-server did not start: $(cat "$OUT/server.out")" >&2; exit 1; }
if [ "$LIGHT" -gt 0 ]; then
    "$BUILD/keel-client" --port "$SV_PORT" --level "$LEVEL" --bots 0 --light "$LIGHT" --ticks 0 \
        >"$OUT/light.json" 2>"$OUT/light.err" &
    PIDS+=($!)
    sleep 2 # let them join: keel-play then sees the crowd from its first frame
fi
DISPLAY=":$DISPLAY_NUM" LIBGL_ALWAYS_SOFTWARE=1 timeout "$LIMIT" "$BUILD/keel-play" \
    --connect "127.0.0.1:$SV_PORT" --level "$LEVEL" --size 1280x720 --no-vsync --quit-after "$SECONDS_RUN" \
    --name bench >"$OUT/play.json" 2>"$OUT/play.err"
rc=$?
[ $rc -eq 0 ] || { echo "play_live.sh: keel-play exit $rc: $(cat "$OUT/play.err")" >&2; exit 1; }

# The summary's figures: num KEY (top level) and sub OBJECT KEY.
num() { grep -o "\"$1\":[-0-9.e]*" "$OUT/play.json" | head -n 1 | cut -d: -f2; }
sub() { grep -o "\"$1\":{[^}]*}" "$OUT/play.json" | grep -o "\"$2\":[-0-9.e]*" | cut -d: -f2; }
met() { awk -v v="$1" -v t="$2" 'BEGIN {print (v <= t) ? "met" : "MISSED"}'; }
chars=$(grep -o 'clients [0-9]*' "$OUT/server.out" | tail -n 1)
row() { printf '%-44s %14s  %-10s %s\n' "$1" "$2" "$3" "$4"; }
printf '\nkeel play_live: keel-play + %d light bots (64 characters with keel-play at --light 63), zdm2, 1280x720,\n' "$LIGHT"
printf 'Xvfb + Mesa llvmpipe, %d s of play; %s frames, %s ticks played\n' "$SECONDS_RUN" "$(num frames)" "$(num ticks)"
row figure value target ""
row "simulation work per frame, median (ms)" "$(sub work_ms median)" "" ""
row "simulation work per frame, p99 (ms)" "$(sub work_ms p99)" "<= 4" "$(met "$(sub work_ms p99)" 4)"
row "draw calls per frame, median / max" "$(sub draw_calls median) / $(sub draw_calls max)" "" ""
row "frame time, median (ms)" "$(sub frame_ms median)" "" ""
row "frame time, p99 (ms)" "$(sub frame_ms p99)" "" ""
row "round trip (ms)" "$(num rtt_ms)" "" ""
row "rollbacks / re-simulated ticks" "$(num rollbacks) / $(num resimulated_ticks)" "" ""
row "hash mismatches" "$(num hash_mismatches)" "0" "$(met "$(num hash_mismatches)" 0)"
row "unexplained mispredictions (own, remote)" "$(sub own_mispredictions unexplained), $(sub remote_mispredictions unexplained)" "0" ""
echo "files: $OUT${chars:+ (last stats line of the server: $chars)}"
