#!/bin/bash
# A coll subgroup whose rank 0 is on another host than MASTER_ADDR: rank 0 of
# the world in one network namespace, ranks 1 and 2 in another (a veth pair);
# new_group([1, 2]) must publish world rank 1's own address, which its peer
# dials. Exit 77 without root or ip netns.
# usage: test_subgroup_host.sh PYTHON MODULE_DIR
PY=${1:?usage: $0 python module-dir}
MODDIR=${2:?usage: $0 python module-dir}
HERE=$(cd "$(dirname "$0")" && pwd)
"$PY" -c 'import torch' 2>/dev/null || { echo "SKIP: $PY cannot import torch"; exit 77; }
. "$HERE/../netns/netns_lib.sh"
netns_require
netns_setup 2 || { echo "FAIL: cannot set up 2 namespaces"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/coll-subgroup.XXXXXX")
trap 'netns_cleanup; rm -rf "$WORK"' EXIT
# below the ephemeral range (no outgoing connection holds it), free now
. "$(dirname "$0")/../pick_port.sh"
PORT=$(pick_port)
pids=()
for r in 0 1 2; do
    h=$((r > 0 ? 1 : 0))
    netns_run $h env MASTER_ADDR="$(netns_addr 0)" MASTER_PORT=$PORT RANK=$r WORLD_SIZE=3 \
        PYTHONPATH="$MODDIR" PYTHONWARNINGS=ignore OMP_NUM_THREADS=1 \
        timeout 90 "$PY" "$HERE/subgroup_host.py" >"$WORK/rank$r.log" 2>&1 &
    pids+=($!)
done
FAILED=0
for r in 0 1 2; do
    wait "${pids[$r]}" || { echo "FAIL: rank $r exited with status $?:"; tail -n 15 "$WORK/rank$r.log"; FAILED=1; }
done
[ $FAILED -eq 0 ] && cat "$WORK"/rank*.log | grep "ok$"
exit $FAILED
