# Bad inputs: each gives a message naming the file (and line), the other files
# are still reported, and the exit code is 1. Bad usage: exit 2.
. "$(dirname "$0")/lib.sh"

: >"$WORK/empty.csv"
OUT=$WORK/report
run_report 1 "$FIX/comm_cpu.csv" "$WORK/missing.csv" "$WORK/empty.csv" "$FIX/bad_header.csv" \
    "$FIX/truncated.json" "$FIX/bad_row.csv" -o "$OUT"
E=$WORK/err
grep -q "missing.csv: cannot read: No such file or directory" "$E" || fail "missing file: $(cat "$E")"
grep -q "empty.csv:1: empty file" "$E" || fail "empty file: $(cat "$E")"
grep -q "bad_header.csv:1: unknown CSV header" "$E" || fail "other header: $(cat "$E")"
grep -Eq "truncated.json:[0-9]+: invalid JSON|truncated.json: built without jansson" "$E" ||
    fail "truncated JSON: $(cat "$E")"
grep -q "bad_row.csv:3: CSV field 12 (bytes): '64K' is not a non-negative integer; row skipped" "$E" ||
    fail "bad row: $(cat "$E")"
# The good files and the good row of bad_row.csv are still in the report.
rows=$(($(wc -l <"$OUT/combined.csv") - 1))
[ "$rows" -eq 21 ] || fail "combined.csv has $rows rows, want 20 + 1"
grep -q "2026-11-20T11:00:00Z,cpubox,allreduce,shm" "$OUT/combined.csv" || fail "bad_row.csv's good row is missing"
[ -s "$OUT/index.html" ] || fail "no index.html despite good input"

# Only bad input: still exit 1, and an (empty) report.
run_report 1 "$FIX/bad_header.csv" -o "$WORK/none"
[ "$(wc -l <"$WORK/none/combined.csv")" -eq 1 ] || fail "combined.csv should hold only the header"

# Usage errors.
run_report 2 "$FIX/comm_cpu.csv"
grep -q -- "-o DIR is required" "$WORK/err" || fail "missing -o: $(cat "$WORK/err")"
run_report 2 -o "$WORK/x"
grep -q "no result files" "$WORK/err" || fail "no files: $(cat "$WORK/err")"
run_report 2 --bogus "$FIX/comm_cpu.csv" -o "$WORK/y"
grep -q -- "--bogus: unknown flag" "$WORK/err" || fail "unknown option: $(cat "$WORK/err")"
run_report 0 --help
grep -q "usage: collbench report FILE... -o DIR" "$WORK/out" || fail "--help shows no usage"

finish
