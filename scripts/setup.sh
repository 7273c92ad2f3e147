#!/usr/bin/env bash
# keel: install the Debian 12 packages the build and the tests need. MIT licence, see LICENSE.
#
# Silent when everything is installed already. Otherwise installs the missing
# packages with apt-get: directly when run as root, through `sudo -n` when that
# works without a password, and otherwise prints the exact command and exits 1.
#
# Environment (for testing this script):
#   KEEL_SETUP_DRY_RUN=1   print the commands that would run instead of running them
set -euo pipefail

packages=(build-essential cmake pkg-config libfixmath-dev libenet-dev libcriterion-dev libxxhash-dev libzstd-dev
    libsodium-dev # connect tokens (net/src/token*.c)
    clang-format # scripts/format.sh (.clang-format)
    libmicrohttpd-dev prometheus # keel-server --metrics; promtool checks its text in tests/test_metrics.c
    # keel-play (the windowed client) and its tests: a window, OpenGL 3.3
    # through Mesa's software renderer, an X server without a screen, input
    libsdl2-dev libepoxy-dev libcglm-dev libstb-dev libgl1-mesa-dri xvfb xdotool)

# A package installed for several architectures (libfixmath-dev:arm64 for the
# cross-architecture check, say) lists one status per architecture: look for
# the machine's own (or "all").
native=$(dpkg --print-architecture)
installed() {
    dpkg-query -W -f='${Architecture} ${Status}\n' "$1" 2>/dev/null |
        grep -Eq "^($native|all) install ok installed$"
}
missing=()
for pkg in "${packages[@]}"; do
    installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi

install_cmd=(apt-get install -y --no-install-recommends "${missing[@]}")
echo "keel setup: missing Debian packages: ${missing[*]}" >&2

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        sudo_cmd=(sudo -n)
    else
        {
            echo "keel setup: not root, and sudo is not available without a password."
            echo "Install the packages as root, then run this again:"
            echo
            echo "    apt-get update && DEBIAN_FRONTEND=noninteractive ${install_cmd[*]}"
            echo
        } >&2
        exit 1
    fi
fi

run() {
    if [ "${KEEL_SETUP_DRY_RUN:-0}" = 1 ]; then
        echo "keel setup (dry run): $*" >&2
        return 0
    fi
    "$@"
}

# `apt-get update` can exit non-zero while one index of a mirror is mid-sync
# although the install then succeeds: warn and carry on; the install decides.
if ! run "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update; then
    echo "keel setup: warning: apt-get update failed; trying the install anyway" >&2
fi
# Wait for a dpkg lock held by e.g. unattended-upgrades on a fresh machine.
run "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get -o DPkg::Lock::Timeout=300 "${install_cmd[@]:1}"

if [ "${KEEL_SETUP_DRY_RUN:-0}" != 1 ]; then
    still=()
    for pkg in "${missing[@]}"; do
        installed "$pkg" || still+=("$pkg")
    done
    if [ "${#still[@]}" -ne 0 ]; then
        echo "keel setup: still missing after apt-get install: ${still[*]}" >&2
        exit 1
    fi
    echo "keel setup: installed ${missing[*]}" >&2
fi
