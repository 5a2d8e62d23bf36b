#!/bin/sh
# collbench replay on the handmade traces checked in beside this script: every
# call of every rank replayed on tcp and shm (a table per backend, the rows in
# --csv and -J), and a 3-rank trace with a 2-rank subgroup.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

calls_in() { cat "$1"/rank*.jsonl | grep -c '"seq"'; }

# two ranks, two backends, the results in both files
"$BIN" replay "$HERE/two_ranks" --backend tcp,shm -T 30 --csv "$WORK/r.csv" -J "$WORK/r.json" \
    --calls "$WORK/calls.csv" >"$WORK/out" 2>"$WORK/err"
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
# --calls: a row per call of every rank and backend, in issue order, the
# recorded columns the traces' own (rank 1's third call: t0 1000554659 is
# 0.000554659 s after the earliest first call, t1 - t0 59622 ns)
head -1 "$WORK/calls.csv" | grep -qx 'backend,pass,rank,call,seq,group,op,dtype,bytes,recorded_start_s,recorded_s,replayed_start_s,replayed_s' ||
    fail "--calls: header $(head -1 "$WORK/calls.csv")"
rows=$(($(wc -l <"$WORK/calls.csv") - 1))
[ "$rows" -eq $((2 * want)) ] || fail "--calls: $rows rows, want $((2 * want))"
for b in tcp shm; do
    grep -qx "$b,1,1,1,1,0,barrier,float32,0,0.000554659,0.000059622,[0-9.]*,[0-9.]*" "$WORK/calls.csv" ||
        fail "--calls: rank 1's barrier on $b: $(grep "^$b,1,1,1," "$WORK/calls.csv")"
done
awk -F, 'NR > 1 {
        key = $1 "," $3
        if ($13 <= 0 || $12 < 0) { print "row " NR ": replayed " $12 " " $13; bad = 1 }
        if (key in last && $12 < last[key]) { print "row " NR ": issued before the call before it"; bad = 1 }
        last[key] = $12; n[key]++
    } END { for (k in n) if (n[k] != 18) { print k ": " n[k] " calls"; bad = 1 }; exit bad }' \
    "$WORK/calls.csv" >"$WORK/calls.bad" || fail "--calls: $(cat "$WORK/calls.bad")"

# the recorded gaps were spent (gap_s: the mean over ranks, at least what the
# traces hold), and exposed communication is the total less them
gaps=$(cat "$HERE/two_ranks"/rank*.jsonl | sed -n 's/.*"gap":\([0-9]*\).*/\1/p' |
    awk '{ s += $1 } END { printf "%.6f", s / 2 / 1e9 }')
awk -F, -v want="$gaps" 'NR > 1 && $7 == "all" {
        if ($16 + 0 < want) { print "gap_s " $16 " below the recorded " want; bad = 1 }
        if ($17 + 0 > $14 - $16 + 1e-6) { print "exposed_s " $17 " above total - gaps"; bad = 1 }
    } END { exit bad }' "$WORK/r.csv" >"$WORK/gaps" || fail "two_ranks: $(cat "$WORK/gaps")"

# the per-class rows add up to every call, once per backend, and so do the
# collectives' overall rows (size_class "all")
sum=$(awk -F, 'NR > 1 && $8 != "all" { n += $9 } END { print n }' "$WORK/r.csv")
[ "$sum" -eq $((2 * want)) ] || fail "two_ranks: the class rows hold $sum calls, want $((2 * want))"
sum=$(awk -F, 'NR > 1 && $7 != "all" && $8 == "all" { n += $9 } END { print n }' "$WORK/r.csv")
[ "$sum" -eq $((2 * want)) ] ||
    fail "two_ranks: the collectives' rows hold $sum calls, want $((2 * want))"
# every row has one call's median, replayed and recorded (the trace has times)
awk -F, 'NR > 1 && !($18 > 0 && $19 > 0) { print "no median: " $0; bad = 1 } END { exit bad }' \
    "$WORK/r.csv" >"$WORK/med" || fail "two_ranks: $(head -3 "$WORK/med")"
grep -q "^# median: one call's time" "$WORK/out" || fail "two_ranks: the table says no median"
grep -q '"collective": "allreduce"' "$WORK/r.json" || fail "two_ranks: no allreduce row in -J"
grep -q '"size_class": ">=16M"' "$WORK/r.json" || fail "two_ranks: no >=16M row in -J"
grep -q 'replayed/recorded' "$WORK/out" || fail "two_ranks: no recorded time beside the replayed"

# --bind recorded (the default) places the ranks as the trace says the
# program's were: left to the scheduler without "cpus" (above), pinned to a
# core each where its rank ran on one CPU; --bind overrides it. The column
# says which, in the table and the rows.
[ "$(awk -F, 'NR == 1 { print $21 } NR > 1 && $21 != "none" { print "row: " $0 }' "$WORK/r.csv")" = bind ] ||
    fail "two_ranks: not every row says bind none: $(cat "$WORK/r.csv")"
grep -q ", bind none$" "$WORK/out" || fail "two_ranks: the table does not say bind none"
mkdir "$WORK/pinned"
for r in 0 1; do
    sed '1s/}$/,"cpus":1}/' "$HERE/two_ranks/rank$r.jsonl" >"$WORK/pinned/rank$r.jsonl"
done
# trace show says where the program ran, and on how many CPUs a rank
"$BIN" trace show "$WORK/pinned" >"$WORK/out" 2>"$WORK/err" || fail "trace show: $(cat "$WORK/err")"
grep -qx "recorded on backend coll, host handmade; CPUs a rank could run on: 1" "$WORK/out" ||
    fail "trace show: no line of where the program ran: $(cat "$WORK/out")"
"$BIN" trace show "$HERE/two_ranks" >"$WORK/out" 2>"$WORK/err" || fail "trace show: $(cat "$WORK/err")"
grep -q "; CPUs a rank could run on: not said$" "$WORK/out" || fail "trace show without cpus: $(cat "$WORK/out")"
for how in recorded:core none:none; do
    "$BIN" replay "$WORK/pinned" --bind "${how%%:*}" --backend tcp --gaps none -T 30 \
        --csv "$WORK/p.csv" >"$WORK/out" 2>"$WORK/err" || fail "pinned, --bind ${how%%:*}: $(cat "$WORK/err")"
    grep -q ", bind ${how#*:}$" "$WORK/out" || fail "pinned, --bind ${how%%:*}: not bind ${how#*:}: $(cat "$WORK/out")"
    awk -F, -v want="${how#*:}" 'NR > 1 && $21 != want { bad = 1 } END { exit bad }' "$WORK/p.csv" ||
        fail "pinned, --bind ${how%%:*}: a row not bind ${how#*:}: $(cat "$WORK/p.csv")"
done
"$BIN" replay "$HERE/two_ranks" --bind core --backend tcp --gaps none -T 30 >"$WORK/out" 2>"$WORK/err" ||
    fail "two_ranks --bind core: $(cat "$WORK/err")"
grep -q ", bind core$" "$WORK/out" || fail "two_ranks --bind core: not bind core: $(cat "$WORK/out")"

# --plan recorded (the default) makes each group's communicator with its
# trace's plan (what the program's probes decided): shm's probes run for
# their time, as the program's did, and none of their verdicts is taken;
# --plan probe lets this machine's probes decide. The probes run with a core
# per rank: 2 CPUs at least. The table header says which.
mkdir "$WORK/plan"
for r in 0 1; do
    sed '2a {"group":"0","plan":"COLL_SHM_PRIV_CORE_MAX=0 COLL_SHM_CMA_ALLREDUCE_MIN=64K COLL_SHM_CMA_HUGE_MIN=64K COLL_SHM_PRIV_CORE_HUGE_MAX=0 COLL_SHM_PRIV_CORE_ABOVE_MAX=0"}' \
        "$HERE/two_ranks/rank$r.jsonl" >"$WORK/plan/rank$r.jsonl"
done
for how in recorded probe; do
    COLL_SHM_CORE_PROBE=2 "$BIN" replay "$WORK/plan" --plan "$how" --backend shm --gaps none -T 30 \
        >"$WORK/out" 2>"$WORK/err" || fail "--plan $how: $(cat "$WORK/err")"
    probes=$(grep -c "collbench shm: probe" "$WORK/err")
    case $how in
    recorded)
        grep -q ", plan recorded, " "$WORK/out" || fail "--plan recorded: not said: $(cat "$WORK/out")"
        [ "$(nproc)" -lt 2 ] || [ "$probes" -gt 0 ] || fail "--plan recorded: shm did not probe"
        taken=$(grep "collbench shm: probe" "$WORK/err" | grep -vc "(not taken: its knob is given)$")
        [ "$taken" -eq 0 ] || fail "--plan recorded: a verdict taken: $(cat "$WORK/err")" ;;
    probe)
        grep -q ", plan probed, " "$WORK/out" || fail "--plan probe: not said: $(cat "$WORK/out")"
        [ "$(nproc)" -lt 2 ] || [ "$probes" -gt 0 ] || fail "--plan probe: shm did not probe"
        ! grep -q "not taken" "$WORK/err" || fail "--plan probe: a verdict not taken: $(cat "$WORK/err")" ;;
    esac
done

# three ranks, one subgroup of two, the calls back to back
"$BIN" replay "$HERE/three_ranks" --backend tcp --gaps none -T 30 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "three_ranks: exit $rc: $(cat "$WORK/err")"
want=$(calls_in "$HERE/three_ranks")
grep -q "^ *all *all *$want " "$WORK/out" || fail "three_ranks: not all $want calls: $(cat "$WORK/out")"
grep -q "gaps none" "$WORK/out" || fail "three_ranks: --gaps none not said"
grep -q "gaps 0.000 ms" "$WORK/out" || fail "three_ranks: --gaps none spent gaps"

# rank 2 is done long before ranks 0 and 1 (their subgroup computes 3 s
# more, longer than -T): it waits for them instead of timing out
mkdir "$WORK/tail"
for r in 0 1 2; do
    {
        echo "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":$r,\"world\":3}"
        echo '{"group":"0","ranks":[0,1,2]}'
        echo '{"seq":0,"group":"0","op":"barrier","dtype":"float32","count":0}'
        n=1
        if [ "$r" -lt 2 ]; then
            echo '{"group":"s","ranks":[0,1]}'
            for k in 1 2 3 4 5 6; do
                echo "{\"seq\":$k,\"group\":\"s\",\"op\":\"allreduce\",\"dtype\":\"float32\",\"red\":\"sum\",\"count\":4,\"gap\":500000000}"
            done
            n=7
        fi
        echo "{\"end\":true,\"calls\":$n,\"truncated\":false}"
    } >"$WORK/tail/rank$r.jsonl"
done
"$BIN" replay "$WORK/tail" --backend tcp -T 1 >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "tail: exit $rc: $(cat "$WORK/err")"
grep -q "^ *all *all *15 " "$WORK/out" || fail "tail: not all 15 calls: $(cat "$WORK/out")"

# passes alternate the backends (A B, then B A), on coll_alloc buffers
"$BIN" replay "$HERE/three_ranks" --backend tcp,shm --passes 2 --buffers coll --gaps none -T 30 \
    >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "--passes 2: exit $rc: $(cat "$WORK/err")"
order=$(sed -n 's/^# replay of .* on \([a-z]*\) (pass \([0-9]\) of 2).*buffers coll.*/\1\2/p' "$WORK/out" |
    tr '\n' ' ')
[ "$order" = "tcp1 shm1 shm2 tcp2 " ] || fail "--passes 2: turns in the order '$order'"
finish
