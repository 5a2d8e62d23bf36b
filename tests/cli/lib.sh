# Helpers for the CLI tests (sourced). $1 of the test script: the collbench binary.
set -u
BIN=${1:?usage: $0 path/to/collbench}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-cli.XXXXXX")
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
FAILED=0
# The user's own tuning file (~/.config/collbench/tuning) is not the tests'.
export COLL_TUNING_FILE="$WORK/no-tuning-file"

fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# expect_exit CODE PATTERN ARGS...: exit code CODE and stderr matching PATTERN.
expect_exit() {
    want=$1 pattern=$2
    shift 2
    "$BIN" "$@" >"$WORK/out" 2>"$WORK/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "collbench $*: exit $got, want $want; stderr: $(cat "$WORK/err")"
    elif [ -n "$pattern" ] && ! grep -q -e "$pattern" "$WORK/err"; then
        fail "collbench $*: stderr does not mention '$pattern': $(cat "$WORK/err")"
    fi
}

finish() {
    [ "$FAILED" -eq 0 ] && echo "PASS"
    exit "$FAILED"
}
