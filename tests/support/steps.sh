# keel tests: helpers of the scripted tests (test_install.sh,
# test_core_only.sh). MIT licence, see LICENSE.
# Sourced by bash after $test_name (the test's name, for messages) and $tmp
# (its scratch folder, which keeps the logs) are set.

# step <name> <command...>: runs quietly; on failure prints the command and its output
step() {
    local name=$1
    shift
    if ! "$@" >"$tmp/$name.log" 2>&1; then
        echo "$test_name: FAILED: $name: $*" >&2
        cat "$tmp/$name.log" >&2
        exit 1
    fi
}
fail() {
    echo "$test_name: FAILED: $*" >&2
    exit 1
}
