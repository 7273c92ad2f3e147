#!/usr/bin/env bash
# keel tests: the programs' command lines (app/keel_opt.h, app/keel_addr.h).
# MIT licence, see LICENSE.
#
#   --opt=value as --opt value; fractions of a second where a duration is
#   asked for; an error is one line naming the option (no usage dump);
#   host names resolve (localhost) in keel-server's --bind, keel-client's
#   --server, keel-play's --connect, keel-relay's --server and keel-token's
#   --server; an IPv6-only host is refused saying ENet carries IPv4 only;
#   through keel-relay, a client issuing its own token joins a secure server
#   only when the token names the server's own address (--token-server);
#   --timeout (the silence that ends a connection) in keel-server,
#   keel-client and keel-play: its range, and a server and a client that
#   end a connection whose other side is stopped (SIGSTOP) after it, judged
#   by what they report.
# Registered in tests/CMakeLists.txt as test_options: test_options.sh <build dir>
set -uo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 <build dir>" >&2
    exit 2
fi
bin=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/keel-options.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
failed=0
fail() {
    echo "test_options: FAILED: $*" >&2
    failed=1
}

# expect <status> <pattern> <command...>: the exit status, a line of its
# output matching the pattern ("": any), and (status 2) one line, no usage
expect() {
    local want=$1 pattern=$2
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, not $want: $(head -c 400 "$tmp/err")"
    [ -z "$pattern" ] || cat "$tmp/out" "$tmp/err" | grep -qE -e "$pattern" ||
        fail "$*: no line matching '$pattern': $(head -c 400 "$tmp/err")"
    if [ "$want" -eq 2 ]; then
        ! grep -q "^usage:" "$tmp/err" || fail "$*: printed the whole usage"
        [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$*: more than one line on stderr"
    fi
}

# --opt=value, fractions, errors that name the option
expect 0 "final hash" "$bin/keel-server" --virtual-bots=2 --ticks=128 --stats-interval=0.1
expect 0 "final hash" "$bin/keel-server" --virtual-bots 2 --ticks 128 --stats-interval 0.1
expect 2 "keel-server: --port: 'x' is not a whole number in 0..65535" "$bin/keel-server" --insecure --port=x
expect 2 "keel-server: --stats-interval: '0.0001' is not a number of seconds" "$bin/keel-server" --insecure --stats-interval 0.0001
expect 2 "keel-server: --quiet: takes no value" "$bin/keel-server" --insecure --quiet=1
expect 2 "keel-server: --record: needs a value" "$bin/keel-server" --insecure --record --quiet
expect 2 "keel-server: unknown option '--bogus'" "$bin/keel-server" --bogus=1
expect 2 "keel-client: --connect-timeout: 'soon'" "$bin/keel-client" --connect-timeout=soon
expect 2 "keel-client: --bot: 'dance' is not random" "$bin/keel-client" --bot=dance
expect 2 "keel-token: --client-id: 'me' is not a whole number" "$bin/keel-token" issue --client-id=me
expect 2 "keel-token: unknown option '--jsn'" "$bin/keel-token" inspect --jsn x
expect 0 "final_hash" "$bin/keel-sim" --ticks=5 --characters=1 --quiet
expect 2 "keel-sim: --ticks: needs a value" "$bin/keel-sim" --ticks
expect 2 "keel-replay: option --quiet takes no value" "$bin/keel-replay" verify --quiet=1 x.krec
expect 2 "keel-attack: --rate: needs a value" "$bin/keel-attack" flood --server=127.0.0.1:5000 --rate
expect 2 "keel-relay: --control: takes no value" "$bin/keel-relay" --server=localhost:9 --control=1
expect 2 "keel-server: --timeout: '61' is not a number of seconds in 0.001..60.000" "$bin/keel-server" --insecure --timeout 61
expect 2 "keel-server: --timeout: '0' is not a number of seconds in 0.001..60.000" "$bin/keel-server" --insecure --timeout=0
expect 2 "keel-client: --timeout: '1.0005' is not a number of seconds in 0.001..60.000" "$bin/keel-client" --timeout 1.0005
if [ -x "$bin/keel-play" ]; then
    expect 2 "keel-play: --timeout: '60.5' is not a number of seconds in 0.001..60.000" "$bin/keel-play" --connect 127.0.0.1:9 --timeout 60.5
    expect 2 "keel-play: --connect: cannot resolve 'nosuch.invalid'" "$bin/keel-play" --connect=nosuch.invalid:27900
    expect 2 "keel-play: --speed: bad value 'fast'" "$bin/keel-play" --replay x --speed fast
fi

# host names
expect 2 "--bind: cannot resolve 'nosuch.invalid'" "$bin/keel-server" --insecure --bind nosuch.invalid
expect 2 "--bind: '::1' has no IPv4 address: ENet 1.3" "$bin/keel-server" --insecure --bind ::1
expect 2 "--server: cannot resolve 'nosuch.invalid'" "$bin/keel-client" --server nosuch.invalid
expect 2 "--server: 'nosuch.invalid:9' is not HOST:PORT" "$bin/keel-relay" --server nosuch.invalid:9

# start <name> <command...>: in the background, stdout to $tmp/<name>
start() {
    local name=$1
    shift
    "$@" >"$tmp/$name" 2>"$tmp/$name.err" &
    pids+=($!)
}
# port_of <file> <sed expression>: waits for the port line (up to 60 s, a
# hang guard: the servers and the relay run until this script ends and
# kills them, so no step depends on how fast a loaded machine is)
port_of() {
    local i p
    for i in $(seq 600); do
        p=$(sed -nE "$2" "$1" | head -n 1)
        [ -n "$p" ] && echo "$p" && return 0
        sleep 0.1
    done
    return 1
}

# a client by name: keel-server bound to localhost, keel-client to localhost
start insecure "$bin/keel-server" --insecure --bind=localhost --port=0 --duration=600 --stats-json --stats-interval=0
port=$(port_of "$tmp/insecure" 's/.*"port":([0-9]+).*/\1/p') || fail "keel-server printed no port"
expect 0 "" "$bin/keel-client" --server=localhost --port="$port" --ticks=64 --connect-timeout=60.5

# secure, through keel-relay: the token must list the server's own address
"$bin/keel-token" keygen "$tmp/key" >/dev/null || fail "keygen"
start secure "$bin/keel-server" --key "$tmp/key" --bind 127.0.0.1 --port 0 --duration 600 --stats-json --stats-interval 0
sport=$(port_of "$tmp/secure" 's/.*"port":([0-9]+).*/\1/p') || fail "the secure keel-server printed no port"
start relay "$bin/keel-relay" --server "localhost:$sport" --listen 0 --duration 600
rport=$(port_of "$tmp/relay" "s/.*listening on 127\\.0\\.0\\.1:([0-9]+),.*/\\1/p") || fail "keel-relay printed no port"
expect 1 "wrong server" "$bin/keel-client" --server localhost --port "$rport" --token-key "$tmp/key" --ticks 32 \
    --connect-timeout 60
expect 0 "" "$bin/keel-client" --server localhost --port "$rport" --token-key "$tmp/key" --ticks 32 \
    --connect-timeout 60 --token-server "localhost:$sport"
# keel-token names the server's own address by name too
expect 0 "" "$bin/keel-token" issue --key "$tmp/key" --client-id 7 --server "localhost:$sport" --out "$tmp/token"
expect 0 "" "$bin/keel-client" --server localhost --port "$rport" --token "$tmp/token" --ticks 32 --connect-timeout 60

# --timeout: a server that hears nothing from a stopped client for 1.5 s
# counts it timed out; a client that hears nothing from a stopped server for
# 1.5 s says so and exits 1 (each waits for the other's report, up to 60 s,
# a hang guard)
wait_for() { # <file> <pattern>
    local i
    for i in $(seq 600); do
        grep -qE -e "$2" "$1" && return 0
        sleep 0.1
    done
    return 1
}
start tsv "$bin/keel-server" --insecure --bind 127.0.0.1 --port 0 --duration 600 --stats-json --stats-interval 0.2 \
    --timeout 1.5 --max-per-address 8
tport=$(port_of "$tmp/tsv" 's/.*"port":([0-9]+).*/\1/p') || fail "the --timeout keel-server printed no port"
grep -q '"timeout_ms":1500' "$tmp/tsv" || fail "keel-server --timeout 1.5: no \"timeout_ms\":1500 in $(head -n 1 "$tmp/tsv")"
"$bin/keel-client" --port "$tport" --ticks 0 --connect-timeout 60 >"$tmp/stopped" 2>"$tmp/stopped.err" &
stopped=$!
pids+=("$stopped")
wait_for "$tmp/tsv" '"clients":1' || fail "the client to stop never joined"
kill -STOP "$stopped"
wait_for "$tmp/tsv" '"timed_out":1' || fail "keel-server --timeout 1.5 never counted the stopped client timed out"
kill -CONT "$stopped"
kill -INT "$stopped"
wait "$stopped"
start lsv "$bin/keel-server" --insecure --bind 127.0.0.1 --port 0 --duration 600 --stats-json --stats-interval 0.2
lport=$(port_of "$tmp/lsv" 's/.*"port":([0-9]+).*/\1/p') || fail "the second keel-server printed no port"
lsv=${pids[-1]}
"$bin/keel-client" --port "$lport" --ticks 0 --connect-timeout 60 --timeout 1.5 >"$tmp/lost" 2>"$tmp/lost.err" &
lost=$!
pids+=("$lost")
wait_for "$tmp/lsv" '"clients":1' || fail "the client of the server to stop never joined"
kill -STOP "$lsv"
for _ in $(seq 600); do kill -0 "$lost" 2>/dev/null || break; sleep 0.1; done
wait "$lost"
status=$?
kill -CONT "$lsv"
[ "$status" -eq 1 ] || fail "keel-client --timeout 1.5 with its server stopped exited $status, not 1"
grep -q "nothing heard from the server for 1.5 s" "$tmp/lost.err" ||
    fail "keel-client --timeout 1.5: $(head -c 400 "$tmp/lost.err")"

[ "$failed" -eq 0 ] || exit 1
echo "test_options: options, host names and tokens through a relay"
