#!/bin/sh
# Ranks started by hand, torchrun style (RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE
# + MASTER_ADDR/PORT, or --init-method file://): every rank exits 0, only rank 0
# prints the table and writes the CSV. Then the launcher environment and
# --init-method mistakes: exit 2 with a message naming the problem.
# shellcheck disable=SC2086 # $ARGS, $vars and $set_master are word lists
. "$(dirname "$0")/lib.sh"

NPROCS=3
ARGS="allreduce --sizes 1K,64K -w 1 -n 3 -T 60 --backend tcp"

. "$(dirname "$0")/../pick_port.sh"

# run_ranks NAME [--init-method URL]: starts NPROCS ranks by hand, appending to
# $WORK/NAME.csv; rank r's output in $WORK/NAME.out.r / NAME.err.r, exit code
# in NAME.rc.r. MASTER_PORT is only set when no --init-method is given.
run_ranks() {
    name=$1
    shift
    set_master=""
    [ $# -eq 0 ] && set_master="MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT"
    launch_ranks "$name" "$NPROCS" $set_master -- "$BIN" $ARGS --csv "$WORK/$name.csv" "$@"
}

# check_run NAME: every rank exited 0, rank 0 alone printed the table, CSV right.
check_run() {
    name=$1
    r=0
    while [ "$r" -lt "$NPROCS" ]; do
        rc=$(cat "$WORK/$name.rc.$r")
        [ "$rc" -eq 0 ] || fail "$name: rank $r exited $rc: $(cat "$WORK/$name.err.$r")"
        if [ "$r" -gt 0 ] && grep -q '^ *[0-9]\|bus bandwidth' "$WORK/$name.out.$r"; then
            fail "$name: rank $r printed a table: $(cat "$WORK/$name.out.$r")"
        fi
        r=$((r + 1))
    done
    rows=$(grep -c '^ *[0-9]' "$WORK/$name.out.0")
    [ "$rows" -eq 2 ] || fail "$name: rank 0's table has $rows rows, want 2: $(cat "$WORK/$name.out.0")"
    avg=$(grep -c 'Avg bus bandwidth' "$WORK/$name.out.0")
    [ "$avg" -eq 1 ] || fail "$name: $avg 'Avg bus bandwidth' lines, want 1"
    [ -f "$WORK/$name.csv" ] || { fail "$name: no CSV written"; return; }
    # header + 2 sizes x (out-of-place, in-place), each nprocs 3 and wrong 0
    lines=$(wc -l <"$WORK/$name.csv")
    [ "$lines" -eq 5 ] || fail "$name: CSV has $lines lines, want 5: $(cat "$WORK/$name.csv")"
    awk -F, -v n="$NPROCS" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["nprocs"] != n || $col["wrong"] != "0" { bad = 1 } END { exit bad }' \
        "$WORK/$name.csv" || fail "$name: CSV rows without nprocs $NPROCS and wrong 0: $(cat "$WORK/$name.csv")"
}

# env:// with MASTER_ADDR/MASTER_PORT, a few tries in case the port was taken.
try=1
while :; do
    PORT=$(pick_port)
    rm -f "$WORK/env.csv"
    run_ranks env
    if [ "$(cat "$WORK/env.rc.0")" -ne 0 ] && grep -q "in use" "$WORK/env.err.0" && [ "$try" -lt 3 ]; then
        try=$((try + 1))
        continue
    fi
    break
done
check_run env

# file:// with no MASTER_* at all (the store file must be new).
run_ranks file --init-method "file://$WORK/store"
check_run file

# tcp:// with no MASTER_*: rank 0 binds the port the URL names.
PORT=$(pick_port)
run_ranks tcp --init-method "tcp://127.0.0.1:$PORT"
check_run tcp

# expect_env_exit CODE PATTERN "VAR=VALUE ..." ARGS...: as expect_exit, with the
# variables set and MASTER_* removed.
expect_env_exit() {
    want=$1 pattern=$2 vars=$3
    shift 3
    env -u MASTER_ADDR -u MASTER_PORT -u RANK -u WORLD_SIZE $vars "$BIN" "$@" \
        >"$WORK/out" 2>"$WORK/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$vars collbench $*: exit $got, want $want; stderr: $(cat "$WORK/err")"
    elif ! grep -q -e "$pattern" "$WORK/err"; then
        fail "$vars collbench $*: stderr does not mention '$pattern': $(cat "$WORK/err")"
    fi
}

# Bad launcher environments: exit 2 naming the variable, nothing launched.
expect_env_exit 2 "RANK=abc is not an integer" "RANK=abc WORLD_SIZE=3" $ARGS
expect_env_exit 2 "RANK=3" "RANK=3 WORLD_SIZE=3" $ARGS
expect_env_exit 2 "WORLD_SIZE" "RANK=0" $ARGS
expect_env_exit 2 "MASTER_PORT" "RANK=1 WORLD_SIZE=2" $ARGS

# --init-method: bad URLs, and anything but env:// for collbench's own launcher.
expect_exit 2 "\-\-init-method" $ARGS --init-method "http://127.0.0.1:1"
expect_exit 2 "\-\-init-method" $ARGS --init-method "tcp://127.0.0.1:0"
expect_exit 2 "own launcher uses env://" $ARGS -P 2 --init-method "file://$WORK/never"
[ -e "$WORK/never" ] && fail "the refused file:// init method created its file"
expect_exit 0 "" $ARGS -P 2 --init-method env:// -q

# The training benchmark's ranks started by hand keep the --backend they were
# given (they once fell back to the default, auto, and said tcp nowhere).
. "$(dirname "$0")/../have_train.sh"
if have_train "$BIN"; then
    ARGS="train --backend tcp --mode allreduce-sync --hidden 16 --input 16 --batch-sizes 4"
    ARGS="$ARGS --steps 2 --warmup 1 --compute-steps 1 -T 60"
    NPROCS=2
    PORT=$(pick_port)
    run_ranks train
    for r in 0 1; do
        rc=$(cat "$WORK/train.rc.$r")
        [ "$rc" -eq 0 ] || fail "train by hand: rank $r exited $rc: $(cat "$WORK/train.err.$r")"
    done
    # CSV columns: 5 mode, 6 backend, 7 nprocs
    awk -F, 'NR > 1 && $5 == "allreduce-sync" && $6 == "tcp" && $7 == 2 { ok = 1 } END { exit !ok }' \
        "$WORK/train.csv" 2>/dev/null ||
        fail "train by hand with --backend tcp: no tcp row: $(cat "$WORK/train.csv" 2>/dev/null)"
else
    echo "note: collbench train unavailable (no OpenBLAS): its by-hand check skipped"
fi
finish
