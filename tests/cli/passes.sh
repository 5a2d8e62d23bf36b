# --passes with --same-ranks: every backend's communicator stays alive and the
# sizes are measured interleaved (per size, each backend in turn), the order
# reversed in the second pass; each pass writes its own rows and prints each
# backend's table whole; a bad count is a usage error.
. "$(dirname "$0")/lib.sh"

"$BIN" allreduce --backend tcp,shm -P 2 --same-ranks --passes 2 --sizes 4K,8K --inplace 1 -n 3 -w 1 -c 1 \
    --csv "$WORK/p.csv" >"$WORK/out" 2>"$WORK/err" || fail "exit $?: $(cat "$WORK/err")"
order=$(tail -n +2 "$WORK/p.csv" | cut -d, -f4,13 | tr '\n' ' ')
want="tcp,4096 shm,4096 tcp,8192 shm,8192 shm,4096 tcp,4096 shm,8192 tcp,8192 "
[ "$order" = "$want" ] || fail "rows in order '$order', want '$want'"
grep -q "^# pass 2 of 2, backends in reverse order" "$WORK/out" ||
    fail "no pass heading: $(grep '^# pass' "$WORK/out")"
# each backend's table whole: its header, then its two sizes, per pass
tables=$(awk '/^#  collective/ { b = $5 } /^ +[0-9]/ { printf "%s:%s ", b, $1 }' "$WORK/out")
want="tcp,:4096 tcp,:8192 shm,:4096 shm,:8192 shm,:4096 shm,:8192 tcp,:4096 tcp,:8192 "
[ "$tables" = "$want" ] || fail "tables '$tables', want '$want': $(cat "$WORK/out")"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["wrong"] != 0 { bad = 1 } END { exit bad }' "$WORK/p.csv" || fail "wrong results: $(cat "$WORK/p.csv")"
# each row says its pass (the last column, read by name)
passes=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { printf "%s ", $col["pass"] }' "$WORK/p.csv")
[ "$passes" = "1 1 1 1 2 2 2 2 " ] || fail "pass column '$passes', want 1 1 1 1 2 2 2 2: $(cat "$WORK/p.csv")"
# the JSON's config says how many passes and each row its pass (a build
# without jansson refuses -J: exit 4)
"$BIN" allreduce --backend tcp -P 2 --passes 2 --sizes 4K --inplace 1 -n 2 -w 1 -J "$WORK/p.json" -q 2>"$WORK/err"
case $? in
0) grep -q '"passes": 2' "$WORK/p.json" || fail "the JSON's config does not say passes 2: $(head -c 600 "$WORK/p.json")"
   if command -v jq >/dev/null; then
       rows=$(jq -c '[.results.communication.allreduce[].pass]' "$WORK/p.json")
       [ "$rows" = "[1,2]" ] || fail "JSON rows' pass $rows, want [1,2]"
   fi ;;
4) ;;
*) fail "-J: $(cat "$WORK/err")" ;;
esac

expect_exit 2 "passes" allreduce --passes 0
expect_exit 2 "passes" allreduce --passes 17
expect_exit 2 "passes" allreduce --passes x
finish
