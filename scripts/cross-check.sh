#!/usr/bin/env bash
# keel: the cross-build determinism matrix. MIT licence, see LICENSE.
#
# Builds keel-sim and keel-replay with every compiler, optimisation level and
# architecture below, then
#   1. runs the same keel-sim scenarios on each and requires the same final
#      state hash everywhere;
#      (the built-in and generated levels, keel's levels/arena.map, and zdm2 and
#      LibreQuake's lqdm1.map when ../shared/levels has them; one runs the
#      example game, tests/games/tag, linked in: --game tag; one keel-arena,
#      games/arena, on levels/arena.map: --game arena);
#   2. makes recordings with the reference build (x86-64 gcc -O2): a server
#      session with bots (joins, leaves, pushing, platforms) and keel-sim
#      scenarios on the built-in level, a generated level and both real maps,
#      and one with the example game (a format-4 recording, verified --game tag)
#      and one with keel-arena on levels/arena.map (verified --game arena);
#      every build then verifies every recording tick by tick (keel-replay
#      verify: every tick's world hash and every character's hash);
#   3. the other way round: the win64 and wasm builds each record the
#      built-in crowd with platforms, and the reference build verifies that
#      recording and diffs it with its own (keel-replay diff: a match over
#      the same number of ticks).
#
# Builds: x86-64 gcc -O2, gcc -O0, gcc -O3 -march=native, clang -O2,
# clang -O3 -flto, gcc with UBSan (-fsanitize=undefined, no -fwrapv), tcc
# (a C11 compiler without gcc's builtins or <stdatomic.h>: the portable
# paths), i386 (a cross compiler, run natively or under qemu-i386), arm64 and
# big-endian s390x (under qemu-user), win64 (MinGW-w64 gcc -O2, static, run
# under Wine in a prefix of its own, build-cross/wine) and wasm (Emscripten
# emcc -O2 without threads, run under Node with the host's files). win64's
# and wasm's libraries come from scripts/cross-deps.sh (built once, then
# kept in build-cross/deps-TARGET).
#
# Installs the cross compilers, qemu, Wine, Emscripten, Node and the
# foreign-architecture libraries it needs when run as root; otherwise it says
# what is missing and skips: exit 77, or 1 with KEEL_CROSS_REQUIRED=1. Exit 0:
# all agree; 1: a build disagrees, a verify fails or times out, or a build
# failed.
#
# Usage: scripts/cross-check.sh [--full] [--ticks N]
#   (default)  the CI size: 320-tick scenarios, a 1-minute session with 8 bots;
#              each run under qemu, Wine or Node is capped at
#              $KEEL_CROSS_TIMEOUT seconds (default 600), and a run that hits
#              the cap fails
#   --full     the whole matrix at full length: 20-minute session with 16
#              bots, 3,840-tick scenarios on the real maps, no time cap
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
ticks=320
full=0
session_bots=8
session_ticks=3840 # 1 minute at 64 Hz
map_ticks=640
while [ $# -gt 0 ]; do
    case $1 in
    --ticks)
        ticks=${2:?--ticks needs a number}
        shift 2
        ;;
    --full)
        full=1
        session_bots=16
        session_ticks=76800 # 20 minutes
        map_ticks=3840
        shift
        ;;
    *)
        echo "usage: scripts/cross-check.sh [--full] [--ticks N]" >&2
        exit 2
        ;;
    esac
done
timeout_s=${KEEL_CROSS_TIMEOUT:-600}
[ "$full" -eq 0 ] || timeout_s=0
out=build-cross
mkdir -p "$out"

skip() {
    echo "cross-check: skipped: $*" >&2
    if [ "${KEEL_CROSS_REQUIRED:-0}" = 1 ]; then
        exit 1
    fi
    exit 77
}

# ---- packages ---------------------------------------------------------------------
need=(gcc-i686-linux-gnu gcc-aarch64-linux-gnu gcc-s390x-linux-gnu qemu-user clang tcc
      gcc-mingw-w64-x86-64 wine64 emscripten nodejs
      libc6-dev-i386-cross libc6-dev-arm64-cross libc6-dev-s390x-cross
      linux-libc-dev-i386-cross linux-libc-dev-arm64-cross linux-libc-dev-s390x-cross
      libfixmath-dev:i386 libxxhash-dev:i386 libzstd-dev:i386
      libfixmath-dev:arm64 libxxhash-dev:arm64 libzstd-dev:arm64
      libfixmath-dev:s390x libxxhash-dev:s390x libzstd-dev:s390x)
missing=()
for p in "${need[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        skip "not root; to run it, as root: dpkg --add-architecture i386; dpkg --add-architecture arm64;" \
             "dpkg --add-architecture s390x; apt-get update; apt-get install ${missing[*]}"
    fi
    echo "cross-check: installing ${missing[*]}" >&2
    for a in i386 arm64 s390x; do
        dpkg --print-foreign-architectures | grep -qx "$a" || dpkg --add-architecture "$a"
    done
    # One index mid-sync can fail `update` while the install still works.
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || echo "cross-check: warning: apt-get update failed" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        skip "could not install ${missing[*]}"
fi

# ---- builds -----------------------------------------------------------------------
# name | compiler | flags for everything | flags for sim/ only | static or dynamic | libdir
builds=(
    "x86_64-gcc|gcc|-O2|-mgeneral-regs-only|static|/usr/lib/x86_64-linux-gnu"
    "x86_64-gcc-O0|gcc|-O0|-mgeneral-regs-only|static|/usr/lib/x86_64-linux-gnu"
    "x86_64-gcc-O3-native|gcc|-O3 -march=native|-mgeneral-regs-only|static|/usr/lib/x86_64-linux-gnu"
    "x86_64-clang|clang|-O2|-mgeneral-regs-only|static|/usr/lib/x86_64-linux-gnu"
    "x86_64-clang-O3-lto|clang|-O3 -flto|-mgeneral-regs-only|static|/usr/lib/x86_64-linux-gnu"
    "x86_64-gcc-ubsan|gcc|-O1 -g -fsanitize=undefined -fno-sanitize-recover=all|-mgeneral-regs-only|dynamic|/usr/lib/x86_64-linux-gnu"
    "x86_64-tcc|tcc|||dynamic|/usr/lib/x86_64-linux-gnu"
    "i386|i686-linux-gnu-gcc|-O2||static|/usr/lib/i386-linux-gnu"
    "arm64|aarch64-linux-gnu-gcc|-O2|-mgeneral-regs-only|static|/usr/lib/aarch64-linux-gnu"
    "s390x|s390x-linux-gnu-gcc|-O2||static|/usr/lib/s390x-linux-gnu"
    "win64|x86_64-w64-mingw32-gcc|-O2|-mgeneral-regs-only|static|$out/deps-win64/lib"
    "wasm|emcc|-O2||static|$out/deps-wasm/lib"
)
names=()
for b in "${builds[@]}"; do names+=("${b%%|*}"); done

reference=x86_64-gcc
common=(-std=c11 -Iserver/include -Isim/include -Isim/src -Inet/include -Inet/src -Irec/include -Irec/src
        -Iclient/include -Iapp -Itests/games/tag -Igames/arena -DKEEL_CHECKS=1 -DKEEL_CROSS_BUILD=1)
# Everything keel-replay and keel-sim need besides their own folders: the core,
# the recordings, the protocol's encoders (not the ENet host) and the client
# library (keel-replay replays client recordings). The connect tokens and
# the secure handshake and sealing (net/src/token*.c, handshake.c,
# seal.c, frame.c, host_enet_gate.c: libsodium and ENet) are left out: nothing these programs run reads a
# token, and their bytes do not depend on the simulation.
lib_sources() {
    # no ENet on these builds: the host that cannot be made
    echo net/src/absent/host_enet_absent.c
    ls sim/src/*.c
    [ -d rec/src ] && ls rec/src/*.c
    # shellcheck disable=SC2010 # the tree's own file names
    ls net/src/*.c | grep -v -e '/host_enet[^/]*\.c$' -e '/token[^/]*\.c$' -e '/handshake\.c$' \
        -e '/seal\.c$' -e '/frame\.c$'
    ls client/src/*.c
    ls server/src/*.c
    ls app/*.c
    ls tests/games/tag/tag.c # the example game, linked in (--game tag)
    ls games/arena/arena.c games/arena/arena_level.c games/arena/arena_rules.c games/arena/arena_judge.c # keel-arena (--game arena)
}
have_replay=0
[ -d tools/keel-replay ] && ls tools/keel-replay/*.c >/dev/null 2>&1 && have_replay=1

# What a build's programs are called after keel-sim-NAME etc.: win64's are
# .exe, wasm's are the .js loader beside its .wasm module.
suffix() {
    case $1 in
    win64) echo .exe ;;
    wasm) echo .js ;;
    esac
}

build() { # one line of the table
    local name cc flags simflags link libdir
    IFS='|' read -r name cc flags simflags link libdir <<<"$1"
    local dir="$out/obj-$name"
    rm -rf "$dir"
    mkdir -p "$dir/lib" "$dir/keel-sim" "$dir/keel-replay" "$dir/keel-server" "$dir/bench_tick"
    local f extra
    # Windows and WebAssembly have no Debian library packages: their headers
    # and libraries are scripts/cross-deps.sh's, beside the lib folder.
    if [ "$libdir" = "$out/deps-$name/lib" ]; then
        flags+=" -I$out/deps-$name/include"
    fi
    # The compiler for the objects: emcc's own clang with the flags emcc
    # gives it (the same object files, without emcc's Python start-up, a
    # second or more per file).
    local ccc=$cc
    [ "$name" = wasm ] && ccc="clang $(emcc --cflags)"
    # shellcheck disable=SC2086
    for f in $(lib_sources); do
        extra=""
        case $f in sim/*) extra=$simflags ;; esac
        echo "$ccc ${common[*]} $flags $extra -c $f -o $dir/lib/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')"
    done >"$dir/compile.txt"
    for f in tools/keel-sim/*.c; do
        echo "$ccc ${common[*]} $flags -c $f -o $dir/keel-sim/$(basename "$f" .c).o"
    done >>"$dir/compile.txt"
    if [ "$have_replay" -eq 1 ]; then
        for f in tools/keel-replay/*.c; do
            echo "$ccc ${common[*]} $flags -c $f -o $dir/keel-replay/$(basename "$f" .c).o"
        done >>"$dir/compile.txt"
    fi
    # The reference build also makes the server session's recording; its
    # keel-server reads key files and names handshake refusals, so it also
    # gets the token and handshake sources (and the machine's libsodium).
    if [ "$name" = "$reference" ]; then
        for f in server/keel-server/*.c net/src/token*.c net/src/handshake.c net/src/seal.c; do
            echo "$ccc ${common[*]} -Iserver/include -Iserver/src $flags -c $f -o $dir/keel-server/$(basename "$f" .c).o"
        done >>"$dir/compile.txt"
    fi
    # The tick-timing figure (section 4) is taken on Linux and on Windows.
    if [ "$name" = "$reference" ] || [ "$name" = win64 ]; then
        echo "$ccc ${common[*]} $flags -c bench/bench_tick.c -o $dir/bench_tick/bench_tick.o" >>"$dir/compile.txt"
    fi
    if ! xargs -P 2 -I{} sh -c '{}' <"$dir/compile.txt" >"$dir/build.log" 2>&1; then
        echo "cross-check: build $name failed:" >&2
        tail -n 30 "$dir/build.log" >&2
        return 1
    fi
    local libs=("$libdir/libxxhash.a")
    [ -f "$libdir/liblibfixmath.a" ] && libs=("$libdir/liblibfixmath.a" "${libs[@]}")
    [ -f "$libdir/libzstd.a" ] && libs+=("$libdir/libzstd.a")
    local ldflags=(-pthread -lm)
    # WebAssembly: no threads (the recording writer and verify run on the
    # calling thread), the host's files through Node (NODERAWFS), its
    # environment (keel_node_env.js), the exit code passed on to Node's.
    [ "$name" = wasm ] && ldflags=(-lm -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1
                                   --pre-js app/keel_node_env.js)
    [ "$link" = static ] && [ "$name" != wasm ] && ldflags+=(-static)
    # Windows: getaddrinfo (app/keel_addr.c) is Winsock's
    [ "$name" = win64 ] && ldflags+=(-lws2_32)
    local prog
    for prog in keel-sim keel-replay keel-server bench_tick; do
        [ "$prog" = keel-replay ] && [ "$have_replay" -eq 0 ] && continue
        [ "$prog" = keel-server ] && [ "$name" != "$reference" ] && continue
        [ -f "$dir/$prog/$prog.o" ] || [ "$prog" != bench_tick ] || continue
        local extra_libs=()
        [ "$prog" = keel-server ] && extra_libs=(-lsodium)
        # shellcheck disable=SC2086
        if ! $cc $flags "$dir/$prog"/*.o "$dir"/lib/*.o -o "$out/$prog-$name$(suffix "$name")" "${libs[@]}" "${extra_libs[@]}" "${ldflags[@]}" \
            >>"$dir/build.log" 2>&1; then
            echo "cross-check: linking $prog for $name failed:" >&2
            tail -n 30 "$dir/build.log" >&2
            return 1
        fi
    done
}

# Windows runs under Wine in a prefix of its own. Making it (wineboot, about
# 25 s, mostly waiting) goes on while the builds compile; one wineserver
# then stays up for every run (-p: persistent), so a run starts in a fifth
# of a second instead of three, and goes when this script exits.
wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
export WINEPREFIX="$root/$out/wine" WINEDEBUG=-all
unset DISPLAY
wineboot_pid=""
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    "$wine" wineboot --init >"$out/wineboot.log" 2>&1 &
    wineboot_pid=$!
fi
trap '"$wineserver" -k 2>/dev/null || true' EXIT
# Debian's emcc finds its node modules only through NODE_PATH.
export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}

started=$(date +%s)
# The win64 and wasm libraries (scripts/cross-deps.sh; the first time about a
# minute each, part of it fetching and unpacking Debian's zstd source) are
# made while the native builds compile; the first build that needs them
# waits for them.
(for t in win64 wasm; do
    t0=$(date +%s)
    scripts/cross-deps.sh "$t" || exit 1
    echo "cross-check: $t libraries ready in $(($(date +%s) - t0)) s (beside the builds)"
done) >"$out/deps.log" 2>&1 &
deps_pid=$!
took=()
for b in "${builds[@]}"; do
    if [ -n "$deps_pid" ] && [[ $b == *"|$out/deps-"* ]]; then
        wait "$deps_pid" || { cat "$out/deps.log" >&2; skip "scripts/cross-deps.sh could not build the win64 and wasm libraries"; }
        grep '^cross-check:' "$out/deps.log"
        deps_pid=""
    fi
    t0=$(date +%s)
    build "$b" || exit 1
    took+=("${b%%|*}($(($(date +%s) - t0))s)")
done
if [ -n "$wineboot_pid" ] && ! wait "$wineboot_pid"; then
    echo "cross-check: wineboot failed:" >&2
    tail -n 5 "$out/wineboot.log" >&2
    exit 1
fi
"$wineserver" -p 2>/dev/null || true # already up (a run by hand) is as good
echo "cross-check: built ${took[*]} in $(($(date +%s) - started)) s"

# Some x86-64 kernels are built without 32-bit support: run the i386 build
# under qemu-i386 there.
i386_runner=()
if ! "$out/keel-sim-i386" --help >/dev/null 2>&1; then
    echo "cross-check: note: this kernel does not run i386 binaries; using qemu-i386" >&2
    i386_runner=(qemu-i386)
fi

run() { # build-name program args...
    local name=$1 prog=$2
    shift 2
    local cap=()
    case $name in
    arm64 | s390x | i386 | win64 | wasm) [ "$timeout_s" -gt 0 ] && cap=(timeout "$timeout_s") ;;
    esac
    case $name in
    arm64) "${cap[@]}" qemu-aarch64 "$out/$prog-$name" "$@" ;;
    s390x) "${cap[@]}" qemu-s390x "$out/$prog-$name" "$@" ;;
    i386) "${cap[@]}" "${i386_runner[@]}" "$out/$prog-$name" "$@" ;;
    # Windows writes stdout in text mode (\r\n); the lines are compared
    # as text, so the \r goes.
    win64) "${cap[@]}" "$wine" "$out/$prog-$name.exe" "$@" | tr -d '\r' ;;
    wasm) "${cap[@]}" node --no-experimental-fetch "$out/$prog-$name.js" "$@" ;;
    *) "$out/$prog-$name" "$@" ;;
    esac
}

# ---- 1. final hashes of keel-sim scenarios --------------------------------------------
scenarios=("--level builtin --characters 8 --seed 1"
           "--level builtin --characters 8 --seed 2 --shape box"
           "--level builtin --characters 8 --seed 6 --shape cylinder"
           "--mode probes --level builtin --characters 16 --seed 3"
           "--level generated --characters 8 --seed 4"
           "--level levels/arena.map --characters 8 --seed 7"
           "--level builtin --characters 8 --seed 9 --game tag"
           "--level levels/arena.map --platforms --characters 8 --seed 10 --game arena")
maps=${KEEL_LEVELS_DIR:-../shared/levels}
have_maps=0
if [ -f "$maps/sauerbraten_zdm2.obj" ]; then
    have_maps=1
    scenarios+=("--level $maps/sauerbraten_zdm2.obj --scale 0.12 --characters 8 --seed 5")
    if [ -f "$maps/librequake/lqdm1.map" ]; then
        scenarios+=("--level $maps/librequake/lqdm1.map --characters 8 --seed 8")
    fi
else
    echo "cross-check: note: $maps is absent; the real-map scenarios are skipped" >&2
fi

# Two runs at a time (each is one thread), every final hash in
# $out/hashes/SCENARIO-INDEX.BUILD; a run that fails leaves it empty (and
# fails its line).
rm -rf "$out/hashes"
mkdir -p "$out/hashes"
i=0
for sc in "${scenarios[@]}"; do
    for name in "${names[@]}"; do
        [ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
        # shellcheck disable=SC2086
        (run "$name" keel-sim $sc --ticks "$ticks" --quiet 2>/dev/null | sed -n 's/^final_hash //p' \
            >"$out/hashes/$i.$name" || true) &
    done
    i=$((i + 1))
done
wait
fail=0
i=0
for sc in "${scenarios[@]}"; do
    ref=""
    line="cross-check: ${sc}:"
    for name in "${names[@]}"; do
        h=$(cat "$out/hashes/$i.$name")
        [ -n "$ref" ] || ref=$h
        line+=" $name=$h"
        if [ -z "$h" ] || [ "$h" != "$ref" ]; then
            fail=1
        fi
    done
    echo "$line"
    i=$((i + 1))
done
if [ "$fail" -ne 0 ]; then
    echo "cross-check: FAILED: the builds disagree on a final hash" >&2
    exit 1
fi
echo "cross-check: final hashes agree on every build (${names[*]})"

# ---- 2. recordings, verified tick by tick on every build --------------------------------
if [ "$have_replay" -eq 0 ]; then
    echo "cross-check: note: keel-replay is not in this tree; recordings are not checked" >&2
    exit 0
fi
recs="$out/recordings"
rm -rf "$recs"
mkdir -p "$recs"
# name | how the reference build makes it
recordings=(
    "session|keel-server --virtual-bots $session_bots --ticks $session_ticks --churn --seed 1 --quiet"
    "crowd-platforms|keel-sim --level builtin --characters 24 --platforms --seed 11 --ticks $map_ticks --quiet"
    "box-crowd|keel-sim --level builtin --characters 16 --shape box --seed 12 --ticks $map_ticks --quiet"
    "cylinder-crowd|keel-sim --level builtin --characters 16 --shape cylinder --platforms --seed 16 --ticks $map_ticks --quiet"
    "generated|keel-sim --level generated --characters 8 --seed 13 --ticks $map_ticks --quiet"
    # keel's own .map level with its movers and water (the level's digest covers its entities)
    "arena-map|keel-sim --level levels/arena.map --characters 8 --platforms --seed 18 --ticks $map_ticks --quiet"
    "tag-game|keel-sim --level builtin --characters 8 --game tag --seed 18 --ticks $ticks --quiet"
    # keel-arena on arena.map: its spawn points, jump pad, teleporter and items from the level's entities
    "arena-game|keel-sim --level levels/arena.map --platforms --characters 8 --game arena --seed 19 --ticks $map_ticks --quiet"
)
if [ "$have_maps" -eq 1 ]; then
    recordings+=("zdm2|keel-sim --level $maps/sauerbraten_zdm2.obj --scale 0.12 --characters 8 --seed 14 --ticks $map_ticks --quiet")
    recordings+=("cylinder-zdm2|keel-sim --level $maps/sauerbraten_zdm2.obj --scale 0.12 --characters 8 --shape cylinder --seed 17 --ticks $map_ticks --quiet")
    [ -f "$maps/sauerbraten_pandora.obj" ] &&
        recordings+=("pandora|keel-sim --level $maps/sauerbraten_pandora.obj --scale 0.12 --characters 8 --seed 15 --ticks $map_ticks --quiet")
fi
for r in "${recordings[@]}"; do
    rname=${r%%|*}
    cmd=${r#*|}
    prog=${cmd%% *}
    args=${cmd#* }
    # shellcheck disable=SC2086
    if ! run "$reference" "$prog" $args --record "$recs/$rname.krec" >"$recs/$rname.log" 2>&1; then
        echo "cross-check: FAILED: recording $rname ($cmd):" >&2
        tail -n 5 "$recs/$rname.log" >&2
        exit 1
    fi
done

# A number or hex string from keel-replay info --json: json_field JSON KEY
json_field() {
    echo "$1" | grep -o "\"$2\":\"\{0,1\}[0-9a-f]*" | head -n 1 | sed 's/.*://; s/"//g'
}

# One verify: its output in RECS/NAME.BUILD.out, "exit-code seconds" in
# RECS/NAME.BUILD.rc. verify_one recording-name build-name
verify_one() {
    local t0 rc=0
    t0=$(date +%s)
    local game=() # a recording made with a game verifies with it
    [[ $1 != tag-game ]] || game=(--game tag)
    [[ $1 != arena-game ]] || game=(--game arena)
    run "$2" keel-replay verify "$recs/$1.krec" --quiet "${game[@]}" >"$recs/$1.$2.out" 2>&1 || rc=$?
    echo "$rc $(($(date +%s) - t0))" >"$recs/$1.$2.rc"
}

# Every verify runs on one thread: two at a time keep both cores busy (the
# time each line shows is its own run's, beside the other one).
started=$(date +%s)
for r in "${recordings[@]}"; do
    for name in "${names[@]}"; do
        [ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
        verify_one "${r%%|*}" "$name" &
    done
done
wait
for r in "${recordings[@]}"; do
    rname=${r%%|*}
    f="$recs/$rname.krec"
    info=$(run "$reference" keel-replay info "$f" --json)
    ticks_in=$(json_field "$info" ticks)
    players=$(json_field "$info" players)
    last=$(json_field "$info" last_hash)
    line="cross-check: recording $rname ($ticks_in ticks, $players players, last hash $last):"
    for name in "${names[@]}"; do
        read -r rc dt <"$recs/$rname.$name.rc"
        if [ "$rc" -eq 0 ]; then
            line+=" $name=ok(${dt}s)"
        else
            case $rc in
            124) line+=" $name=TIMEOUT(${timeout_s}s)" ;;
            1) line+=" $name=DIVERGED" ;;
            *) line+=" $name=FAILED($rc)" ;;
            esac
            echo "cross-check: $name on $rname: $(head -c 600 "$recs/$rname.$name.out")" >&2
            fail=1
        fi
    done
    echo "$line"
done
if [ "$fail" -ne 0 ]; then
    echo "cross-check: FAILED: a build does not reproduce a recording (keel-replay diff A --resim on that build names the field)" >&2
    exit 1
fi
echo "cross-check: every build reproduces every recording tick by tick (${#recordings[@]} recordings, $(($(date +%s) - started)) s)"

# ---- 3. recordings made on Windows and in WebAssembly, checked by the reference ---------
# The other way round: the win64 and wasm builds each record the built-in
# crowd with platforms; the reference build verifies that recording and
# diffs it with its own of the same scenario (tick by tick: world hashes,
# character hashes, keyframes), which must match over the same length.
started=$(date +%s)
r=${recordings[1]}
rname=${r%%|*}
cmd=${r#*|}
ref_info=$(run "$reference" keel-replay info "$recs/$rname.krec" --json)
for name in win64 wasm; do
    f="$recs/$rname.by-$name.krec"
    # shellcheck disable=SC2086
    if ! run "$name" ${cmd%% *} ${cmd#* } --record "$f" >"$f.log" 2>&1; then
        echo "cross-check: FAILED: $name could not record $rname ($cmd):" >&2
        tail -n 5 "$f.log" >&2
        exit 1
    fi
    info=$(run "$reference" keel-replay info "$f" --json)
    line="cross-check: recording $rname made by $name ($(json_field "$info" ticks) ticks, last hash $(json_field "$info" last_hash)):"
    t0=$(date +%s)
    rc=0
    run "$reference" keel-replay verify "$f" --quiet >"$f.verify.out" 2>&1 || rc=$?
    line+=" verify on $reference=$([ "$rc" -eq 0 ] && echo "ok($(($(date +%s) - t0))s)" || echo "FAILED($rc)")"
    [ "$rc" -eq 0 ] || fail=1
    rc=0
    run "$reference" keel-replay diff "$f" "$recs/$rname.krec" >"$f.diff.out" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ] && [ "$(json_field "$info" ticks)" = "$(json_field "$ref_info" ticks)" ]; then
        line+=" diff with $reference's=match"
    else
        line+=" diff with $reference's=DIFFERS($rc)"
        fail=1
    fi
    [ "$fail" -eq 0 ] || cat "$f.verify.out" "$f.diff.out" >&2
    echo "$line"
done
if [ "$fail" -ne 0 ]; then
    echo "cross-check: FAILED: a recording made on win64 or wasm does not match the reference build's" >&2
    exit 1
fi
echo "cross-check: the reference build reproduces the win64 and wasm recordings and they match its own ($(($(date +%s) - started)) s)"

# ---- 4. tick timing on Linux and on Windows (figures, not a test) -----------------------
# keel-server's 64 Hz pacing (absolute deadlines, keel_app_sleep_until_us)
# without network or simulation, 640 ticks (10 s) on each: the periods it
# achieved. Wine's timers go through its server, so the Windows figures are
# Wine's, not a Windows machine's. To take them by hand:
#   WINEPREFIX=$PWD/build-cross/wine wine64 build-cross/bench_tick-win64.exe --ticks 3840
# Both at once: they sleep nearly all the time.
for name in "$reference" win64; do
    run "$name" bench_tick --ticks 640 >"$out/bench_tick.$name.out" 2>&1 || echo "bench_tick failed" >>"$out/bench_tick.$name.out" &
done
wait
for name in "$reference" win64; do
    echo "cross-check: tick timing on $name: $(cat "$out/bench_tick.$name.out")"
done
