#!/usr/bin/env bash
# keel benchmark: the attacker table at full strength. MIT licence, see
# LICENSE. See docs/attacks.md.
#
# Runs tests/test_attack.c's cases (one keel-server --key with bots playing
# throughout, keel-attack and keel-relay --flip against it, all on 127.0.0.1)
# with the handshake flood at 10,000 requests a second for 10 s instead of
# the test's 3 s, and prints the attacker table (case, datagrams sent, their
# size, slots taken, replies, the largest reply, what the server counted) and
# the server's figures: tick p99 and its cost per handshake datagram as it
# measured them. Everything is bounded in count and time.
#
#   bench/attack.sh [--build DIR] [--seconds S]   S: the flood's seconds, 1..10 (default 10)
#
# Exit status: 0 every case passed its checks, 1 one failed (the output says
# which), 2 bad usage.
set -u
cd "$(dirname "$0")/.."
BUILD=build FLOOD=10
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=${2:?}; shift ;;
    --seconds) FLOOD=${2:?}; shift ;;
    --help) usage; exit 0 ;;
    *) echo "attack.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
case "$FLOOD" in '' | *[!0-9]*) echo "attack.sh: bad number '$FLOOD'" >&2; exit 2 ;; esac
if [ "$FLOOD" -lt 1 ] || [ "$FLOOD" -gt 10 ]; then
    echo "attack.sh: --seconds is 1..10" >&2
    exit 2
fi
if [ ! -x "$BUILD/test_attack" ]; then
    echo "attack.sh: $BUILD/test_attack is not built (cmake --build $BUILD --target test_attack)" >&2
    exit 1
fi
log=$(mktemp /tmp/keel_attack_bench_XXXXXX)
KEEL_ATTACK_FLOOD_SECONDS=$FLOOD "$BUILD/test_attack" --verbose --jobs 1 >"$log" 2>&1
rc=$?
echo "keel attacker table (flood: 10000 requests/s for $FLOOD s; bots playing throughout)"
sed -n 's/^\[----\] //p' "$log" |
    grep -E '^(case  |expired|token|damaged|captured|bits|flood|spoofed|server: tick|rate limited|flips:|keel-server: handshake)' |
    sed 's/^/  /'
grep -E '^\[(FAIL|SKIP)|Assertion Failed|^\[----\]   ' "$log" | sed 's/^/  /'
grep -E '^\[====\] Synthesis' "$log" | sed 's/^\[====\] /  /'
rm -f "$log"
[ "$rc" -eq 0 ] || exit 1
