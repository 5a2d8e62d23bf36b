#!/bin/sh
# collbench replay on the handmade traces checked in beside this script: every
# call of every rank replayed on tcp and shm (a table per backend, the rows in
# --csv and -J), and a 3-rank trace with a 2-rank subgroup.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

calls_in() { cat "$1"/rank*.jsonl | grep -c '"seq"'; }

# two ranks, two backends, the results in both files
"$BIN" replay "$HERE/two_ranks" --backend tcp,shm -T 30 --csv "$WORK/r.csv" -J "$WORK/r.json" \
    >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "two_ranks: exit $rc: $(cat "$WORK/err")"
want=$(calls_in "$HERE/two_ranks")
for b in tcp shm; do
    grep -q "^# replay of .*two_ranks on $b (pass 1 of 1): 2 ranks" "$WORK/out" ||
        fail "two_ranks: no table for $b: $(cat "$WORK/out")"
    grep -q "^#    collective     size    calls    time(ms)  recorded(ms)" "$WORK/out" ||
        fail "two_ranks: no column header"
    grep -q "^ *all *all *$want " "$WORK/out" || fail "two_ranks: not all $want calls replayed on $b"
    line=$(grep "^[^,]*two_ranks,$b,1,2,malloc,recorded,all,all,$want," "$WORK/r.csv")
    [ -n "$line" ] || fail "two_ranks: no summary row for $b in the CSV: $(cat "$WORK/r.csv")"
done
# the per-class rows add up to every call, once per backend
sum=$(awk -F, 'NR > 1 && $7 != "all" { n += $9 } END { print n }' "$WORK/r.csv")
[ "$sum" -eq $((2 * want)) ] || fail "two_ranks: the class rows hold $sum calls, want $((2 * want))"
grep -q '"collective": "allreduce"' "$WORK/r.json" || fail "two_ranks: no allreduce row in -J"
grep -q '"size_class": ">=16M"' "$WORK/r.json" || fail "two_ranks: no >=16M row in -J"
grep -q 'replayed/recorded' "$WORK/out" || fail "two_ranks: no recorded time beside the replayed"

# three ranks, one subgroup of two, the calls back to back
"$BIN" replay "$HERE/three_ranks" --backend tcp --gaps none -T 30 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "three_ranks: exit $rc: $(cat "$WORK/err")"
want=$(calls_in "$HERE/three_ranks")
grep -q "^ *all *all *$want " "$WORK/out" || fail "three_ranks: not all $want calls: $(cat "$WORK/out")"
grep -q "gaps none" "$WORK/out" || fail "three_ranks: --gaps none not said"

# passes alternate the backends (A B, then B A), on coll_alloc buffers
"$BIN" replay "$HERE/three_ranks" --backend tcp,shm --passes 2 --buffers coll --gaps none -T 30 \
    >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--passes 2: exit $rc: $(cat "$WORK/err")"
order=$(sed -n 's/^# replay of .* on \([a-z]*\) (pass \([0-9]\) of 2).*buffers coll.*/\1\2/p' "$WORK/out" |
    tr '\n' ' ')
[ "$order" = "tcp1 shm1 shm2 tcp2 " ] || fail "--passes 2: turns in the order '$order'"
finish
