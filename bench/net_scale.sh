#!/usr/bin/env bash
# keel benchmark: real processes at scale. MIT licence, see LICENSE.
#
# One keel-server on 127.0.0.1, light clients (keel-client --bots 0 --light N)
# spread over several processes, and full predicting bots (keel-client
# --bots K) in one more; everything over loopback, bounded in count and time
# (each process has --ticks or --duration, and is killed past a deadline).
# Prints a table of the figures beside their targets.
#
#   bench/net_scale.sh                 64 light clients in 4 processes + 2 bots, 30 s
#   bench/net_scale.sh --soak 1800     30 minutes with churn through keel-relay:
#                                      resident memory of the server and of the
#                                      long-lived clients, sampled every 10 s
#
# Options: --build DIR (default build), --seconds S (scale run, default 30),
# --light N (default 64), --procs P (light processes, default 4), --full K
# (default 2), --soak S, --out DIR (default a temporary folder, kept).
# Exit status: 0 the run completed (the table says which targets were met),
# 1 a process failed to start or finish, 2 bad usage.
set -u
cd "$(dirname "$0")/.."
BUILD=build SECONDS_RUN=30 LIGHT=64 PROCS=4 FULL=2 SOAK=0 OUT=""
usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?}; shift ;;
    --seconds) SECONDS_RUN=${2:?}; shift ;;
    --light) LIGHT=${2:?}; shift ;;
    --procs) PROCS=${2:?}; shift ;;
    --full) FULL=${2:?}; shift ;;
    --soak) SOAK=${2:?}; shift ;;
    --out) OUT=${2:?}; shift ;;
    --help) usage; exit 0 ;;
    *) echo "net_scale.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
for v in "$SECONDS_RUN" "$LIGHT" "$PROCS" "$FULL" "$SOAK"; do
    case "$v" in '' | *[!0-9]*) echo "net_scale.sh: bad number '$v'" >&2; exit 2 ;; esac
done
[ "$PROCS" -ge 1 ] && [ "$SECONDS_RUN" -ge 5 ] || { echo "net_scale.sh: --procs >= 1 and --seconds >= 5" >&2; exit 2; }
for p in keel-server keel-client keel-relay; do
    [ -x "$BUILD/$p" ] || { echo "net_scale.sh: $BUILD/$p is not built (cmake --build $BUILD)" >&2; exit 1; }
done
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/keel_net_scale_XXXXXX)
mkdir -p "$OUT"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    for f in "$OUT"/churn*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null; done
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# num FILE KEY [which]: a number after "KEY": in a file (the first; "last": the last).
num() {
    grep -o "\"$2\":-\{0,1\}[0-9.e+]*" "$1" 2>/dev/null | { [ "${3:-}" = last ] && tail -1 || head -1; } | cut -d: -f2
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# start_server DURATION_S: the server on a free port; sets SV_PID, SV_PORT.
start_server() {
    "$BUILD/keel-server" --bind 127.0.0.1 --port 0 --insecure --max-clients 256 --max-per-address 256 --stats-json \
        --stats-interval 5 --duration "$1" >"$OUT/server.json" 2>"$OUT/server.err" &
    SV_PID=$!
    PIDS+=("$SV_PID")
    SV_PORT=""
    for _ in $(seq 250); do
        SV_PORT=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$OUT/server.err" 2>/dev/null | cut -d: -f2)
        [ -n "$SV_PORT" ] && return 0
        sleep 0.04
    done
    echo "net_scale.sh: the server did not start: $(cat "$OUT/server.err")" >&2
    exit 1
}

# wait_pid PID SECONDS: wait for it, at most that long (then kill it); 1 if killed.
wait_pid() {
    for _ in $(seq $(($2 * 10))); do
        kill -0 "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return 0; }
        sleep 0.1
    done
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    return 1
}

# The full bots' figures from their summary (file $1).
full_figures() {
    local f=$1 bots
    bots=$(sed 's/\],"seconds".*//' "$f")
    FULL_HASH=$(num "$f" hash_mismatches last)
    FULL_UNEXPLAINED=$(sed 's/.*"seconds"//' "$f" | grep -o '"unexplained":[0-9]*' | cut -d: -f2)
    FULL_EXTRA=$(echo "$bots" | grep -o '"full_states":[0-9]*' | cut -d: -f2 | awk '{s += $1 - 1} END {print s + 0}')
    FULL_UP=$(echo "$bots" | grep -o '"up_wire_Bps":[0-9]*' | cut -d: -f2 | awk '{s += $1; n++} END {print n ? int(s / n) : 0}')
    FULL_DOWN=$(echo "$bots" | grep -o '"down_wire_Bps":[0-9]*' | cut -d: -f2 | awk '{s += $1; n++} END {print n ? int(s / n) : 0}')
}

mark() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == "<=") ? v <= t : v == t; print ok ? "met" : "MISSED" }'; }

scale_run() {
    local ticks=$((SECONDS_RUN * 64)) per=$(((LIGHT + PROCS - 1) / PROCS)) left=$LIGHT i pids=() status=0
    local load_before
    load_before=$(cut -d' ' -f1-3 /proc/loadavg)
    start_server $((SECONDS_RUN + 40))
    for i in $(seq "$PROCS"); do
        local n=$((left < per ? left : per))
        left=$((left - n))
        [ "$n" -gt 0 ] || continue
        "$BUILD/keel-client" --port "$SV_PORT" --bots 0 --light "$n" --ticks "$ticks" --seed $((i * 1000)) \
            >"$OUT/light$i.json" 2>"$OUT/light$i.err" &
        pids+=($!)
    done
    if [ "$FULL" -gt 0 ]; then
        "$BUILD/keel-client" --port "$SV_PORT" --bots "$FULL" --ticks "$ticks" >"$OUT/full.json" 2>"$OUT/full.err" &
        pids+=($!)
    fi
    PIDS+=("${pids[@]}")
    for p in "${pids[@]}"; do
        wait_pid "$p" $((SECONDS_RUN + 30)) || status=1
    done
    kill -TERM "$SV_PID"
    wait_pid "$SV_PID" 10
    local joined played lup ldown
    played=$(cat "$OUT"/light*.json | grep -o '"played":[0-9]*' | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
    lup=$(cat "$OUT"/light*.json | grep -o '"light":{[^}]*' | grep -o '"up_wire_Bps":[0-9]*' | cut -d: -f2 | awk '{s += $1; n++} END {print n ? int(s / n) : 0}')
    ldown=$(cat "$OUT"/light*.json | grep -o '"light":{[^}]*' | grep -o '"down_wire_Bps":[0-9]*' | cut -d: -f2 | awk '{s += $1; n++} END {print n ? int(s / n) : 0}')
    local s="$OUT/server.json"
    local sum
    sum=$(grep '"summary":1' "$s")
    [ -n "$sum" ] || { echo "net_scale.sh: no server summary in $s" >&2; return 1; }
    echo "$sum" >"$OUT/summary.json"
    local secs med p99 max worst subst late joined_sv
    secs=$(num "$OUT/summary.json" seconds)
    med=$(num "$OUT/summary.json" tick_ms_median)
    p99=$(num "$OUT/summary.json" tick_ms_p99)
    max=$(num "$OUT/summary.json" tick_ms_max)
    # the worst 5-s interval after the first (the joins)
    worst=$(grep '^{"t":' "$s" | awk -F'"tick_ms_p99":' 'NR > 1 {split($2, a, ","); if (a[1] > w) w = a[1]} END {printf "%.3f", w}')
    subst=$(num "$OUT/summary.json" substituted)
    late=$(num "$OUT/summary.json" late)
    joined_sv=$(num "$OUT/summary.json" joined)
    local clients=$((LIGHT + FULL))
    full_figures "$OUT/full.json"
    printf '\nkeel net_scale: %d light clients in %d processes + %d full bots, one keel-server, 127.0.0.1, %d s (%d ticks)\n' \
        "$LIGHT" "$PROCS" "$FULL" "$SECONDS_RUN" "$ticks"
    printf '%-52s %12s  %-10s %s\n' figure value target ""
    row() { printf '%-52s %12s  %-10s %s\n' "$1" "$2" "$3" "$4"; }
    row "server tick median, ms (whole run)" "$med" "" ""
    row "server tick p99, ms (whole run)" "$p99" "<= 2" "$(mark "$p99" 2 '<=')"
    row "server tick p99, ms (worst 5-s interval after joins)" "$worst" "<= 2" "$(mark "$worst" 2 '<=')"
    row "server tick max, ms" "$max" "" ""
    row "server tick CPU time median / p99, ms (its thread)" "$(num "$OUT/summary.json" tick_cpu_ms_median) / $(num "$OUT/summary.json" tick_cpu_ms_p99)" "" ""
    row "clients joined (server) / light clients that played" "$joined_sv / $played" "$clients / $LIGHT" ""
    row "light client up, B/s on the wire (mean)" "$lup" "" ""
    row "light client down, B/s on the wire (mean)" "$ldown" "" ""
    row "full bot up, B/s on the wire (mean)" "$FULL_UP" "" ""
    row "full bot down, B/s on the wire (mean)" "$FULL_DOWN" "" ""
    row "server in / out per client, B/s on the wire" \
        "$(awk -v b="$(num "$OUT/summary.json" in_wire_bytes)" -v s="$secs" -v c="$clients" 'BEGIN {printf "%.0f", b / s / c}') / $(awk -v b="$(num "$OUT/summary.json" out_wire_bytes)" -v s="$secs" -v c="$clients" 'BEGIN {printf "%.0f", b / s / c}')" "" ""
    row "commands substituted (server)" "$subst" "" ""
    row "commands late (server)" "$late" "" ""
    row "full bots: hash mismatches" "$FULL_HASH" "0" "$(mark "$FULL_HASH" 0 '==')"
    row "full bots: unexplained mispredictions" "$FULL_UNEXPLAINED" "0" "$(mark "$FULL_UNEXPLAINED" 0 '==')"
    row "full bots: full states after the first" "$FULL_EXTRA" "0" "$(mark "$FULL_EXTRA" 0 '==')"
    echo "(load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores)"
    echo "(outputs in $OUT)"
    return $status
}

# ---- the soak ------------------------------------------------------------------------------

# churn_slot K END: from 10 + 5K s on (the joins spread out) until END (epoch seconds), a keel-client with 16 light
# clients through the relay, again and again: each plays 15 to 45 s; one in
# three is killed with SIGKILL on the way (a silent leave of 16), one in six
# stopped with SIGSTOP for 8 s (the server times them out; they find their
# connections gone when they wake and exit), the others finish and say
# goodbye. 1 to 5 s between two.
churn_slot() {
    local k=$1 end=$2 n=0 play fate pid
    RANDOM=$((k * 7919))
    sleep $((10 + 5 * k))
    while [ "$(date +%s)" -lt "$end" ]; do
        play=$((15 + RANDOM % 31))
        fate=$((RANDOM % 6))
        "$BUILD/keel-client" --port "$RELAY_PORT" --bots 0 --light 16 --ticks $((play * 64)) \
            --seed $((k * 100000 + n * 100)) >/dev/null 2>>"$OUT/churn$k.err" &
        pid=$!
        echo "$pid" >"$OUT/churn$k.pid"
        n=$((n + 1))
        case $fate in
        0 | 1) sleep $((2 + RANDOM % play)); kill -9 "$pid" 2>/dev/null; echo "killed" >>"$OUT/churn$k.log" ;;
        2) sleep $((2 + RANDOM % play)); kill -STOP "$pid" 2>/dev/null; sleep 8; kill -CONT "$pid" 2>/dev/null
           echo "stopped" >>"$OUT/churn$k.log" ;;
        *) echo "clean" >>"$OUT/churn$k.log" ;;
        esac
        wait_pid "$pid" $((play + 30)) || echo "hung" >>"$OUT/churn$k.log"
        sleep $((1 + RANDOM % 5))
    done
}

soak_run() {
    local warm=$((SOAK / 4 < 120 ? SOAK / 4 : 120)) t0 end k
    start_server $((SOAK + 90))
    "$BUILD/keel-relay" --server "127.0.0.1:$SV_PORT" --listen 0 --latency 20 --jitter 5 --loss 1 --dup 0.5 \
        --reorder 0.5 --max-clients 1024 --client-idle 15 --duration $((SOAK + 80)) --stats-json 0 --seed 5 \
        >"$OUT/relay.json" 2>"$OUT/relay.err" &
    local relay=$!
    PIDS+=("$relay")
    RELAY_PORT=""
    for _ in $(seq 250); do
        RELAY_PORT=$(num "$OUT/relay.json" port)
        [ -n "$RELAY_PORT" ] && break
        sleep 0.04
    done
    [ -n "$RELAY_PORT" ] || { echo "net_scale.sh: the relay did not start" >&2; return 1; }
    t0=$(date +%s)
    end=$((t0 + SOAK))
    "$BUILD/keel-client" --port "$RELAY_PORT" --bots "$FULL" --ticks 0 >"$OUT/full.json" 2>"$OUT/full.err" &
    local full=$!
    sleep 5
    "$BUILD/keel-client" --port "$RELAY_PORT" --bots 0 --light 16 --ticks 0 --seed 7 \
        >"$OUT/steady.json" 2>"$OUT/steady.err" &
    local steady=$!
    PIDS+=("$full" "$steady")
    local slots=()
    for k in 1 2 3; do
        churn_slot "$k" "$end" 2>/dev/null & # (no "Killed" notices from its jobs)
        slots+=($!)
    done
    PIDS+=("${slots[@]}")
    printf 't_s\tserver_kB\tfull_kB\tsteady_kB\n' >"$OUT/rss.tsv"
    while [ "$(date +%s)" -lt "$end" ]; do
        sleep 10
        printf '%d\t%s\t%s\t%s\n' $(($(date +%s) - t0)) "$(rss_kb "$SV_PID")" "$(rss_kb "$full")" \
            "$(rss_kb "$steady")" >>"$OUT/rss.tsv"
    done
    for k in "${!slots[@]}"; do
        kill -9 "${slots[$k]}" 2>/dev/null
        kill -9 "$(cat "$OUT/churn$((k + 1)).pid" 2>/dev/null)" 2>/dev/null
        wait "${slots[$k]}" 2>/dev/null
    done 2>/dev/null
    kill -TERM "$full" "$steady"
    wait_pid "$full" 30
    wait_pid "$steady" 30
    kill -TERM "$SV_PID" "$relay"
    wait_pid "$SV_PID" 10
    wait_pid "$relay" 10
    full_figures "$OUT/full.json"
    local killed stopped clean
    killed=$(cat "$OUT"/churn*.log 2>/dev/null | grep -c killed)
    stopped=$(cat "$OUT"/churn*.log 2>/dev/null | grep -c stopped)
    clean=$(cat "$OUT"/churn*.log 2>/dev/null | grep -c clean)
    grep '"summary":1' "$OUT/server.json" >"$OUT/summary.json"
    # resident memory: at the end of the warm-up, at the end, the most after it
    growth() {
        awk -F'\t' -v c="$1" -v w="$warm" 'NR > 1 && $1 >= w { if (base == "") base = $c; last = $c; if ($c > hi) hi = $c }
            END { printf "%s kB -> %s kB (growth %d kB, most %s kB)", base, last, last - base, hi }' "$OUT/rss.tsv"
    }
    delta() {
        awk -F'\t' -v c="$1" -v w="$warm" 'NR > 1 && $1 >= w { if (base == "") base = $c; last = $c } END { print last - base }' "$OUT/rss.tsv"
    }
    printf '\nkeel net_scale soak: %d s through keel-relay (20 ms +0..5 ms each way, 1%% loss, 0.5%% dup, 0.5%% reorder);\n' "$SOAK"
    printf '%d full bots and 16 light clients for the whole run, 3 x 16 light clients churning\n' "$FULL"
    printf '(%d processes killed -9, %d stopped 8 s, %d finished cleanly); memory after a %d-s warm-up\n\n' \
        "$killed" "$stopped" "$clean" "$warm"
    row() { printf '%-40s %-58s %-8s %s\n' "$1" "$2" "$3" "$4"; }
    row "server resident memory" "$(growth 2)" "<= 1024" "$(mark "$(delta 2)" 1024 '<=')"
    row "full bots' process resident memory" "$(growth 3)" "<= 1024" "$(mark "$(delta 3)" 1024 '<=')"
    row "steady light process resident memory" "$(growth 4)" "<= 1024" "$(mark "$(delta 4)" 1024 '<=')"
    row "server: joined / left / dropped" "$(num "$OUT/summary.json" joined) / $(num "$OUT/summary.json" left) / $(num "$OUT/summary.json" dropped_clients)" "" ""
    row "server tick median / p99 / max, ms" "$(num "$OUT/summary.json" tick_ms_median) / $(num "$OUT/summary.json" tick_ms_p99) / $(num "$OUT/summary.json" tick_ms_max)" "" ""
    row "full bots: hash mismatches" "$FULL_HASH" "0" "$(mark "$FULL_HASH" 0 '==')"
    row "full bots: unexplained mispredictions" "$FULL_UNEXPLAINED" "0" "$(mark "$FULL_UNEXPLAINED" 0 '==')"
    row "full bots: full states after the first" "$FULL_EXTRA" "" ""
    echo "(outputs in $OUT; memory samples in $OUT/rss.tsv)"
}


if [ "$SOAK" -gt 0 ]; then
    soak_run
else
    scale_run
fi
