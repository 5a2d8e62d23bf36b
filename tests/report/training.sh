# Training rows: the summary tells batch sizes apart, a run without a
# 1-process baseline says its scaling efficiency is N/A (not 0), and the
# breakdown plot gives every configuration its own row, also for 60 of them.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/train_no_baseline.csv" -o "$OUT"
S=$OUT/summary_by_config.md
for b in 32 64 128; do
    grep -qF "| mlp-2048x2048 | allreduce-sync | box | auto | 2 | $b | 0 | none |" "$S" ||
        fail "summary_by_config.md: no allreduce-sync row for batch $b"
done
expect_in "$S" "| mlp-2048x2048 | ddp | box | auto | 2 | 64 | 25 | none | 120.00 | 100.00 | 20.00 | 17% | 1066.7 | N/A |"
if grep -E '^\| mlp' "$S" | grep -q '| 0.00 |$'; then fail "summary_by_config.md prints scaling efficiency 0"; fi
expect_in "$OUT/analysis.txt" "scaling efficiency N/A"

if have_plots "$WORK/err"; then
    size=$("$PNG_INFO" "$OUT/training_breakdown.png") || fail "training_breakdown.png is not a PNG"
    [ "$size" = "1000 650" ] || fail "training_breakdown.png is $size, want 1000 650"

    # 60 configurations (batch 1..60 of one mode): the page grows, 20 px a row or more.
    MANY=$WORK/many.csv
    head -1 "$FIX/train_no_baseline.csv" >"$MANY"
    sed -n 2p "$FIX/train_no_baseline.csv" >"$WORK/row"
    for b in $(seq 1 60); do
        awk -F, -v OFS=, -v b="$b" '{ $8 = b; print }' "$WORK/row" >>"$MANY"
    done
    run_report 0 "$MANY" -o "$WORK/many"
    size=$("$PNG_INFO" "$WORK/many/training_breakdown.png") || fail "60 rows: training_breakdown.png is not a PNG"
    w=${size% *}
    h=${size#* }
    [ "$w" -eq 1000 ] || fail "60 rows: training_breakdown.png is $w px wide, want 1000"
    [ "$h" -ge 1200 ] || fail "60 rows: training_breakdown.png is $h px tall, want 20 px a row (1200) or more"
fi
finish
