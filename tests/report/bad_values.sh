# Rows that parse but cannot be measurements: a NaN, infinite or negative time,
# a negative or NaN bandwidth, a control byte in a text field. Each is skipped
# with a warning naming file:line (JSON: the row's path), so no plot, table or
# comparison uses it; the good rows, and NaN where the schema means "not
# recorded" (p25, p75), are kept.
. "$(dirname "$0")/lib.sh"

H=$(head -n 1 "$FIX/buffers_noise.csv")
K=2026-11-23T12:00:00Z,box,allreduce,shm,auto,cpu,malloc,2,1,float32,sum,0
# row BYTES AVG P25 P75 MAX BUSBW: a data line of the current schema.
row() { echo "$K,$1,256,5,20,$2,85.5,$3,100,$4,126,$5,10.4,$6,0"; }
{
    echo "$H"
    row 1024 nan 95 105 138 10.4     # line 2
    row 2048 100 95 105 inf 10.4     # line 3
    row 4096 -100 95 105 138 10.4    # line 4
    row 8192 100 95 105 138 -10.4    # line 5
    row 16384 100 nan nan 138 10.4   # kept: p25/p75 not recorded
    row 32768 100 95 105 138 10.4    # kept
} >"$WORK/values.csv"
{
    echo "$H"
    row 1024 100 95 105 138 nan      # line 2
    printf '%s\n' "$(row 65536 100 95 105 138 10.4)" | sed "s/,box,/,b$(printf '\033')[31mox,/"   # line 3
    echo "$K,131072,32768,5,20,0,0,0,0,0,0,0,0,0,0"   # line 4: every time 0, nothing measured
} >"$WORK/values2.csv"
T=$(head -n 1 "$FIX/train_no_baseline.csv")
{
    echo "$T"
    echo "2026-11-23T12:00:00Z,box,mlp,6316042,ddp,shm,2,32,25,none,20,-60,60,66,50,10,16.67,1066.67,0"
    echo "2026-11-23T12:00:00Z,box,mlp,6316042,ddp,shm,2,64,25,none,20,60,60,66,50,-10,-16.67,1066.67,0"
} >"$WORK/train.csv"

run_report 1 "$WORK/values.csv" "$WORK/values2.csv" "$WORK/train.csv" -o "$WORK/rep"
E=$WORK/err
expect_in "$E" "values.csv:2: time_us_avg is nan; times must be finite and >= 0; row skipped"
expect_in "$E" "values.csv:3: time_us_max is inf; times must be finite and >= 0; row skipped"
expect_in "$E" "values.csv:4: time_us_avg is -100; times must be finite and >= 0; row skipped"
expect_in "$E" "values.csv:5: busbw_GBps is -10.4; bandwidths must be finite and >= 0; row skipped"
expect_in "$E" "values2.csv:2: busbw_GBps is nan; bandwidths must be finite and >= 0; row skipped"
expect_in "$E" "values2.csv:3: host holds a control byte (\\x1b); row skipped"
expect_in "$E" "values2.csv:4: every time is 0 (time_us_avg, time_us_min, time_us_max): nothing was measured; row skipped"
expect_in "$E" "train.csv:2: step_ms_avg is -60; it must be finite and >= 0; row skipped"
C=$WORK/rep/combined.csv
[ "$(($(wc -l <"$C") - 1))" -eq 2 ] || fail "combined.csv: want the 2 good rows, got: $(cat "$C")"
grep -q ",16384,.*,nan,100.000,nan," "$C" || fail "the row without p25/p75 was not kept: $(cat "$C")"
[ "$(($(wc -l <"$WORK/rep/combined_training.csv") - 1))" -eq 1 ] ||
    fail "combined_training.csv: want the row with negative exposed communication only"
if grep '^| allreduce' "$WORK/rep/summary_by_config.md" | grep -Eq "nan|inf|-[0-9]"; then
    fail "a bad value reached the summary: $(grep '^| allreduce' "$WORK/rep/summary_by_config.md")"
fi

# JSON: null (NaN) and negative values are refused the same way.
if ! grep -q "built without jansson" "$E"; then
    sed -e 's/"time_us_avg": 15.0/"time_us_avg": null/' -e 's/"busbw_GBps": 20.9715/"busbw_GBps": -1/' \
        "$FIX/gpu_and_train.json" >"$WORK/values.json"
    run_report 1 "$WORK/values.json" -o "$WORK/out_json"
    expect_in "$E" "values.json: results.communication.allreduce[0]: time_us_avg is nan; times must be finite and >= 0; row skipped"
    expect_in "$E" "values.json: results.communication.allreduce[1]: busbw_GBps is -1; bandwidths must be finite and >= 0; row skipped"
    if command -v jq >/dev/null; then
        jq '.results.communication.allreduce[0] |= (.time_us_avg = 0 | .time_us_min = 0 |
            .time_us_p50 = 0 | .time_us_p99 = 0 | .time_us_max = 0)' \
            "$FIX/gpu_and_train.json" >"$WORK/zero.json"
        run_report 1 "$WORK/zero.json" -o "$WORK/out_zero"
        expect_in "$E" "zero.json: results.communication.allreduce[0]: every time is 0"
    fi
fi

finish
