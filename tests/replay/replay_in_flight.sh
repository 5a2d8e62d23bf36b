#!/bin/sh
# collbench replay --overlap on a handmade trace whose first three calls were
# in flight together (issued at 0, 100 and 150 ms, all ending at 190-195 ms)
# and a fourth issued at 200 ms: kept in flight as recorded, the replay issues
# each call when the program did, so it lasts the recorded 200 ms; each call
# alone (--overlap none), only the recorded gaps are spent (5 ms); --gaps busy
# keeps the schedule, spun. On shm and tcp, so that the per-group completion
# threads run under the sanitizers. Then the ranks' recorded arrival at their
# first call (replay_arrival.h), on one host's clock and on two, their
# recorded exit from a call (replay_exit.h), and the communication before a
# call's last rank arrived (replay_skew.h).
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

total_ms() { # the summary row's total_s of backend $2 in CSV $1, in ms
    awk -F, -v b="$2" 'NR > 1 && $2 == b && $7 == "all" && $8 == "all" { printf "%d", $14 * 1000 }' "$1"
}
for ov in recorded none; do
    "$BIN" replay "$HERE/in_flight" --backend shm,tcp --overlap $ov -T 30 --csv "$WORK/$ov.csv" \
        >"$WORK/out" 2>"$WORK/err" || fail "--overlap $ov: exit $?: $(cat "$WORK/err")"
done
for b in shm tcp; do
    kept=$(total_ms "$WORK/recorded.csv" $b)
    alone=$(total_ms "$WORK/none.csv" $b)
    [ -n "$kept" ] && [ -n "$alone" ] || fail "$b: no summary rows: $(cat "$WORK/recorded.csv")"
    [ "$kept" -ge 195 ] || fail "$b: kept in flight, the replay took $kept ms, the program 200"
    [ "$alone" -lt 100 ] || fail "$b: each call alone took $alone ms, want the 5 ms of gaps"
done
# busy gaps: the same schedule, spun (the rows say how the gaps were spent)
"$BIN" replay "$HERE/in_flight" --backend shm --gaps busy -T 30 --csv "$WORK/busy.csv" \
    >"$WORK/out" 2>"$WORK/err" || fail "--gaps busy: exit $?: $(cat "$WORK/err")"
busy=$(total_ms "$WORK/busy.csv" shm)
[ "${busy:-0}" -ge 195 ] || fail "--gaps busy: the replay took '$busy' ms, the program 200"
awk -F, 'NR > 1 && $6 != "busy" { bad = 1 } END { exit bad }' "$WORK/busy.csv" ||
    fail "--gaps busy: rows without gaps busy: $(cat "$WORK/busy.csv")"
# the default (auto) keeps them in flight (a program on torch's gloo on the
# gloo backend: replay_lanes.sh)
"$BIN" replay "$HERE/in_flight" --backend shm -T 30 >"$WORK/out" 2>&1 &&
    grep -q "^# replay of .* gaps recorded, overlap recorded" "$WORK/out" ||
    fail "default overlap: $(head -3 "$WORK/out")"
# the ranks' arrival: rank 1 recorded every call 150 ms later than rank 0
# (one host, one clock), so rank 0's first call waited 150 ms for it, and each
# call alone makes that wait again; on another host's clock it is not made
mkdir -p "$WORK/late" "$WORK/apart"
cp "$HERE/in_flight/rank0.jsonl" "$WORK/late/"
cp "$HERE/in_flight/rank0.jsonl" "$WORK/apart/"
awk '{ while (match($0, /"t[01]":[0-9]+/)) { k = substr($0, RSTART, 4); v = substr($0, RSTART + 5, RLENGTH - 5)
       $0 = substr($0, 1, RSTART - 1) k "@" (v + 150000000) substr($0, RSTART + RLENGTH) }
       gsub(/"t0"@/, "\"t0\":"); gsub(/"t1"@/, "\"t1\":"); print }' \
    "$HERE/in_flight/rank1.jsonl" >"$WORK/late/rank1.jsonl"
sed '1s/"host":"handmade"/"host":"elsewhere"/' "$WORK/late/rank1.jsonl" >"$WORK/apart/rank1.jsonl"
for d in late apart; do
    "$BIN" replay "$WORK/$d" --backend shm --overlap none -T 30 --csv "$WORK/$d.csv" >"$WORK/out" 2>&1 ||
        fail "arrival ($d): exit $?: $(cat "$WORK/out")"
done
late=$(total_ms "$WORK/late.csv" shm)
apart=$(total_ms "$WORK/apart.csv" shm)
[ "${late:-0}" -ge 145 ] || fail "rank 1 recorded 150 ms late: the replay took '$late' ms"
[ "${apart:-999}" -lt 100 ] || fail "ranks on two hosts' clocks: the replay took '$apart' ms, want no arrival"
# the ranks' exit: both reached call 0 together, rank 1 (the last, by a hair)
# left it 100 ms after rank 0, so after a 1 ms gap rank 0 waited 100 ms in
# call 1; each call alone, the replay's ranks leave call 0 together and rank 1
# spends its lateness with the gap (on 2 CPUs or more: with more ranks than
# cores it is not spent); on two hosts' clocks it does not
mkdir -p "$WORK/exit"
cp "$HERE/exit_late/rank0.jsonl" "$WORK/exit/"
sed '1s/"host":"handmade"/"host":"elsewhere"/' "$HERE/exit_late/rank1.jsonl" >"$WORK/exit/rank1.jsonl"
for d in "$HERE/exit_late" "$WORK/exit"; do
    "$BIN" replay "$d" --backend shm --overlap none -T 30 --csv "$WORK/exit.csv" >"$WORK/out" 2>&1 ||
        fail "exit lateness ($d): exit $?: $(cat "$WORK/out")"
    total_ms "$WORK/exit.csv" shm >"$WORK/exit.ms"
    # the summary's skew_s and recorded_skew_s in ms ("-" where absent)
    awk -F, 'NR > 1 && $7 == "all" && $8 == "all" {
        printf "%s %s", $22 == "" ? "-" : int($22 * 1000 + 0.5), $23 == "" ? "-" : int($23 * 1000 + 0.5) }' \
        "$WORK/exit.csv" >"$WORK/skew.ms"
    [ "$d" = "$WORK/exit" ] || exit_late=$(cat "$WORK/exit.ms") skew_late=$(cat "$WORK/skew.ms")
done
exit_apart=$(cat "$WORK/exit.ms") skew_apart=$(cat "$WORK/skew.ms")
[ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ] || [ "${exit_late:-0}" -ge 95 ] || fail "rank 1 recorded leaving 100 ms late: the replay took '$exit_late' ms"
[ "${exit_apart:-999}" -lt 50 ] || fail "exit lateness on two hosts' clocks: the replay took '$exit_apart' ms"
# the skew (replay_skew.h): rank 0 recorded 100 ms of call 1 before rank 1
# arrived, rank 1 none, so 50 ms over the ranks, and the replay, spending rank
# 1's lateness, waits as long; on two hosts' clocks nothing is recorded (empty)
# and nothing made
set -- $skew_late
[ "$2" = 50 ] || fail "recorded skew on one clock: '$2' ms, want 50 (skew_s, recorded_skew_s: $skew_late)"
if [ "$(getconf _NPROCESSORS_ONLN)" -ge 2 ]; then
    [ "$1" -ge 45 ] && [ "$1" -le 80 ] || fail "replayed skew on one clock: '$1' ms, want about 50"
fi
set -- $skew_apart
[ "$2" = - ] && [ "$1" != - ] && [ "$1" -lt 20 ] ||
    fail "skew on two hosts' clocks: '$skew_apart' (skew_s, recorded_skew_s in ms), want '<20 -'"
"$BIN" replay "$HERE/in_flight" --overlap sometimes >"$WORK/out" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q "overlap.*'sometimes': auto, recorded or none" "$WORK/out" ||
    fail "--overlap sometimes: exit $rc: $(cat "$WORK/out")"
echo "kept in flight $kept ms on tcp (the program: 200 ms), each call alone $alone ms;" \
    "rank 1 recorded 150 ms late: $late ms, leaving 100 ms late: $exit_late ms (skew $skew_late ms)"
finish
