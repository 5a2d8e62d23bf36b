#!/bin/sh
# bench/replay_fidelity.sh's plumbing (nothing timed is judged): the
# checked-in traces laid out as bench/record_ddp.sh lays out its own (two_ranks
# as a coll recording, the gloo profiler fixture as the same program's
# profile) give every row of its table: the recorded times are the traces'
# own, each verdict pass or FAIL, the across-backends rows name the coll
# recording they used (the second from each call's last rank's arrival on); a trace that fails is said and the exit is 1; bad usage 2.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPT=$HERE/../../bench/replay_fidelity.sh
V=torch2.6.0

mkdir -p "$WORK/coll/$V/2ranks" "$WORK/prof/$V/2ranks"
cp "$HERE"/two_ranks/rank*.jsonl "$WORK/coll/$V/2ranks/"
cp "$HERE"/profiler/gloo/rank*.json "$WORK/prof/$V/2ranks/"
gloo=1
"$BIN" info 2>/dev/null | grep -Eq "^ *backend gloo +available" || gloo=0
prof=$WORK/prof
[ "$gloo" = 1 ] || prof=

# ms of the mean over ranks of t1 - t0 of the trace files given
rec_ms() { cat "$@" | sed -n 's/.*"t0":\([0-9]*\),"t1":\([0-9]*\).*/\1 \2/p' |
    awk '{ s += $2 - $1 } END { printf "%.3f", s / 2 / 1e6 }'; }

COLLBENCH=$BIN OUT=$WORK/out PASSES=1 TIMEOUT=30 bash "$SCRIPT" "$WORK/coll" ${prof:+"$prof"} \
    >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$WORK/stderr")"
T=$WORK/out/fidelity.md
cmp -s "$T" "$WORK/stdout" || fail "stdout and fidelity.md differ"
grep -q "^machine: .*, [0-9]* cores; load (uptime) before: .*, after: " "$T" ||
    fail "no machine and load line: $(head -3 "$T")"
grep -q "^| measurement | trace | command | load before / after | recorded (ms) | replayed (ms) |" "$T" ||
    fail "no table header"
coll=$(rec_ms "$WORK/coll/$V/2ranks"/rank*.jsonl)
grep -Eq "^\| coll on shm: communication \| $V/2ranks \| \`[^|]*collbench replay [^|]*--backend shm --buffers malloc --gaps recorded --overlap auto --bind recorded --plan recorded --passes 1 [^|]*\` \| [^|]* / [^|]* \| $coll \| [0-9.]+ \| [0-9.]+ \| 15% \| (pass|FAIL) \|$" "$T" ||
    fail "no communication row for the coll trace (recorded $coll ms): $(grep 'coll on shm' "$T")"
# a median row per collective of the trace
for c in allreduce allgather reducescatter broadcast reduce alltoall barrier send recv; do
    grep -Eq "^\| coll on shm: one $c \(median\) \| $V/2ranks \| - \| - \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 15% \| (pass|FAIL) \|$" "$T" ||
        fail "no median row for $c: $(grep "one $c" "$T")"
done
if [ "$gloo" = 1 ]; then
    imp=$(rec_ms "$WORK/out/import/$V-2ranks"/rank*.jsonl)
    grep -Eq "^\| gloo profile on gloo: communication \| $V/2ranks \| \`[^|]*--backend gloo,shm[^|]*\` \| [^|]* \| $imp \| [0-9.]+ \| [0-9.]+ \| 20% \| (pass|FAIL) \|$" "$T" ||
        fail "no gloo row (recorded $imp ms): $(grep 'on gloo: comm' "$T")"
    grep -Eq "^\| gloo profile on gloo: one allreduce \(median\) \| .* \| - \| - \|$" "$T" ||
        fail "no gloo median row: $(grep 'on gloo: one' "$T")"
    grep -Eq "^\| gloo profile on shm vs the program on coll \(coll/$V/2ranks\) \| $V/2ranks \| .* \| $coll \| [0-9.]+ \| [0-9.]+ \| 25% \| (pass|FAIL) \|$" "$T" ||
        fail "no across-backends row against the coll recording: $(grep 'on shm vs' "$T")"
    # ... and the same from each call's last rank's arrival on (the recording's
    # communication less its skew: less than all of it, on one clock)
    grep -Eq "^\| gloo profile on shm vs the program on coll, after each call's last rank arrived \(coll/$V/2ranks\) \| $V/2ranks \| - \| - \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| 25% \| (pass|FAIL) \|$" "$T" ||
        fail "no across-backends row after the last arrival: $(grep 'last rank arrived' "$T")"
    after=$(grep "last rank arrived" "$T" | cut -d'|' -f6 | tr -d ' ')
    awk -v a="$after" -v c="$coll" 'BEGIN { exit !(a > 0 && a <= c) }' ||
        fail "recorded communication after the last arrival $after ms, want in (0, $coll]"
fi

# a trace whose ranks disagree: said, the exit 1, the other traces measured
mkdir -p "$WORK/coll/torch1.13.1/2ranks"
cp "$HERE"/disagree/rank*.jsonl "$WORK/coll/torch1.13.1/2ranks/"
COLLBENCH=$BIN OUT=$WORK/out2 PASSES=1 TIMEOUT=30 bash "$SCRIPT" "$WORK/coll" >"$WORK/stdout" 2>"$WORK/stderr"
rc=$?
[ "$rc" -eq 1 ] || fail "a failing trace: exit $rc, want 1"
grep -q "failed (.*torch1.13.1/2ranks" "$WORK/stderr" || fail "the failing trace not named: $(cat "$WORK/stderr")"
grep -q "coll on shm: communication | $V/2ranks" "$WORK/stdout" || fail "the good trace not measured"

# bad usage
bash "$SCRIPT" >/dev/null 2>&1
[ $? -eq 2 ] || fail "no arguments: not exit 2"
COLLBENCH=$BIN bash "$SCRIPT" "$WORK/nothing" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing COLL_DIR: not exit 2"
finish
