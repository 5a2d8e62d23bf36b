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

# launch_ranks NAME N [VAR=VALUE...] -- CMD [ARG...]: N ranks of CMD started by
# hand as torchrun starts them (RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE; no
# MASTER_ADDR/PORT or COLL_LAUNCHED from the caller's environment, the
# VAR=VALUE pairs beside them, words without spaces), all waited for; rank r's
# output in $WORK/NAME.out.r / NAME.err.r, its exit code in NAME.rc.r.
launch_ranks() {
    _name=$1 _n=$2
    shift 2
    _vars=""
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        _vars="$_vars $1"
        shift
    done
    [ $# -gt 0 ] && shift
    _pids="" _r=0
    while [ "$_r" -lt "$_n" ]; do
        # shellcheck disable=SC2086 # $_vars: VAR=VALUE words
        env -u MASTER_ADDR -u MASTER_PORT -u COLL_LAUNCHED RANK=$_r WORLD_SIZE=$_n \
            LOCAL_RANK=$_r LOCAL_WORLD_SIZE=$_n $_vars "$@" \
            >"$WORK/$_name.out.$_r" 2>"$WORK/$_name.err.$_r" &
        _pids="$_pids $!"
        _r=$((_r + 1))
    done
    _r=0
    for _pid in $_pids; do
        wait "$_pid"
        echo $? >"$WORK/$_name.rc.$_r"
        _r=$((_r + 1))
    done
}
