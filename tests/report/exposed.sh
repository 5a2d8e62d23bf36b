# No impossible numbers: exposed communication (step - compute, a difference
# of two measurements) is never shown below zero. A 1-process row at -0.04 ms
# and a 2-process row at -37 ms (inside a wide step spread) show as 0 with the
# step's spread in every table, the analysis and the page; a row beyond its
# noise keeps its value alone; full_results.md keeps the raw difference in a
# column of its own.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/train_negative.csv" -o "$OUT"
for f in summary_by_config.md analysis.txt index.html; do
    # a negative time or share: "-0.04", "-37.00", "-23%"
    if grep -E '(^|[ |(>])-[0-9]+(\.[0-9]+)?( ms|%| \|)' "$OUT/$f" >"$WORK/neg"; then
        fail "$f prints a negative exposed communication: $(head -3 "$WORK/neg")"
    fi
done
S=$OUT/summary_by_config.md
expect_in "$S" "| mlp-2048x2048 | single | box | auto | 1 | 64 | 0 | none | 100.00 | 100.04 | 0.00 ±0.28 | 0% |"
expect_in "$S" "| mlp-2048x2048 | allreduce-sync | box | auto | 2 | 64 | 0 | none | 163.00 | 200.00 | 0.00 ±80.00 | 0% |"
expect_in "$S" "| mlp-2048x2048 | ddp | box | auto | 2 | 64 | 25 | none | 130.00 | 100.00 | 30.00 | 23% |"
expect_in "$OUT/analysis.txt" "exposed communication 0.00 ms (step - compute is within the step's noise of 80.00 ms)"
expect_in "$OUT/analysis.txt" "exposed communication 30.00 ms (23% of the step)"
# the raw difference stays, in its own column
expect_in "$OUT/full_results.md" "| 0.00 ±80.00 | 0.0 | -37.000 |"
finish
