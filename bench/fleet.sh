#!/usr/bin/env bash
# keel benchmark: many keel-servers on one machine. MIT licence, see LICENSE.
#
# Starts N keel-servers on 127.0.0.1, each on a free port (--port 0: each
# says its port in its JSON) with --metrics on a free port, and one
# keel-client process of B bots against each; everything over loopback,
# bounded in count and time (--duration on every server, the clients end
# when their server does, and anything left is killed at the end). Prints a
# table: per server the clients joined, its tick times (median, p99, max,
# from its own summary), its resident memory (VmRSS from /proc, sampled
# two thirds into the run) and whether /healthz answered 200 then; and the
# total: what one machine holds. The bots run on the same machine and take
# their share of the CPU.
#
#   bench/fleet.sh                     8 servers x 4 bots, 30 s
#
# Options: --build DIR (default build), --servers N (1..64, default 8),
# --bots B (per server, 1..32, default 4), --seconds S (default 30),
# --out DIR (default a temporary folder, kept).
# Exit status: 0 the run completed, 1 a process failed to start or finish,
# 2 bad usage.
set -u
cd "$(dirname "$0")/.."
BUILD=build SERVERS=8 BOTS=4 SECONDS_RUN=30 OUT=""
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?}; shift ;;
    --servers) SERVERS=${2:?}; shift ;;
    --bots) BOTS=${2:?}; shift ;;
    --seconds) SECONDS_RUN=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    --help) usage; exit 0 ;;
    *) echo "fleet.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for v in "$SERVERS" "$BOTS" "$SECONDS_RUN"; do
    case "$v" in '' | *[!0-9]*) echo "fleet.sh: bad number '$v'" >&2; exit 2 ;; esac
done
if [ "$SERVERS" -lt 1 ] || [ "$SERVERS" -gt 64 ] || [ "$BOTS" -lt 1 ] || [ "$BOTS" -gt 32 ] ||
    [ "$SECONDS_RUN" -lt 6 ] || [ "$SECONDS_RUN" -gt 3600 ]; then
    echo "fleet.sh: --servers 1..64, --bots 1..32, --seconds 6..3600" >&2
    exit 2
fi
for p in keel-server keel-client; do
    [ -x "$BUILD/$p" ] || { echo "fleet.sh: $BUILD/$p is not built (cmake --build $BUILD)" >&2; exit 1; }
done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/keel_fleet_XXXXXX)
mkdir -p "$OUT"

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; }
trap cleanup EXIT
trap 'exit 1' INT TERM

# num FILE KEY [which]: a number after "KEY": in a file (the first; "last": the last).
num() {
    grep -o "\"$2\":-\{0,1\}[0-9.e+]*" "$1" 2>/dev/null | { [ "${3:-}" = last ] && tail -1 || head -1; } | cut -d: -f2
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# healthz PORT: the HTTP status of GET /healthz (000: no answer within 2 s)
healthz() { curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$1/healthz" 2>/dev/null || echo 000; }

SV=() CL=() PORT=() MPORT=()
for i in $(seq 1 "$SERVERS"); do
    "$BUILD/keel-server" --bind 127.0.0.1 --port 0 --insecure --metrics 127.0.0.1:0 --duration "$SECONDS_RUN" \
        --max-per-address 64 --stats-json --stats-interval 5 >"$OUT/server$i.json" 2>"$OUT/server$i.txt" &
    SV[i]=$!
    PIDS+=("$!")
done
for i in $(seq 1 "$SERVERS"); do
    for _ in $(seq 1 200); do # a hang guard: the JSON line with the ports comes first
        PORT[i]=$(num "$OUT/server$i.json" port)
        [ -n "${PORT[i]}" ] && break
        sleep 0.05
    done
    [ -n "${PORT[i]}" ] || { echo "fleet.sh: server $i printed no port (see $OUT/server$i.txt)" >&2; exit 1; }
    MPORT[i]=$(num "$OUT/server$i.json" metrics_port)
    "$BUILD/keel-client" --port "${PORT[i]}" --bots "$BOTS" --ticks 0 --seed "$i" >"$OUT/client$i.txt" 2>&1 &
    CL[i]=$!
    PIDS+=("$!")
done
sleep $((SECONDS_RUN * 2 / 3))
RSS=() HEALTH=()
for i in $(seq 1 "$SERVERS"); do
    RSS[i]=$(rss_kb "${SV[i]}")
    HEALTH[i]=$(healthz "${MPORT[i]}")
done
failed=0
for i in $(seq 1 "$SERVERS"); do
    for _ in $(seq 1 $((SECONDS_RUN * 10 + 300))); do # a hang guard: --duration, then a drain of at most 2 s
        kill -0 "${SV[i]}" 2>/dev/null || break
        sleep 0.1
    done
    wait "${SV[i]}" || { echo "fleet.sh: server $i failed (see $OUT/server$i.txt)" >&2; failed=1; }
done
for i in $(seq 1 "$SERVERS"); do
    for _ in $(seq 1 100); do kill -0 "${CL[i]}" 2>/dev/null || break; sleep 0.1; done
done

cores=$(nproc 2>/dev/null || echo "?")
printf 'keel fleet on one machine: %d keel-servers x %d bots, %d s, 64 Hz, %s cores (the bots run here too)\n' \
    "$SERVERS" "$BOTS" "$SECONDS_RUN" "$cores"
printf '%-7s %6s %8s %13s %10s %10s %9s %8s\n' server port clients "tick ms p50" "p99" "max" "RSS MiB" healthz
total_rss=0 total_clients=0 worst_p99=0
for i in $(seq 1 "$SERVERS"); do
    f="$OUT/server$i.json"
    sum=$(grep '"summary":1' "$f")
    [ -n "$sum" ] || { echo "fleet.sh: server $i has no summary (see $f)" >&2; failed=1; continue; }
    joined=$(echo "$sum" | grep -o '"joined":[0-9]*' | cut -d: -f2)
    p50=$(echo "$sum" | grep -o '"tick_ms_median":[0-9.]*' | cut -d: -f2)
    p99=$(echo "$sum" | grep -o '"tick_ms_p99":[0-9.]*' | cut -d: -f2)
    max=$(echo "$sum" | grep -o '"tick_ms_max":[0-9.]*' | cut -d: -f2)
    printf '%-7s %6s %8s %13s %10s %10s %9.1f %8s\n' "$i" "${PORT[i]}" "$joined" "$p50" "$p99" "$max" \
        "$(echo "${RSS[i]} / 1024" | bc -l)" "${HEALTH[i]}"
    total_rss=$((total_rss + RSS[i]))
    total_clients=$((total_clients + joined))
    worst_p99=$(echo "if ($p99 > $worst_p99) $p99 else $worst_p99" | bc -l)
done
printf '%-7s %6s %8s %13s %10s %10s %9.1f\n' total "" "$total_clients" "" "$(printf '%.3f' "$worst_p99")" "" \
    "$(echo "$total_rss / 1024" | bc -l)"
echo "(p99 total: the worst server's; tick budget at 64 Hz: 15.625 ms; files in $OUT)"
exit "$failed"
