#!/bin/sh
# --per-iter given to one node of a two-host run (issue 27, item 7). Node 0's
# flag decides for every rank: given to node 0 alone, the job runs and node 0
# writes every rank's times; given to node 1 alone, the job runs and nothing is
# written (node 0 writes the results). Two collbench processes on loopback,
# one rank each, sharing a job token file of mode 600.
# shellcheck disable=SC2086 # $COMMON and the per-node extras are word lists
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../pick_port.sh"

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/token"
chmod 600 "$WORK/token"
COMMON="allreduce --nnodes 2 --nproc-per-node 1 --job-token-file $WORK/token --backend tcp
        --sizes 1K,4K -n 3 -w 1 -T 30"

# run_nodes NAME "NODE 0 EXTRA" "NODE 1 EXTRA": both nodes, output in
# $WORK/NAME.0 and NAME.1; true when both exit 0. A port taken meanwhile is retried.
run_nodes() {
    try=1
    while :; do
        port=$(pick_port)
        "$BIN" $COMMON --node-rank 1 --master-port "$port" $3 >"$WORK/$1.1" 2>&1 &
        pid1=$!
        "$BIN" $COMMON --node-rank 0 --master-port "$port" $2 >"$WORK/$1.0" 2>&1
        rc0=$?
        wait "$pid1"
        rc1=$?
        if [ "$rc0" -ne 0 ] && grep -q "in use" "$WORK/$1.0" && [ "$try" -lt 3 ]; then
            try=$((try + 1))
            continue
        fi
        [ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ]
        return
    done
}

F="$WORK/iters.csv"
run_nodes first "--per-iter $F" "" ||
    fail "--per-iter on node 0 only: $(tail -n 5 "$WORK/first.0" "$WORK/first.1")"
# 2 ranks x 2 sizes x 2 placements x 3 iterations, both ranks present
rows=$(grep -c '^allreduce,tcp,2,' "$F" 2>/dev/null)
[ "${rows:-0}" -eq 24 ] || fail "--per-iter on node 0 only: $rows rows, want 24: $(cat "$F" 2>/dev/null)"
[ "$(cut -d, -f7 "$F" | tail -n +2 | sort -u | tr '\n' ' ')" = "0 1 " ] ||
    fail "--per-iter on node 0 only: ranks '$(cut -d, -f7 "$F" | tail -n +2 | sort -u | tr '\n' ' ')'"

G="$WORK/node1.csv"
run_nodes second "" "--per-iter $G" ||
    fail "--per-iter on node 1 only: $(tail -n 5 "$WORK/second.0" "$WORK/second.1")"
[ -e "$G" ] && fail "node 1 wrote its --per-iter file: $(head -n 3 "$G")"
finish
