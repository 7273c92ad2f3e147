#!/usr/bin/env bash
# keel: the browser verifier (web/, scripts/build-web.sh) checked in headless
# Chromium against the native keel-replay. MIT licence, see LICENSE.
#
# 1. builds the page (build-web/) and the native keel-sim, keel-sim-diverge
#    and keel-replay (build/, CMake, -j2; nothing to do when test.sh built
#    them);
# 2. records with the native build: a scene on the built-in level, one on a
#    generated level, one made by keel-sim-diverge (KEEL_INJECT_DIVERGENCE:
#    one bit of velocity.x of character 3 flips after tick 200) with full
#    state, which every normal build re-simulates differently from tick 200;
#    and, when the real maps are there ($KEEL_LEVELS_DIR, default
#    ../shared/levels), one on sauerbraten_zdm2.obj;
# 3. serves build-web/ on 127.0.0.1 (Python's http.server, a free port) and
#    loads the page in headless Chromium with ?rec=URL (and ?level=URL),
#    both through scripts/web-page.py, which keeps the DOM once the page has
#    settled (its module loaded and no verification running);
# 4. requires the page's verdict (#verdict's data-result, data-tick,
#    data-character, data-field) to be what native `keel-replay verify
#    --json` says for the same file, the divergence to be tick 200,
#    character 3, velocity.x, the recording's ticks and last hash shown to be
#    what `keel-replay info --json` says, the map recording without its map
#    to ask for sauerbraten_zdm2.obj, the same verdicts when the files are
#    chosen in the page's file input (the diverged recording; the map
#    recording and its map together, and one after the other), a corrupt
#    copy to be refused with native keel-replay's message (the chunk and
#    offset), keel-replay to run in a worker when the page is served, and
#    the page to work from file:// too (on its own thread, same verdict);
# 5. takes a screenshot of the diverged recording's page
#    (build-web/web-verifier.png; --update-screenshot copies it to
#    docs/web-verifier.png).
#
# Judged by the DOM's contents only: a slow machine takes longer but sees the
# same DOM (each page load is capped at 15 minutes only so that a wedged
# browser cannot hang CI). Installs emscripten and
# chromium when run as root; otherwise says what is missing and exits 77 (1
# with KEEL_WEB_REQUIRED=1). Exit 0 all agree; 1 a difference or a failure.
#
# Usage: scripts/web-check.sh [--update-screenshot]
set -euo pipefail
cd "$(dirname "$0")/.."
update_screenshot=0
case ${1:-} in
"") ;;
--update-screenshot) update_screenshot=1 ;;
*)
    echo "usage: scripts/web-check.sh [--update-screenshot]" >&2
    exit 2
    ;;
esac

skip() {
    echo "web-check: skipped: $*" >&2
    if [ "${KEEL_WEB_REQUIRED:-0}" = 1 ]; then
        exit 1
    fi
    exit 77
}
fail() {
    echo "web-check: FAILED: $*" >&2
    exit 1
}

# ---- packages ---------------------------------------------------------------------
missing=()
command -v emcc >/dev/null || missing+=(emscripten)
command -v chromium >/dev/null || missing+=(chromium)
command -v python3 >/dev/null || missing+=(python3)
if [ "${#missing[@]}" -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || skip "not root; to run it, as root: apt-get install ${missing[*]}"
    echo "web-check: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq || echo "web-check: warning: apt-get update failed" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null || skip "could not install ${missing[*]}"
fi

# ---- builds -----------------------------------------------------------------------
started=$(date +%s)
rc=0
scripts/build-web.sh build-web || rc=$?
case $rc in
0) ;;
77) skip "the WebAssembly build cannot be made here (above)" ;;
*) fail "scripts/build-web.sh" ;;
esac
build_s=$(($(date +%s) - started))
log=build-web/check/native-build.log
mkdir -p build-web/check
# test.sh has configured and built build/ already: then this is a no-op.
configure=(cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKEEL_WERROR=ON -DKEEL_SANITIZE=OFF -DKEEL_CHECKS=ON)
[ -f build/CMakeCache.txt ] && configure=(true)
if ! { "${configure[@]}" && cmake --build build -j 2 --target keel-sim keel-sim-diverge keel-replay; } >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    fail "the native build (build/)"
fi

# ---- recordings -------------------------------------------------------------------
check=build-web/check
rm -f "$check"/*.krec "$check"/*.obj "$check"/*.json "$check"/*.html
# name | program and arguments (each gets --quiet --record FILE)
recordings=(
    "builtin|keel-sim --level builtin --characters 8 --seed 1 --ticks 320"
    "generated|keel-sim --level generated --characters 8 --seed 13 --ticks 320"
    "diverged|keel-sim-diverge --level builtin --characters 8 --seed 1 --ticks 320 --record-full"
)
maps=${KEEL_LEVELS_DIR:-../shared/levels}
if [ -f "$maps/sauerbraten_zdm2.obj" ]; then
    cp "$maps/sauerbraten_zdm2.obj" "$check/"
    recordings+=("zdm2|keel-sim --level $check/sauerbraten_zdm2.obj --scale 0.12 --characters 8 --seed 14 --ticks 320")
else
    echo "web-check: note: $maps/sauerbraten_zdm2.obj is absent; the map recording is not checked" >&2
fi
for r in "${recordings[@]}"; do
    name=${r%%|*}
    cmd=${r#*|}
    # shellcheck disable=SC2086
    build/$cmd --quiet --record "$check/$name.krec" >/dev/null 2>"$check/$name.log" ||
        fail "recording $name ($cmd): $(tail -n 3 "$check/$name.log")"
done

# A corrupt copy: one byte of the built-in recording changed (inside a tick
# block: a CRC mismatch, which keel-replay names with the chunk and offset).
cp "$check/builtin.krec" "$check/corrupt.krec"
printf '\377' | dd of="$check/corrupt.krec" bs=1 seek=6000 conv=notrunc 2>/dev/null

# ---- the pages in headless Chromium -----------------------------------------------------
# One Chromium for every page: scripts/web-page.py serves build-web/ on
# 127.0.0.1 (a free port), loads each URL and writes its DOM once the page has
# settled, then the screenshot of the last (the diverged recording). The cap
# only keeps a wedged browser from hanging CI.
loads=()
for r in "${recordings[@]}"; do
    name=${r%%|*}
    query="rec=check/$name.krec"
    [ "$name" = zdm2 ] && query+="&level=check/sauerbraten_zdm2.obj"
    loads+=("/index.html?$query" "$check/$name.html")
done
[ -f "$check/zdm2.krec" ] && loads+=("/index.html?rec=check/zdm2.krec" "$check/zdm2-alone.html")
# Chosen in the page's file input, as a user would: one recording; a map
# recording with its map together; and on one page the map recording alone
# (the page asks for the map), then the map.
loads+=(--pick "$check/diverged.krec" /index.html "$check/diverged-picked.html")
if [ -f "$check/zdm2.krec" ]; then
    loads+=(--pick "$check/zdm2.krec,$check/sauerbraten_zdm2.obj" /index.html "$check/zdm2-picked.html")
    loads+=(--pick "$check/zdm2.krec" --pick "$check/sauerbraten_zdm2.obj" /index.html "$check/zdm2-after.html")
fi
loads+=("/index.html?rec=check/corrupt.krec" "$check/corrupt.html")
# From file:// (no server): the module is inlined, so it loads there too,
# and runs on the page's thread (no workers from file://).
loads+=(--pick "$check/diverged.krec" "file://$(pwd)/build-web/index.html" "$check/file.html")
loads+=("/index.html?rec=check/diverged.krec" "$check/screenshot.html")
rm -f build-web/web-verifier.png
started=$(date +%s)
rc=0
timeout 1800 python3 scripts/web-page.py --serve build-web --screenshot build-web/web-verifier.png "${loads[@]}" || rc=$?
chromium_s=$(($(date +%s) - started))
[ "$rc" -eq 0 ] || fail "loading the pages in chromium (scripts/web-page.py exit $rc)"

verdict_attr() { # name < dom: one attribute of the verdict's element
    grep -o '<div id="verdict"[^>]*>' | head -n 1 | sed -n "s/.* data-$1=\"\\([^\"]*\\)\".*/\\1/p"
}
verdict_text() { # dom
    grep -o '<div id="verdict".*</div>' "$1" | head -n 1
}
json_field() { # name < json: a number or string value of the first "name"
    grep -o "\"$1\":\\(\"[^\"]*\"\\|[0-9a-z.]*\\)" | head -n 1 | cut -d: -f2 | tr -d '"'
}

for r in "${recordings[@]}"; do
    name=${r%%|*}
    f="$check/$name.krec"
    page="$check/$name.html"
    build/keel-replay info "$f" --json >"$check/$name.info.json"
    want_rc=0
    build/keel-replay verify "$f" --json >"$check/$name.verify.json" 2>/dev/null || want_rc=$?
    want_result=$(json_field result <"$check/$name.verify.json")
    got=$(verdict_attr result <"$page")
    line="$name.krec: native $want_result (exit $want_rc), browser $got"
    [ -n "$want_result" ] && [ "$got" = "$want_result" ] || fail "$line; the page says: $(verdict_text "$page")"
    # What info says is on the page: the length and the last hash.
    ticks=$(json_field ticks <"$check/$name.info.json")
    last=$(json_field last_hash <"$check/$name.info.json")
    grep -q "<td>$ticks ticks from tick " "$page" || fail "$name: the page does not show $ticks ticks"
    grep -q "<td>$last</td>" "$page" || fail "$name: the page does not show the last hash $last"
    if [ "$want_result" = diverged ]; then
        for a in tick character field; do
            w=$(json_field "$a" <"$check/$name.verify.json")
            g=$(verdict_attr "$a" <"$page")
            line+=" $a $g"
            [ "$g" = "$w" ] || fail "$line: native keel-replay names $a $w"
        done
        line+=" (native: the same)"
    fi
    echo "web-check: $line"
done

# The injected divergence is where keel-sim-diverge puts it.
for want in "tick 200" "character 3" "field velocity.x"; do
    [ "$(verdict_attr "${want%% *}" <"$check/diverged.html")" = "${want#* }" ] ||
        fail "diverged.krec: the page does not name $want: $(verdict_text "$check/diverged.html")"
done

# A map recording without its map: the page names the file it needs.
if [ -f "$check/zdm2.krec" ]; then
    page="$check/zdm2-alone.html"
    [ "$(verdict_attr result <"$page")" = level-needed ] && grep -q 'the map sauerbraten_zdm2.obj' "$page" ||
        fail "zdm2.krec without its map: $(verdict_text "$page")"
    echo "web-check: zdm2.krec without its map: the page asks for sauerbraten_zdm2.obj"
fi

# The corrupt file: an error on both sides, with native keel-replay's words.
want_rc=0
build/keel-replay verify "$check/corrupt.krec" >/dev/null 2>"$check/corrupt.err" || want_rc=$?
message=$(head -n 1 "$check/corrupt.err" | sed "s|^keel-replay: $check/corrupt.krec: ||")
[ "$want_rc" -eq 3 ] && [ -n "$message" ] || fail "corrupt.krec: native keel-replay exits $want_rc: $message"
[ "$(verdict_attr result <"$check/corrupt.html")" = error ] && grep -qF "$message" "$check/corrupt.html" ||
    fail "corrupt.krec: the page does not say '$message': $(verdict_text "$check/corrupt.html")"
echo "web-check: corrupt.krec: native and browser: $message"

# The file input gives the same verdicts as ?rec=.
for a in result tick character field; do
    [ "$(verdict_attr "$a" <"$check/diverged-picked.html")" = "$(verdict_attr "$a" <"$check/diverged.html")" ] ||
        fail "diverged.krec chosen in the file input: $(verdict_text "$check/diverged-picked.html")"
done
picked="diverged.krec"
if [ -f "$check/zdm2.krec" ]; then
    [ "$(verdict_attr result <"$check/zdm2-picked.html")" = match ] ||
        fail "zdm2.krec and its map chosen together: $(verdict_text "$check/zdm2-picked.html")"
    [ "$(verdict_attr result <"$check/zdm2-after.html")" = match ] ||
        fail "zdm2.krec, then its map: $(verdict_text "$check/zdm2-after.html")"
    picked+="; zdm2.krec with its map, and the map after it"
fi
echo "web-check: the file input: the same verdicts ($picked)"

# Served, keel-replay runs in a worker; from file://, on the page's thread,
# with the same verdict.
grep -q '<p id="module" data-state="ready">[^<]* in a worker' "$check/builtin.html" ||
    fail "served, keel-replay does not run in a worker: $(grep -o '<p id="module".*</p>' "$check/builtin.html")"
grep -q '<p id="module" data-state="ready">[^<]* on this page.s thread' "$check/file.html" ||
    fail "from file://: $(grep -o '<p id="module".*</p>' "$check/file.html")"
for a in result tick character field; do
    [ "$(verdict_attr "$a" <"$check/file.html")" = "$(verdict_attr "$a" <"$check/diverged.html")" ] ||
        fail "diverged.krec chosen from file://: $(verdict_text "$check/file.html")"
done
echo "web-check: served, keel-replay runs in a worker; from file://, on the page's thread, with the same verdict"

[ "$(verdict_attr result <"$check/screenshot.html")" = diverged ] && [ -s build-web/web-verifier.png ] ||
    fail "no screenshot of the diverged recording's page"
if [ "$update_screenshot" -eq 1 ]; then
    cp build-web/web-verifier.png docs/web-verifier.png
    echo "web-check: docs/web-verifier.png updated"
fi
echo "web-check: passed: $(find "$check" -name '*.html' | wc -l) page loads agree with native keel-replay" \
    "(page build ${build_s} s, chromium ${chromium_s} s)"
