#!/bin/sh
# collbench init: a row per backend x process count with positive times, a ratio
# that is re-create / reuse, the same numbers in the CSV; bad flags exit 2.
# Which of the two is faster is a measurement (docs/PERFORMANCE.md), not a test:
# on a loaded host one 'reuse' step can outlast a re-creation.
. "$(dirname "$0")/lib.sh"

"$BIN" init -P 2 --steps 5 --backend tcp --csv "$WORK/init.csv" >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "init -P 2 --steps 5: exit $rc: $(cat "$WORK/err")"
# backend ranks cold warm recreate reuse ratio
row=$(awk '$1 == "tcp" && $2 == 2' "$WORK/out")
[ -n "$row" ] || fail "no tcp row for 2 ranks in: $(cat "$WORK/out")"
# The table rounds the times to 0.001 ms and the ratio to 0.1, so the ratio is
# checked against the range the unrounded times allow (a 0.008 ms reuse is
# anything in [0.0075, 0.0085)).
echo "$row" | awk '{ h = 0.0005; lo = ($5 - h) / ($6 + h); hi = ($6 > h) ? ($5 + h) / ($6 - h) : 1e30;
                     exit !($3 > 0 && $4 > 0 && $5 > 0 && $6 > 0 &&
                            $7 >= lo - 0.05 && $7 <= hi + 0.05) }' ||
    fail "times not positive or ratio not recreate/reuse: $row"
[ "$(grep -c '^backend,' "$WORK/init.csv")" -eq 1 ] || fail "--csv: header not once: $(cat "$WORK/init.csv")"
csv=$(grep '^tcp,2,1024,5,' "$WORK/init.csv") || fail "--csv: no tcp row: $(cat "$WORK/init.csv")"
# The CSV carries the table's numbers (4 decimals there, 3 or 1 in the table).
echo "$csv $row" | awk -F'[ ,]+' '{ for (i = 5; i <= 8; i++) if ($i - $(i + 7) > 0.0015 || $(i + 7) - $i > 0.0015) exit 1 }' ||
    fail "CSV and table disagree: '$csv' vs '$row'"

expect_exit 2 "\-\-steps" init --steps 0
expect_exit 2 "\-P" init -P 0
expect_exit 2 "\-\-count" init --count -3
expect_exit 2 "\-\-bogus" init --bogus 1
expect_exit 4 "nccl" init -P 2 --backend nccl
finish
