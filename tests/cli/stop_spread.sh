# --stop-spread: timed iterations whose p25-p75 spread is already within the
# bound end early (looked at every 8), and every rank stops at the same count.
# Rank 1 sleeps 100 ms in every timed call (COLLBENCH_TEST_DELAY), so the times
# are that sleep plus the scheduler's delays (tens of ms on a loaded machine):
# within 90% of the median, whatever the load; without the flag all 20 run.
. "$(dirname "$0")/lib.sh"

run() {
    COLLBENCH_TEST_DELAY=1:100 "$BIN" allreduce --backend tcp -P 2 --sizes 4K --inplace 1 -n 20 -w 1 \
        -c 1 --time-budget 0 "$@" --csv "$WORK/s.csv" >"$WORK/out" 2>"$WORK/err" ||
        fail "exit $?: $(cat "$WORK/err")"
    tail -n 1 "$WORK/s.csv" | cut -d, -f16
    # the test hook marks every row it touches (and says so once)
    [ "$(grep -vc '^timestamp' "$WORK/s.csv")" -eq "$(grep -c ',[^,]*+test-delay,' "$WORK/s.csv")" ] ||
        fail "a row of a COLLBENCH_TEST_DELAY run without +test-delay in its host: $(cat "$WORK/s.csv")"
    grep -q "COLLBENCH_TEST_DELAY is set" "$WORK/err" || fail "the test hook not announced: $(cat "$WORK/err")"
    rm -f "$WORK/s.csv"
}
iters=$(run --stop-spread 0.9)
case "$iters" in 8 | 16) ;; *) fail "--stop-spread 0.9: $iters timed iterations, want 8 or 16" ;; esac
iters=$(run)
[ "$iters" = 20 ] || fail "without --stop-spread: $iters timed iterations, want 20"

expect_exit 2 "stop-spread" allreduce --stop-spread 1
expect_exit 2 "stop-spread" allreduce --stop-spread -0.1
expect_exit 2 "stop-spread" allreduce --stop-spread x
finish
