#!/bin/sh
# A wrong element fails the run: exit 1, #wrong counted in the table and the CSV.
# COLLBENCH_TEST_CORRUPT=1 makes rank 0 spoil one element of each checked result.
. "$(dirname "$0")/lib.sh"

COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "" allreduce --sizes 1K,4K -P 2 -w 1 -n 2 -c 1 \
    --backend tcp --csv "$WORK/w.csv"
awk '/^ *[0-9]/ && ($9 != "1" || $13 != "1") { bad = 1 } END { exit bad }' "$WORK/out" \
    || fail "expected #wrong 1 in both placements: $(cat "$WORK/out")"
grep -q "Out of bounds values : 4 FAILED" "$WORK/out" || fail "footer does not report 4 wrong"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != "1" { bad = 1 } END { exit bad }' "$WORK/w.csv" || fail "CSV wrong != 1"

# -c 2: two checked iterations, two wrong elements per placement
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "" allgather --sizes 1K -P 3 -w 1 -n 2 -c 2 --backend tcp
awk '/^ *[0-9]/ && ($9 != "2" || $13 != "2") { bad = 1 } END { exit bad }' "$WORK/out" \
    || fail "allgather -c 2: expected #wrong 2: $(cat "$WORK/out")"

# -c 0: nothing checked, so nothing is found wrong
COLLBENCH_TEST_CORRUPT=1 expect_exit 0 "" allreduce --sizes 1K -P 2 -w 1 -n 2 -c 0 --backend tcp
grep -q "N/A" "$WORK/out" || fail "-c 0 should print N/A in #wrong: $(cat "$WORK/out")"
finish
