#!/usr/bin/env bash
# keel benchmark: bots that stall on a lossy link. MIT licence, see LICENSE.
#
# One keel-server (--insecure) on 127.0.0.1, keel-relay in front of it at
# 75 +- 20 ms each way with 5% loss, 1% duplication and 1% reordering, and one
# keel-client with 8 bots through the relay. After 4 s of play the client is
# stopped (SIGSTOP) for the stall, woken (SIGCONT), plays 10 s more and leaves.
# A bot is lost when keel-client reports it ("lost the connection", or "not
# playing after" --connect-timeout); each run prints how the bots' summaries end.
# A leave is unacknowledged when a bot's summary ends "left_unacknowledged".
#
#   bench/stall.sh                      20 runs of a 3 s stall, then 5 of an 8 s stall
#   bench/stall.sh --runs 2 --stall 3   a short check
#   bench/stall.sh --runs 20 --stall 0 --play 1 --bots 32   leaves on the lossy link
#
# Options: --build DIR (default build), --runs N (default: 20 at 3 s, 5 at 8 s),
# --stall S (one stall length instead of both; 0: none), --play S (seconds of play
# after the wake, default 10), --bots N (default 8). With KEEP=DIR in the
# environment, the logs of a run that lost a bot are kept there.
# Prints one line per run and the totals. Exit status: 0 no bot lost, 1 a bot lost
# or a process failed, 2 bad usage.
set -u
cd "$(dirname "$0")/.."
BUILD=build RUNS="" STALL="" BOTS=8 PLAY=10
usage() { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?}; shift ;;
    --runs) RUNS=${2:?}; shift ;;
    --stall) STALL=${2:?}; shift ;;
    --bots) BOTS=${2:?}; shift ;;
    --play) PLAY=${2:?}; shift ;;
    --help) usage; exit 0 ;;
    *) echo "stall.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
lost_total=0 runs_total=0 unacked_total=0
wait_port() { # the port a program printed ("listening on ADDR:PORT") in one of the files
    local p=""
    for _ in $(seq 100); do
        p=$(grep -ho 'listening on [0-9.]*:[0-9]*' "$@" 2>/dev/null | head -1 | grep -o '[0-9]*$')
        [ -n "$p" ] && break
        sleep 0.05
    done
    echo "$p"
}
one_run() { # stall seconds, run number
    local s=$1 r=$2
    "$BUILD/keel-server" --insecure --port 0 --bind 127.0.0.1 --stats-interval 0 --max-per-address 64 >"$OUT/sv.out" 2>"$OUT/sv.err" &
    local sv=$!
    local port
    port=$(wait_port "$OUT/sv.out" "$OUT/sv.err")
    "$BUILD/keel-relay" --server "127.0.0.1:$port" --seed "$r" --latency 75 --jitter 20 --loss 5 --dup 1 \
        --reorder 1 >"$OUT/relay.out" 2>"$OUT/relay.err" &
    local relay=$!
    local rport
    rport=$(wait_port "$OUT/relay.out" "$OUT/relay.err")
    "$BUILD/keel-client" --port "$rport" --bots "$BOTS" --ticks 0 --seed "$r" --connect-timeout 20 \
        >"$OUT/cl.out" 2>"$OUT/cl.err" &
    local cl=$!
    sleep 4
    kill -STOP $cl 2>/dev/null
    sleep "$s"
    kill -CONT $cl 2>/dev/null
    sleep "$PLAY"
    kill -INT $cl 2>/dev/null
    wait $cl
    kill -INT $relay $sv 2>/dev/null
    wait $relay $sv 2>/dev/null
    local lost
    lost=$(grep -c "lost the connection\|not playing after" "$OUT/cl.err")
    local ends
    ends=$(grep -o '"end":"[a-z_]*"' "$OUT/cl.out" | sort | uniq -c | tr '\n' ' ')
    local counted
    counted=$(grep -ho 'clients joined [0-9]*, left [0-9]*' "$OUT/sv.out" "$OUT/sv.err" | head -1)
    echo "stall ${s} s run $r: bots lost $lost; ends: $ends; server: $counted"
    if [ "$lost" -gt 0 ] && [ -n "${KEEP:-}" ]; then
        mkdir -p "$KEEP/stall-$s-$r" && cp "$OUT"/* "$KEEP/stall-$s-$r/"
    fi
    lost_total=$((lost_total + lost))
    unacked_total=$((unacked_total + $(grep -o '"end":"left_unacknowledged"' "$OUT/cl.out" | wc -l)))
    runs_total=$((runs_total + 1))
}
if [ -n "$STALL" ]; then
    for r in $(seq "${RUNS:-5}"); do one_run "$STALL" "$r"; done
else
    for r in $(seq "${RUNS:-20}"); do one_run 3 "$r"; done
    for r in $(seq "${RUNS:-5}"); do one_run 8 "$r"; done
fi
echo "stall.sh: $runs_total runs of $BOTS bots: $lost_total bots lost, $unacked_total leaves unacknowledged"
[ "$lost_total" -eq 0 ]
