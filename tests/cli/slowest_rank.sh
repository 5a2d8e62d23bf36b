#!/bin/sh
# An iteration takes as long as its slowest rank: rank 1 (not 0) sleeps 20 ms at
# the end of every timed call, after the collective returned, so rank 0 never
# waits for it; every reported time must still be at least those 20 ms (a
# lower bound that holds on any machine, not a performance threshold).
. "$(dirname "$0")/lib.sh"

for backend in tcp shm; do
    csv="$WORK/$backend.csv"
    export COLLBENCH_TEST_DELAY=1:20
    expect_exit 0 "" allreduce --backend "$backend" -P 3 --sizes 1K,64K -w 1 -n 3 --csv "$csv"
    unset COLLBENCH_TEST_DELAY
    bad=$(awk -F, 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { rows++ }
        $col["time_us_min"] < 20000 || $col["time_us_p50"] < 20000 {
            print "bytes " $col["bytes"] " in_place " $col["in_place"] ": min " $col["time_us_min"] \
                  " us, p50 " $col["time_us_p50"] " us" }
        END { if (rows < 2) print "only " rows + 0 " rows" }' "$csv")
    [ -z "$bad" ] || fail "$backend: rank 1's 20 ms delay is missing from the reported times: $bad"
done
finish
