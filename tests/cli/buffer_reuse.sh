#!/bin/sh
# One pair of host buffers per run, sized for the largest size and reused by
# every size, placement and dtype: a small size after a big one runs in
# buffers holding the big one's data. Every result is still right (#wrong 0),
# and a spoiled element is still found in reused buffers (exit 1).
. "$(dirname "$0")/lib.sh"

SIZES=1M,4K,256K,64K # big first: later sizes run on its leftovers
csv_wrong_zero() { # FILE ROWS: ROWS rows, each #wrong 0
    n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] == "0"' "$1" | wc -l)
    [ "$n" -eq "$2" ] || fail "$1: $n rows with #wrong 0, want $2: $(cat "$1")"
}

for coll in allreduce reducescatter allgather; do
    expect_exit 0 "" $coll --backend tcp -P 3 --sizes $SIZES -d float64,int8 -w 1 -n 2 -c 2 \
        --inplace 2 --csv "$WORK/$coll.csv"
    csv_wrong_zero "$WORK/$coll.csv" 16 # 4 sizes x 2 dtypes x 2 placements
done
for kind in malloc coll; do
    expect_exit 0 "" allreduce --backend shm -P 2 --sizes $SIZES --buffers $kind -w 1 -n 2 -c 2 \
        --inplace 2 --csv "$WORK/shm-$kind.csv"
    csv_wrong_zero "$WORK/shm-$kind.csv" 8
done

# The checks still bite: one spoiled element per checked iteration, each size.
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "" allreduce --backend shm -P 2 --sizes $SIZES -w 1 -n 2 \
    -c 1 --inplace 1 --csv "$WORK/bad.csv"
n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] == "1"' "$WORK/bad.csv" | wc -l)
[ "$n" -eq 4 ] || fail "corrupted run: $n rows with #wrong 1, want 4: $(cat "$WORK/bad.csv")"
finish
