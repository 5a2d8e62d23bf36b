#!/bin/sh
# collbench straggler: an injected rank is flagged (and only it), a run without
# injection flags nobody, the monitored barrier names a rank that arrives past
# its timeout, and bad flags exit 2 naming the flag.
. "$(dirname "$0")/lib.sh"

# Flagged ranks, one number per line, from the report on stdout.
flagged() { sed -n 's/^STRAGGLER rank \([0-9]*\):.*/\1/p' "$WORK/out" | tr '\n' ' '; }

# 20 ms injected vs a 10 ms threshold: far above scheduling noise on 2 loaded cores.
expect_exit 0 "" straggler -P 4 --iters 30 --inject 2:20 --threshold 10
[ "$(flagged)" = "2 " ] || fail "--inject 2:20 flagged '$(flagged)', want rank 2 only: $(cat "$WORK/out")"
grep -q "last in" "$WORK/out" || fail "no evidence printed for the straggler"

expect_exit 0 "" straggler -P 4 --iters 30 --threshold 10
[ -z "$(flagged)" ] || fail "no injection but flagged '$(flagged)': $(cat "$WORK/out")"
grep -q "no stragglers" "$WORK/out" || fail "no-injection run does not say 'no stragglers'"

expect_exit 3 "rank 1 did not reach the monitored barrier" \
    straggler -P 3 --iters 5 --monitored-barrier 0.5 --inject 1:2000
expect_exit 0 "" straggler -P 3 --iters 5 --monitored-barrier 5 --inject 1:100
grep -q "STRAGGLER rank 1:" "$WORK/out" || fail "100 ms injection after a passed monitored barrier not flagged"

expect_exit 2 "\-\-inject" straggler -P 4 --inject 4:10
expect_exit 2 "\-\-inject" straggler -P 4 --inject 1:-5
expect_exit 2 "\-\-inject" straggler -P 4 --inject 1
expect_exit 2 "\-\-threshold" straggler --threshold 0
expect_exit 2 "\-\-threshold" straggler --threshold -3
expect_exit 2 "\-\-monitored-barrier" straggler --monitored-barrier 0
expect_exit 2 "\-\-iters" straggler --iters 0
expect_exit 2 "\-P" straggler -P 0
expect_exit 2 "\-\-bogus" straggler --bogus
expect_exit 0 "" straggler --help
grep -q -e "--inject" "$WORK/out" || fail "straggler --help does not show --inject"

# Every wait is bounded: absurd values are refused up front, naming the flag
# and the limit (under `timeout`: a build that accepts them never ends).
bounded() {
    want=$1
    shift
    timeout 20 "$BIN" straggler "$@" >"$WORK/out" 2>"$WORK/err"
    got=$?
    if [ "$got" -ne 2 ] || ! grep -q -e "$want" "$WORK/err"; then
        fail "straggler $*: exit $got, want 2 naming '$want': $(cat "$WORK/err")"
    fi
}
bounded "\-\-compute-ms: 1e+09 ms is longer than -T (60 s): at most 60000 ms" \
    -P 2 --iters 1 --compute-ms 1e9
bounded "\-\-compute-ms: 5000 ms is longer than -T (2 s)" -P 2 --iters 1 --compute-ms 5000 -T 2
bounded "\-\-inject: 1e+09 ms for rank 1 is above the limit of 3600000 ms" -P 2 --inject 1:1e9
bounded "\-T: '1e9' must be in (0, 86400]" -P 2 --iters 1 -T 1e9
bounded "\-\-monitored-barrier: '1e7' must be in (0, 86400]" -P 2 --iters 1 --monitored-barrier 1e7
expect_exit 0 "" straggler -P 2 --iters 2 --compute-ms 200 -T 1
finish
