#!/bin/sh
# collbench init: a row per backend x process count, re-creating the communicator
# every step costs more than reusing it (issue 7), bad flags exit 2.
. "$(dirname "$0")/lib.sh"

"$BIN" init -P 2 --steps 5 --backend tcp --csv "$WORK/init.csv" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "init -P 2 --steps 5: exit $rc: $(cat "$WORK/err")"
# backend ranks cold warm recreate reuse ratio
row=$(awk '$1 == "tcp" && $2 == 2' "$WORK/out")
[ -n "$row" ] || fail "no tcp row for 2 ranks in: $(cat "$WORK/out")"
echo "$row" | awk '{ exit !($7 > 1 && $3 > 0 && $4 > 0 && $5 > $6) }' ||
    fail "re-creating is not slower than reusing: $row"
[ "$(grep -c '^backend,' "$WORK/init.csv")" -eq 1 ] || fail "--csv: header not once: $(cat "$WORK/init.csv")"
grep -q '^tcp,2,1024,5,' "$WORK/init.csv" || fail "--csv: no tcp row: $(cat "$WORK/init.csv")"

expect_exit 2 "\-\-steps" init --steps 0
expect_exit 2 "\-P" init -P 0
expect_exit 2 "\-\-count" init --count -3
expect_exit 2 "\-\-bogus" init --bogus 1
expect_exit 4 "nccl" init -P 2 --backend nccl
finish
