#!/bin/sh
# A dtype/op pair a backend cannot run (issue 27, item 6: Gloo has no bfloat16
# arithmetic) is skipped with a note in the table, no row for it in the CSV,
# and the rest of the sweep runs: exit 0. The README's example runs, on the
# default sweep (which includes gloo where it is built).
. "$(dirname "$0")/lib.sh"

if "$BIN" info | grep -q "backend gloo.*unavailable"; then
    echo "SKIP: this collbench has no gloo backend (libgloo-dev)"
    exit 77
fi
SMALL="--sizes 1K,4K -P 2 -n 2 -w 1 -T 60"

# -d all -o all on gloo: every bfloat16 reduction skipped, the integer types after it run.
expect_exit 0 "" allreduce --backend gloo -d all -o all $SMALL --csv "$WORK/all.csv"
grep -q "bfloat16 max: skipped (the gloo backend cannot allreduce bfloat16 with max" "$WORK/out" ||
    fail "no note for the skipped bfloat16 max: $(cat "$WORK/out")"
col() { # the values of CSV column $2 of file $1, one per line, sorted and unique
    awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { print $col[c] }' "$1" | sort -u
}
[ "$(col "$WORK/all.csv" dtype | tr '\n' ' ')" = "float16 float32 float64 int32 int64 int8 uint8 " ] ||
    fail "-d all on gloo wrote the dtypes '$(col "$WORK/all.csv" dtype | tr '\n' ' ')'"
grep -q ",bfloat16," "$WORK/all.csv" && fail "a row for a skipped pair: $(grep ,bfloat16, "$WORK/all.csv")"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != "0" { bad = 1 } END { exit bad }' "$WORK/all.csv" || fail "wrong results"

# bfloat16 still moves on gloo (broadcast has no arithmetic): not skipped.
expect_exit 0 "" broadcast --backend gloo -d bfloat16 $SMALL
grep -q "skipped" "$WORK/out" && fail "broadcast bfloat16 on gloo skipped: $(cat "$WORK/out")"

# The README's example, on the default sweep: gloo's cell skipped, the rest run.
expect_exit 0 "" allreduce -d bfloat16 -o max --inplace 0 -c 5 $SMALL --csv "$WORK/readme.csv"
grep -q "bfloat16 max: skipped" "$WORK/out" || fail "README example: no skip note: $(cat "$WORK/out")"
[ "$(col "$WORK/readme.csv" backend | tr '\n' ' ')" = "auto shm tcp " ] ||
    fail "README example ran on '$(col "$WORK/readme.csv" backend | tr '\n' ' ')', want auto shm tcp"
finish
