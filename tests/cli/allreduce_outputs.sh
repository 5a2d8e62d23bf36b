#!/bin/sh
# A tiny all-reduce: table with #wrong 0, CSV appended with one header, JSON parses.
. "$(dirname "$0")/lib.sh"

HEADER="timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong,pass"
RUN="allreduce -b 1K -e 8K -P 2,3 -w 1 -n 3 --backend tcp --csv $WORK/r.csv -J $WORK/r.json"

expect_exit 0 "" $RUN
cp "$WORK/out" "$WORK/table"
# rows: 4 sizes x 2 process counts, each with out-of-place and in-place #wrong (columns 9, 13)
rows=$(grep -c '^ *[0-9]' "$WORK/table")
[ "$rows" -eq 8 ] || fail "expected 8 table rows, got $rows"
awk '/^ *[0-9]/ && ($9 != "0" || $13 != "0") { bad = 1 } END { exit bad }' "$WORK/table" \
    || fail "a table row has #wrong != 0: $(cat "$WORK/table")"
grep -q "Avg bus bandwidth" "$WORK/table" || fail "no 'Avg bus bandwidth' line"

[ "$(head -n 1 "$WORK/r.csv")" = "$HEADER" ] || fail "CSV header differs: $(head -n 1 "$WORK/r.csv")"
lines=$(wc -l <"$WORK/r.csv")
[ "$lines" -eq 17 ] || fail "CSV: expected header + 16 rows, got $lines lines"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != "0" { bad = 1 } END { exit bad }' "$WORK/r.csv" || fail "CSV wrong != 0"

# jq (scripts/deps.sh installs it) is the independent JSON parser here.
command -v jq >/dev/null || fail "jq is needed to check the JSON output (scripts/deps.sh installs it)"
n=$(jq '.results.communication.allreduce | length' "$WORK/r.json") || fail "JSON does not parse"
[ "$n" -eq 16 ] || fail "JSON: expected 16 allreduce rows, got $n"
jq -e '[.results.communication.allreduce[] | select(.wrong != 0)] | length == 0' "$WORK/r.json" \
    >/dev/null || fail "JSON has rows with wrong != 0"
jq -e '.name and .world_size == 3 and .timestamp and .config.warmup_iters == 1 and .config.benchmark_iters == 3' \
    "$WORK/r.json" >/dev/null || fail "JSON lacks the docs/DESIGN.md top-level keys: $(head -c 400 "$WORK/r.json")"
# the cores the ranks could run on, under the rows' host (the cost model's fit needs them)
jq -e --argjson n "$(nproc)" '.results.communication.allreduce[0].host as $h | .machines[$h].cores == $n' \
    "$WORK/r.json" >/dev/null || fail "JSON: machines.<host>.cores is not $(nproc): $(jq -c .machines "$WORK/r.json")"

# A second run appends: more rows, still one header.
expect_exit 0 "" $RUN
lines=$(wc -l <"$WORK/r.csv")
[ "$lines" -eq 33 ] || fail "CSV after a second run: expected 33 lines, got $lines"
headers=$(grep -c '^timestamp,' "$WORK/r.csv")
[ "$headers" -eq 1 ] || fail "CSV has $headers header lines"

# -q prints nothing on stdout.
expect_exit 0 "" allreduce --sizes 1K -P 2 -w 1 -n 2 --backend tcp -q
[ -s "$WORK/out" ] && fail "-q printed: $(cat "$WORK/out")"
finish
