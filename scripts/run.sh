#!/usr/bin/env bash
# keel: set up, build and run the main job. MIT licence, see LICENSE.
#
# The main job is a networked game on this machine: keel-server on loopback
# and keel-client bots connected to it over ENet, in secure mode (a
# development key made with keel-token keygen in a temporary folder; the
# server takes it with --key, the bots issue their connect tokens with it,
# --token-key; docs/security.md). It shows the server's live
# stats (a line every 5 seconds) for about 30 seconds, then the bots leave
# and it ends with a summary: the server's closing line and the bots' JSON
# summary (round trip, input margin, mispredictions by cause, re-simulated
# ticks, bytes per second up and down).
#
#   scripts/run.sh                      8 random-walk bots, about 30 s
#   scripts/run.sh --forever            until Ctrl-C
#   scripts/run.sh --bots 16 --bot pusher --seconds 60
#
# Options: --bots N (1-64, default 8), --bot random|circuit|pusher|idle
# (default random), --seconds S (default 30), --forever. The scenario runner
# is unchanged: build/keel-sim (docs/keel-sim.md) after this script has built.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bots=8
bot=random
seconds=30
forever=0
usage() {
    echo "usage: scripts/run.sh [--bots N] [--bot random|circuit|pusher|idle] [--seconds S] [--forever]" >&2
    exit 2
}
while [ "$#" -gt 0 ]; do
    case $1 in
    --bots) [ "$#" -ge 2 ] || usage; bots=$2; shift 2 ;;
    --bot) [ "$#" -ge 2 ] || usage; bot=$2; shift 2 ;;
    --seconds) [ "$#" -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --forever) forever=1; shift ;;
    -h | --help) usage ;;
    *) echo "run.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case $bots in '' | *[!0-9]*) usage ;; esac
case $seconds in '' | *[!0-9]*) usage ;; esac

scripts/setup.sh >&2

echo "==== build: keel-server, keel-client, keel-token, keel-sim (build/, -j2) ====" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF \
    -DKEEL_CHECKS=ON >&2
cmake --build build -j 2 --target keel-server keel-client keel-token keel-sim >&2

tmp=$(mktemp -d)
server_pid=""
client_pid=""
cleanup() {
    [ -n "$client_pid" ] && kill "$client_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

duration=$((seconds + 5))
ticks=$((seconds * 64))
if [ "$forever" -eq 1 ]; then
    duration=0
    ticks=0
fi

build/keel-token keygen "$tmp/dev.key" >/dev/null
echo "==== run: keel-server on 127.0.0.1 and $bots '$bot' bots for $([ "$forever" -eq 1 ] && echo "ever (Ctrl-C stops)" || echo "$seconds s") ====" >&2
echo "==== secure mode: a development key (keel-token keygen, deleted at the end); keel-server --key, the bots --token-key ====" >&2
build/keel-server --bind 127.0.0.1 --port 0 --key "$tmp/dev.key" --max-per-address 64 --stats-interval 5 \
    --duration "$duration" >"$tmp/server.out" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 250); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$tmp/server.out" | head -n 1)
    [ -n "$port" ] && break
    sleep 0.02
done
if [ -z "$port" ]; then
    cat "$tmp/server.out" >&2
    echo "run.sh: keel-server did not start" >&2
    exit 1
fi
tail -n +1 -f "$tmp/server.out" --pid "$server_pid" &

build/keel-client --port "$port" --token-key "$tmp/dev.key" --bots "$bots" --bot "$bot" --ticks "$ticks" \
    >"$tmp/client.json" &
client_pid=$!
status=0
wait "$client_pid" || status=$?
client_pid=""
kill -TERM "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
sleep 0.2
echo
echo "==== summary ===="
echo "bots (keel-client JSON):"
cat "$tmp/client.json"
exit "$status"
