#!/bin/sh
# Two shm jobs on one host at once do not interfere (each communicator's
# segment is an anonymous memfd, so there are no names to collide), both
# check their results, and neither leaves anything in /dev/shm.
set -u
BIN=${1:?usage: $0 path/to/collbench}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-shm2.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Other tests' Open MPI jobs, collbench's mpirun launches and Python
# multiprocessing (the torch tests) come and go there: only names that could be
# ours count.
others='^vader_segment\|^sem\.mp-\|^torch_\|^collbench-mpi\.'
ls /dev/shm 2>/dev/null | grep -v "$others" > "$WORK/before"

run() { # a job of 3 ranks, every size crossing the staging and chunk sizes
    "$BIN" allreduce --backend shm -P 3 --sizes 8,64K,3M -n 20 -w 2 -c 3 -q \
        --csv "$WORK/$1.csv" >"$WORK/$1.out" 2>&1
    echo $? > "$WORK/$1.rc"
}
run a & run b & wait

FAILED=0
for j in a b; do
    rc=$(cat "$WORK/$j.rc")
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: job $j exited $rc: $(cat "$WORK/$j.out")" >&2
        FAILED=1
    fi
    rows=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] == 0' "$WORK/$j.csv" | wc -l)
    [ "$rows" -eq 6 ] || { echo "FAIL: job $j: $rows checked rows, want 6" >&2; FAILED=1; }
done
ls /dev/shm 2>/dev/null | grep -v "$others" > "$WORK/after"
if ! cmp -s "$WORK/before" "$WORK/after"; then
    echo "FAIL: /dev/shm changed: $(diff "$WORK/before" "$WORK/after")" >&2
    FAILED=1
fi
[ "$FAILED" -eq 0 ] && echo "PASS: two concurrent shm jobs, results checked, /dev/shm clean"
exit "$FAILED"
