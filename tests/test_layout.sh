#!/usr/bin/env bash
# keel tests: the direction of the folders' dependencies. MIT licence, see LICENSE.
#
# Arrows run one way: programs (server/keel-server, client/keel-client,
# client/keel-play, tools/*) -> app/ (their support library) -> the libraries
# (server/src, client/src, rec, net, sim). Checked on the sources' #include
# lines and the build files:
#   - app/ exists and no file names the old tools/common;
#   - no library source includes an app/ header;
#   - app/ includes nothing from a program folder;
#   - no build file of a library folder (server/, client/) names a source of
#     tools/ (a program folder).
# Registered in tests/CMakeLists.txt as test_layout: test_layout.sh <source dir>
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 <source dir>" >&2
    exit 2
fi
cd "$1"
failed=0
fail() {
    echo "test_layout: FAILED: $*" >&2
    failed=1
}

[ -f app/CMakeLists.txt ] || fail "no app/CMakeLists.txt: the programs' support library is app/"
[ ! -e tools/common ] || fail "tools/common exists: the programs' support belongs in app/, below the programs"

# the old path, anywhere in the tree's text (this script aside)
hits=$(grep -rIl --exclude-dir=.git --exclude-dir='build*' -e 'tools/common' . | grep -v '^./tests/test_layout.sh$' || true)
[ -z "$hits" ] || fail "these files still name tools/common: $(echo "$hits" | tr '\n' ' ')"

app_headers=$(cd app && ls ./*.h | sed 's#^\./##')
for h in $app_headers; do
    hits=$(grep -rlE "#include [\"<](.*/)?$h[\">]" sim net rec server/src server/include client/src client/include \
        2>/dev/null || true)
    [ -z "$hits" ] || fail "a library includes the programs' $h: $(echo "$hits" | tr '\n' ' ')"
done

hits=$(grep -nE '#include "(\.\./)+(tools|server/keel-server|client/keel-client|client/keel-play)/' app/*.c app/*.h || true)
[ -z "$hits" ] || fail "app/ includes a program folder's file: $hits"

hits=$(grep -nvE '^[[:space:]]*#' server/CMakeLists.txt client/CMakeLists.txt | grep -E '/tools/' || true)
[ -z "$hits" ] || fail "a library folder's build file names a program folder's source: $hits"

[ "$failed" -eq 0 ] || exit 1
echo "test_layout: programs -> app -> libraries"
