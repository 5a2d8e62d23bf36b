#!/bin/sh
# --same-ranks: one launch per process count runs every backend in the same
# ranks, size by size (per size each backend in turn). Each backend still gets
# its rows, checked; the processes are the
# same ones (a COLL_FAULT delay fires once per process: once per -P, not once
# per backend); wrong results on one backend do not stop the next; a rank that
# dies ends the launch, named.
. "$(dirname "$0")/lib.sh"

ARGS="allreduce --backend tcp,shm --same-ranks --sizes 4K,64K -w 1 -n 2"
col_count() { # FILE AWK-CONDITION over named columns; 0 for no file (a run without rows writes none)
    [ -f "$1" ] || { echo 0; return; }
    awk -F, -v cond="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { b = $col["backend"]; p = $col["nprocs"]; w = $col["wrong"] } '"$2"' { n++ } END { print n + 0 }' "$1"
}

COLL_FAULT=1:rendezvous:delay COLL_FAULT_DELAY_S=0 expect_exit 0 "" $ARGS -P 2,3 --csv "$WORK/ok.csv"
for b in tcp shm; do
    for p in 2 3; do
        n=$(col_count "$WORK/ok.csv" "b == \"$b\" && p == $p && w == 0")
        [ "$n" -eq 4 ] || fail "$n checked rows of $b with $p ranks, want 4 (2 sizes x 2 placements)"
    done
done
order=$(awk -F, 'NR > 1 { print $4 "," $8 "," $13 }' "$WORK/ok.csv" | uniq | tr '\n' ' ')
want="tcp,2,4096 shm,2,4096 tcp,2,65536 shm,2,65536 tcp,3,4096 shm,3,4096 tcp,3,65536 shm,3,65536 "
[ "$order" = "$want" ] || fail "rows not per launch, size by size in backend order: $order"
n=$(grep -c 'COLL_FAULT: pid [0-9]*: delay at rendezvous' "$WORK/err")
[ "$n" -eq 2 ] || fail "rank 1's delay fired $n times for 2 launches x 2 backends, want 2 (one process per launch): $(cat "$WORK/err")"

# Wrong results (test hook: rank 0 spoils checked results) on tcp: shm still runs.
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "wrong results" $ARGS -P 2 --csv "$WORK/bad.csv"
n=$(col_count "$WORK/bad.csv" "b == \"shm\" && w > 0")
[ "$n" -eq 4 ] || fail "$n spoiled shm rows after tcp's wrong results, want 4: $(cat "$WORK/bad.csv")"

# Rank 1 killed in tcp's first collective: the launch ends with rank 1 named.
COLL_FAULT=1:collective:kill expect_exit 3 "rank 1" $ARGS -P 2 --csv "$WORK/dead.csv"
n=$(col_count "$WORK/dead.csv" "b == \"shm\"")
[ "$n" -eq 0 ] || fail "shm ran after a rank died: $n rows"
finish
