#!/bin/sh
# --per-iter FILE: one row per rank, size, placement and timed iteration, the
# header once across configurations; an unwritable file is refused (exit 2)
# before any rank starts.
. "$(dirname "$0")/lib.sh"

F="$WORK/iters.csv"
"$BIN" allreduce --sizes 1K,4K -P 2,3 -n 4 -w 1 --per-iter "$F" --backend tcp -q 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "allreduce --per-iter: exit $rc: $(cat "$WORK/err")"
[ "$(head -n 1 "$F")" = "collective,backend,nprocs,bytes,in_place,iter,rank,time_us" ] ||
    fail "bad header: $(head -n 1 "$F")"
[ "$(grep -c '^collective,' "$F")" -eq 1 ] || fail "header not exactly once"
rows=$(grep -c '^allreduce,tcp,' "$F")
# (2 + 3 ranks) x 2 sizes x 2 placements x 4 iterations
[ "$rows" -eq 80 ] || fail "$rows rows, want 80"
# every (nprocs, bytes, in_place, iter, rank) exactly once, ranks within the world
dups=$(tail -n +2 "$F" | cut -d, -f3-7 | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || fail "$dups duplicate rows"
tail -n +2 "$F" | awk -F, '$7 < 0 || $7 >= $3 || $6 < 0 || $6 >= 4 || !($8 > 0) { bad = 1 }
                           END { exit bad }' || fail "a row with a bad rank, iteration or time"
for n in 2 3; do
    got=$(awk -F, -v n="$n" '$3 == n' "$F" | wc -l)
    [ "$got" -eq $((n * 16)) ] || fail "$got rows for $n ranks, want $((n * 16))"
done

expect_exit 2 "per-iter" allreduce --sizes 1K -P 2 -n 2 -w 0 --backend tcp --per-iter "$WORK/no/such/dir/f.csv"
expect_exit 2 "per-iter" allreduce --per-iter ""
finish
