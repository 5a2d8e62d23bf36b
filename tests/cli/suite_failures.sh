#!/bin/sh
# collbench suite when things go wrong: a failing configuration is reported
# and the others still run (exit 3), a wrong result gives exit 1, bad flags
# exit 2 and a backend that is not available exit 4, all before any work.
. "$(dirname "$0")/lib.sh"

Q="--quick --no-train --no-report --backend tcp"

# Rank 3 dies (COLL_FAULT) in the one configuration that has it: that
# configuration fails, the ones before and after it run and keep their rows.
COLL_FAULT=3:collective:kill expect_exit 3 "" suite $Q -P 2,4,3 -o "$WORK/fail"
unset COLL_FAULT
grep -q '^\[2/3\] allreduce tcp 4 ranks: FAILED (exit 3' "$WORK/err" \
    || fail "the failing configuration is not reported: $(cat "$WORK/err")"
grep -q '^\[3/3\] allreduce tcp 3 ranks: ok' "$WORK/err" || fail "the suite stopped after the failure"
grep -q 'allreduce tcp 4 ranks *FAILED (exit 3): .*rank 3' "$WORK/out" \
    || fail "the summary does not name the failure and why: $(cat "$WORK/out")"
n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["nprocs"] == 2 || $col["nprocs"] == 3' "$WORK/fail/results.csv" | wc -l)
[ "$n" -eq 6 ] || fail "expected the 6 rows of -P 2 and 3, got $n"

# A wrong result (test hook: rank 0 spoils checked results) is exit 1.
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "wrong results" suite $Q -P 2 -o "$WORK/wrong"
grep -q 'WRONG RESULTS' "$WORK/out" || fail "the summary does not say WRONG RESULTS: $(cat "$WORK/out")"
unset COLLBENCH_TEST_CORRUPT

# A configuration that hangs (COLL_FAULT: rank 1 blocks forever in the
# collective) is stopped by the suite's watchdog, reported, and nothing of it is
# left running; the next configuration still runs.
COLL_FAULT=1:collective:hang COLLBENCH_SUITE_STEP_LIMIT=2 \
    expect_exit 3 "" suite $Q -P 2,3 -o "$WORK/hang"
unset COLL_FAULT COLLBENCH_SUITE_STEP_LIMIT
n=$(grep -c 'allreduce tcp [23] ranks: FAILED (still running after 2 s: stopped)' "$WORK/err")
[ "$n" -eq 2 ] || fail "expected both hanging configurations stopped: $(cat "$WORK/err")"
sleep 1
pgrep -f "$WORK/hang" >/dev/null && fail "processes of the stopped configuration are still running: $(pgrep -af "$WORK/hang")"

# Usage errors: exit 2 naming the flag, and no results directory made.
expect_exit 2 "--bogus: unknown flag" suite --bogus -o "$WORK/u1"
expect_exit 2 "--collectives: unknown collective 'allreduze'" suite --collectives allreduze -o "$WORK/u1"
expect_exit 2 "-P:" suite -P 2,x -o "$WORK/u1"
# one rule for every list: an item given twice, or an empty one, is refused
expect_exit 2 "-P: '2' is given twice in '2,2'" suite -P 2,2 -o "$WORK/u1"
expect_exit 2 "--backend: item 2 of 'tcp,,shm' is empty" suite --backend tcp,,shm -o "$WORK/u1"
expect_exit 2 "--sizes: '1K' and '1024' are the same" suite --sizes 1K,1024 -o "$WORK/u1"
# a process count the collective refuses (above 1024) is refused before any step runs
expect_exit 2 "allreduce tcp 1025 ranks: -P: .*1024" suite $Q -P 2,1025 -o "$WORK/u1"
expect_exit 2 "--sizes:" suite --sizes 1Q -o "$WORK/u1"
expect_exit 2 "--time-budget:" suite --time-budget soon -o "$WORK/u1"
expect_exit 2 "--inplace: '3'" suite --inplace 3 -o "$WORK/u1"
expect_exit 2 "--backend: unknown backend 'tpc'" suite --backend tpc -o "$WORK/u1"
expect_exit 2 "-o: missing value" suite -o
# what every step would refuse is refused before the first one: a size the
# collective refuses, and one that no step's memory check lets through
expect_exit 2 "allreduce tcp 2 ranks: --sizes: '0'" suite $Q -P 2 --sizes 0 -o "$WORK/u1"
expect_exit 2 "allreduce tcp 2 ranks: needs .* GiB on this host" suite $Q -P 2 --sizes 64G -o "$WORK/u1"
expect_exit 2 "reducescatter tcp 3 ranks: --sizes: 8 bytes is less than one float32" \
    suite $Q --collectives reducescatter -P 3 --sizes 8 -o "$WORK/u1"
[ -e "$WORK/u1" ] && fail "a usage error created the results directory"

# A backend asked for that cannot run here: exit 4 with the reason.
if ! "$BIN" info 2>/dev/null | grep -q 'backend nccl *available'; then
    expect_exit 4 "--backend nccl: " suite --backend nccl -o "$WORK/u2"
fi
expect_exit 0 "" suite --help
grep -q -- "--quick" "$WORK/out" || fail "--help does not list --quick"
finish
