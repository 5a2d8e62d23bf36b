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

# Hostile text in fields: Markdown escapes it, combined.csv guards formulas
# (text fields only: not a negative number) and reads back as it was.
H=$(head -n 1 "$FIX/comm_cpu.csv")
R=$(sed -n 2p "$FIX/comm_cpu.csv")
{
    echo "$H"
    echo "$R" | sed 's/,cpubox,allreduce,shm,/,<script>alert(1)<\/script>,allreduce,a|b`[x]\&,/'
    echo "$R" | sed "s/,cpubox,/,=cmd|' \/C calc'!A0,/"
} >"$WORK/evil.csv"
run_report 0 "$WORK/evil.csv" -o "$WORK/evil"
for f in full_results.md summary_by_config.md analysis.txt; do
    if grep -qF "<script>" "$WORK/evil/$f"; then fail "$f holds <script> raw"; fi
done
expect_in "$WORK/evil/full_results.md" '| a\|b\`\[x\]&amp; |'
expect_in "$WORK/evil/summary_by_config.md" '| &lt;script>alert(1)&lt;/script> |'
# > stays itself in text too (no entity where nothing renders it)
if grep -q '&gt;' "$WORK/evil/analysis.txt"; then fail "analysis.txt holds &gt;: $(grep -m1 '&gt;' "$WORK/evil/analysis.txt")"; fi
expect_in "$WORK/evil/combined.csv" "Z,'=cmd|' /C calc'!A0,allreduce,"
if grep -q "^=\|,=" "$WORK/evil/combined.csv"; then fail "combined.csv: a field starts with ="; fi
sed -n 2p "$FIX/train_negative.csv" | grep -q ",-" || fail "train_negative.csv lost its negative number"
run_report 0 "$FIX/train_negative.csv" -o "$WORK/neg"
if grep -q ",'-" "$WORK/neg/combined_training.csv"; then fail "a negative number was guarded"; fi
grep -q ",-[0-9]" "$WORK/neg/combined_training.csv" || fail "no negative number in combined_training.csv"
run_report 0 "$WORK/evil/combined.csv" -o "$WORK/again"
cmp -s "$WORK/evil/combined.csv" "$WORK/again/combined.csv" || fail "combined.csv does not read back as it was"

# A UTF-8 BOM and a quoted header (Excel, pandas) are read; an unknown header
# is shown with its invisible bytes escaped.
printf '\357\273\277' | cat - "$FIX/comm_cpu.csv" >"$WORK/bom.csv"
sed '1s/\([^,]*\)/"\1"/g' "$FIX/comm_cpu.csv" >"$WORK/quoted.csv"
run_report 0 "$WORK/bom.csv" "$WORK/quoted.csv" -o "$WORK/bom"
[ "$(($(wc -l <"$WORK/bom/combined.csv") - 1))" -eq 20 ] || fail "BOM or quoted header: $(cat "$WORK/err")"
printf '\357\273\277\357\273\277time,host\n' >"$WORK/bom2.csv"
run_report 1 "$WORK/bom2.csv" -o "$WORK/bom2"
expect_in "$WORK/err" "unknown CSV header '\\xef\\xbb\\xbftime,host'"

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
