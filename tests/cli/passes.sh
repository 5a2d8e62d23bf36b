# --passes: the backends of one launch run again in reverse order (A B, B A),
# each pass writing its own rows; a bad count is a usage error.
. "$(dirname "$0")/lib.sh"

"$BIN" allreduce --backend tcp,shm -P 2 --same-ranks --passes 2 --sizes 4K --inplace 1 -n 3 -w 1 -c 1 \
    --csv "$WORK/p.csv" >"$WORK/out" 2>"$WORK/err" || fail "exit $?: $(cat "$WORK/err")"
order=$(tail -n +2 "$WORK/p.csv" | cut -d, -f4 | tr '\n' ' ')
[ "$order" = "tcp shm shm tcp " ] || fail "rows in backend order '$order', want 'tcp shm shm tcp '"
grep -q "^# pass 2 of 2, backends in reverse order" "$WORK/out" ||
    fail "no pass heading: $(grep '^# pass' "$WORK/out")"
awk -F, 'NR > 1 && $NF != 0 { bad = 1 } END { exit bad }' "$WORK/p.csv" || fail "wrong results: $(cat "$WORK/p.csv")"

expect_exit 2 "passes" allreduce --passes 0
expect_exit 2 "passes" allreduce --passes 17
expect_exit 2 "passes" allreduce --passes x
finish
