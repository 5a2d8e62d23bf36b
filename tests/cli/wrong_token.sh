#!/bin/sh
# Two nodes of one job on loopback with different job tokens: node 1's store
# client is refused at once, and node 0's verdict, when its rendezvous times
# out, says the store refused a connection with a wrong job token (not "rank 1
# not started, or another --master-port?"). Without any token the job runs and
# warns, once, that any user of the machine could have joined it.
# shellcheck disable=SC2086 # $COMMON is a word list
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../pick_port.sh"

COMMON="allreduce --nnodes 2 --nproc-per-node 1 --backend tcp --sizes 1K -n 1 -w 0 -q"

port=$(pick_port)
"$BIN" $COMMON -T 3 --node-rank 1 --master-port "$port" --job-token bbbbbbbbbbbbbbbb >"$WORK/n1" 2>&1 &
pid1=$!
"$BIN" $COMMON -T 3 --node-rank 0 --master-port "$port" --job-token aaaaaaaaaaaaaaaa >"$WORK/n0" 2>&1
rc0=$?
wait "$pid1"
rc1=$?
[ "$rc0" -ne 0 ] && [ "$rc1" -ne 0 ] || fail "different tokens: exits $rc0 and $rc1, want both failing"
grep -q "the store refused 1 connection with a wrong job token, the last from 127.0.0.1" "$WORK/n0" ||
    fail "node 0 does not name the refused token: $(tail -n 5 "$WORK/n0")"
grep -q "another --master-port" "$WORK/n0" && fail "node 0 guesses a wrong port: $(tail -n 5 "$WORK/n0")"

port=$(pick_port)
"$BIN" $COMMON -T 30 --node-rank 1 --master-port "$port" >"$WORK/o1" 2>&1 &
pid1=$!
"$BIN" $COMMON -T 30 --node-rank 0 --master-port "$port" >"$WORK/o0" 2>&1 || fail "no token: node 0 failed: $(tail -n 5 "$WORK/o0")"
wait "$pid1" || fail "no token: node 1 failed: $(tail -n 5 "$WORK/o1")"
[ "$(grep -c "warning: no job token: .*any user of this machine can join" "$WORK/o0")" -eq 1 ] ||
    fail "no token: want one warning on node 0: $(cat "$WORK/o0")"
finish
