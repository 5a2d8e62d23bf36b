#!/bin/sh
# Variables meant for an outside launcher's ranks (COLL_STORE_PORT, which the
# README tells torchrun users to export; TORCHELASTIC_USE_AGENT_STORE) do not
# reach the ranks collbench's own launcher starts; a port of 0 is refused at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../pick_port.sh"

RUN="allreduce -P 2 --backend tcp --sizes 1K -n 2 -w 0 -c 1 -T 20"
PORT=$(pick_port)

# A plain local run with the leftover exported: it must work, and well within -T.
for var in "COLL_STORE_PORT=$PORT" "TORCHELASTIC_USE_AGENT_STORE=True" "COLL_STORE_PORT=0"; do
    start=$(date +%s)
    env "$var" "$BIN" $RUN >"$WORK/out" 2>"$WORK/err"
    got=$? took=$(($(date +%s) - start))
    [ "$got" -eq 0 ] || fail "$var collbench $RUN: exit $got; stderr: $(cat "$WORK/err")"
    [ "$took" -le 10 ] || fail "$var collbench $RUN: took $took s"
done

# A rank started by hand with port 0: exit 2 naming the variable, not a wait of -T.
for vars in "MASTER_PORT=0" "MASTER_PORT=$PORT COLL_STORE_PORT=0"; do
    for r in 0 1; do
        start=$(date +%s)
        env -u COLL_LAUNCHED RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 $vars \
            "$BIN" allreduce --backend tcp --sizes 1K -n 2 -T 20 >"$WORK/out" 2>"$WORK/err"
        got=$? took=$(($(date +%s) - start))
        name=${vars##* }
        name=${name%%=*}
        [ "$got" -eq 2 ] || fail "rank $r with $vars: exit $got, want 2; stderr: $(cat "$WORK/err")"
        grep -q "$name" "$WORK/err" || fail "rank $r with $vars: stderr does not name $name: $(cat "$WORK/err")"
        [ "$took" -le 3 ] || fail "rank $r with $vars: refused after $took s, not at once"
    done
done
finish
