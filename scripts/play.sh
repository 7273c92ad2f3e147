#!/usr/bin/env bash
# keel: play. MIT licence, see LICENSE.
#
# One command: install the packages (scripts/setup.sh), build keel-server,
# keel-client, keel-token and keel-play, start a keel-server on loopback with
# a few keel-client bots, open keel-play connected to it, and stop everything
# when keel-play's window closes (Esc twice, or closing the window). Secure
# mode: a development key made with keel-token keygen in the temporary
# folder; the server takes it with --key, the bots and keel-play issue their
# connect tokens with it (--token-key; docs/security.md).
#
#   scripts/play.sh                         4 random-walk bots on the built-in level
#   scripts/play.sh --bots 8 --bot pusher
#   scripts/play.sh --level zdm2            a real map (docs/levels.md; $KEEL_LEVELS_DIR)
#   scripts/play.sh --game arena            keel-arena's deathmatch on levels/arena.map (docs/arena.md):
#                                           left mouse the rail, right mouse the rocket
#   scripts/play.sh -- --chase --no-vsync   the rest goes to keel-play
#
# Options: --bots N (0-64, default 4), --bot random|circuit|pusher|idle|platforms
# (default random), --level builtin|NAME|PATH (default builtin; a NAME is
# sauerbraten_NAME.obj in the levels folder), --platforms (the built-in
# level's elevator and shuttle, for the server, the bots and keel-play),
# --game NAME|PATH (the server's game, for the server, the bots and keel-play;
# with --game arena the level defaults to levels/arena.map, and the bots are
# keel-client's fighting bots, --bot arena, when this keel-client has them:
# otherwise random walkers whose game commands are drawn at random).
# Anything after -- is passed to keel-play (keel-play --help). keel-play's
# summary (one JSON line) is printed at the end; the server's log is in the
# temporary folder shown while it runs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bots=4
bot=
level=
platforms=()
game=
usage() {
    echo "usage: scripts/play.sh [--bots N] [--bot MODE] [--level builtin|NAME|PATH] [--platforms] [--game NAME|PATH] [-- keel-play options]" >&2
    exit 2
}
while [ "$#" -gt 0 ]; do
    case $1 in
    --bots) [ "$#" -ge 2 ] || usage; bots=$2; shift 2 ;;
    --bot) [ "$#" -ge 2 ] || usage; bot=$2; shift 2 ;;
    --level) [ "$#" -ge 2 ] || usage; level=$2; shift 2 ;;
    --platforms) platforms=(--platforms); shift ;;
    --game) [ "$#" -ge 2 ] || usage; game=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) echo "play.sh: unknown option '$1'" >&2; usage ;;
    esac
done
case $bots in '' | *[!0-9]*) usage ;; esac
[ "$bots" -le 64 ] || usage

# keel-arena plays on its own level unless another is named.
if [ -z "$level" ]; then
    level=builtin
    [ "$game" = arena ] && level=levels/arena.map
fi
game_args=()
[ -n "$game" ] && game_args=(--game "$game")

# The level: built-in, a path, or a shared map's short name.
level_args=()
if [ "$level" != builtin ]; then
    if [ ! -f "$level" ]; then
        dir=${KEEL_LEVELS_DIR:-$(pwd)/../shared/levels}
        level="$dir/sauerbraten_$level.obj"
    fi
    if [ ! -f "$level" ]; then
        echo "play.sh: no level $level (docs/levels.md)" >&2
        exit 1
    fi
    level_args=(--level "$level")
fi

scripts/setup.sh >&2

echo "==== build: keel-server, keel-client, keel-token, keel-play (build/, -j2) ====" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF -DKEEL_CHECKS=ON >&2
cmake --build build -j 2 --target keel-server keel-client keel-token keel-play >&2

# The bots: keel-client's fighting bots for arena when it has them.
if [ -z "$bot" ]; then
    bot=random
    if [ "$game" = arena ]; then
        if build/keel-client --help | grep -q -- '--bot MODE.*arena'; then
            bot=arena
        else
            echo "==== this keel-client has no --bot arena: random walkers firing at random ====" >&2
        fi
    fi
fi

tmp=$(mktemp -d)
server_pid=""
bots_pid=""
cleanup() {
    [ -n "$bots_pid" ] && kill -TERM "$bots_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build/keel-token keygen "$tmp/dev.key" >/dev/null
echo "==== keel-server on 127.0.0.1 with $bots '$bot' bots${game:+, game $game} (log: $tmp/server.out) ====" >&2
echo "==== secure mode: a development key (keel-token keygen, deleted at the end); keel-server --key, the bots and keel-play --token-key ====" >&2
build/keel-server --bind 127.0.0.1 --port 0 --key "$tmp/dev.key" --max-per-address 65 --stats-interval 5 "${level_args[@]}" \
    "${platforms[@]}" "${game_args[@]}" >"$tmp/server.out" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 500); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$tmp/server.out" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.02
done
if [ -z "$port" ]; then
    cat "$tmp/server.out" >&2
    echo "play.sh: keel-server did not start" >&2
    exit 1
fi

if [ "$bots" -gt 0 ]; then
    build/keel-client --port "$port" --token-key "$tmp/dev.key" --bots "$bots" --bot "$bot" --ticks 0 "${level_args[@]}" "${platforms[@]}" \
        "${game_args[@]}" \
        >"$tmp/bots.json" 2>"$tmp/bots.err" &
    bots_pid=$!
fi

echo "==== keel-play --connect 127.0.0.1:$port --token-key (F1: help; Esc twice quits) ====" >&2
status=0
# client id 100: the bots are 1..64
build/keel-play --connect "127.0.0.1:$port" --token-key "$tmp/dev.key" --client-id 100 "${level_args[@]}" "${platforms[@]}" \
    "${game_args[@]}" "$@" || status=$?
exit "$status"
