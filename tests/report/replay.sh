# The replay section: collbench replay's rows (its --csv and -J) in the
# findings, analysis.txt, summary_by_config.md and index.html. The checked-in
# two_ranks trace replayed once on tcp (about a second) gives the real rows:
# the numbers shown are the rows' and the trace's (calls, recorded times).
# Rows made here for two backends test the comparison: passes that overlap are
# "within noise", passes apart a factor, one pass no verdict.
. "$(dirname "$0")/lib.sh"
TRACE=$(cd "$(dirname "$0")/../replay/two_ranks" && pwd)

# ms as the report prints them: three significant digits or more, no exponent
ms() { awk -v s="$1" 'BEGIN { m = s * 1e3; d = m >= 100 ? 0 : m >= 10 ? 1 : m >= 1 ? 2 : 3; printf "%." d "f", m }'; }

"$BIN" replay "$TRACE" --backend tcp -T 30 --csv "$WORK/r.csv" -J "$WORK/r.json" >"$WORK/replay.out" 2>&1 ||
    { fail "collbench replay: $(cat "$WORK/replay.out")"; finish; }
OUT=$WORK/one
run_report 0 "$WORK/r.csv" -o "$OUT"
A=$OUT/analysis.txt
H=$OUT/index.html
sum=$(grep ',all,all,' "$WORK/r.csv")
total=$(ms "$(echo "$sum" | cut -d, -f14)")
comm=$(ms "$(echo "$sum" | cut -d, -f15)")
exposed=$(ms "$(echo "$sum" | cut -d, -f17)")
# the program's own communication: t1 - t0 over every call, the mean over ranks
rec=$(cat "$TRACE"/rank*.jsonl | sed -n 's/.*"t0":\([0-9]*\),"t1":\([0-9]*\).*/\1 \2/p' |
    awk '{ s += $2 - $1 } END { printf "%.9f", s / 2 / 1e9 }')
skew=$(ms "$(echo "$sum" | cut -d, -f22)")
said="tcp spends $comm of $total ms in communication ($skew before a call's last rank arrived), $exposed ms exposed (the program recorded $(ms "$rec") ms of communication)."
# files from before the skew columns: no skew said
said_v4="tcp spends $comm of $total ms in communication, $exposed ms exposed (the program recorded $(ms "$rec") ms of communication)."
line="On the trace $TRACE (2 ranks, malloc buffers, gaps recorded, overlap recorded, bind none), $said"
v4_line="On the trace $TRACE (2 ranks, malloc buffers, gaps recorded, overlap recorded, bind none), $said_v4"
# files from before the overlap column: the setting without it; before bind: without that
old_line="On the trace $TRACE (2 ranks, malloc buffers, gaps recorded), $said_v4"
v3_line="On the trace $TRACE (2 ranks, malloc buffers, gaps recorded, overlap recorded), $said_v4"
[ "$(sed -n 2p "$A")" = "$line" ] || fail "first finding '$(sed -n 2p "$A")', want '$line'"
expect_in "$H" "<p>$line</p>"
grep -q "within noise\|shorter than\|no spread" "$A" && fail "one backend, yet a comparison: $(sed -n 2p "$A")"
# replays alone: no empty sections for the communication rows there are none of
grep -q "<h2>Summary by configuration\|<h2>Full results" "$H" && fail "empty communication sections in $H"
# the table: every call of both ranks (36), the recorded communication beside
calls=$(cat "$TRACE"/rank*.jsonl | grep -c '"seq"')
expect_in "$A" "| $TRACE | 2 | malloc | recorded | recorded | none | tcp | 1 | $calls | $total |"
grep -qF "| $comm | $skew | $exposed |" "$A" ||
    fail "communication, its skew and exposed not in the table: $(grep "$TRACE |" "$A")"
# largest costs first: the 16 MiB all-reduces (3 a rank), their recorded time
big=$(cat "$TRACE"/rank*.jsonl | grep '"count":4194304' |
    sed -n 's/.*"t0":\([0-9]*\),"t1":\([0-9]*\).*/\1 \2/p' | awk '{ s += $2 - $1 } END { printf "%.9f", s / 2 / 1e9 }')
costs() { sed -n '/^## Largest costs first/,/^Details/p' "$A" | grep '^| [a-z]' | grep -v '^| collective'; }
first=$(costs | sed -n 1p)
case $first in
"| allreduce | >=16M | 6 | $(ms "$big") | tcp | "*) ;;
*) fail "largest cost first: '$first', want allreduce >=16M, 6 calls, $(ms "$big") ms recorded" ;;
esac
# ... and one call's median, recorded and replayed, at the end of its row
bigrow=$(grep ',tcp,1,2,malloc,recorded,allreduce,>=16M,' "$WORK/r.csv")
case $first in
*"| $(ms "$(echo "$bigrow" | cut -d, -f19)") | $(ms "$(echo "$bigrow" | cut -d, -f18)") |") ;;
*) fail "largest cost first: '$first', want one call's medians $(echo "$bigrow" | cut -d, -f18,19)" ;;
esac
n=$(costs | wc -l)
[ "$n" -eq "$(grep -c ',tcp,1,2,malloc,recorded,[a-z]*,[^a]' "$WORK/r.csv")" ] ||
    fail "largest costs: $n rows, want one per collective and size class of the CSV"
expect_in "$OUT/summary_by_config.md" "## Largest costs first: $TRACE"
# index.html: the section after the findings, before the plots
r=$(grep -n '<section id="replay">' "$H" | cut -d: -f1)
f=$(grep -n '<h2>Findings</h2>' "$H" | cut -d: -f1)
p=$(grep -n '<h2>Plots</h2>' "$H" | cut -d: -f1)
[ -n "$r" ] && [ -n "$f" ] && [ -n "$p" ] && [ "$f" -lt "$r" ] && [ "$r" -lt "$p" ] ||
    fail "index.html: replay section at line '$r', want between the findings ($f) and the plots ($p)"
expect_in "$H" "<td>$TRACE</td><td class=\"n\">2</td><td>malloc</td><td>recorded</td><td>recorded</td><td>none</td><td>tcp</td><td class=\"n\">1</td><td class=\"n\">$calls</td>"
expect_in "$H" ", $(($(wc -l <"$WORK/r.csv") - 1)) replay."
# the JSON alone says the same
run_report 0 "$WORK/r.json" -o "$WORK/json"
[ "$(sed -n 2p "$WORK/json/analysis.txt")" = "$line" ] || fail "JSON: '$(sed -n 2p "$WORK/json/analysis.txt")'"
# the CSV and the JSON of one run: one set of rows
run_report 0 "$WORK/r.csv" "$WORK/r.json" -o "$WORK/both"
grep -q "duplicate rows merged" "$WORK/err" || fail "CSV and JSON of one run not merged: $(cat "$WORK/err")"
[ "$(sed -n 2p "$WORK/both/analysis.txt")" = "$line" ] || fail "CSV + JSON: '$(sed -n 2p "$WORK/both/analysis.txt")'"

# a -J file from before the medians, overlap, bind and skew (no such keys) still reads, the same
sed '/"median_s"\|"recorded_median_s"\|"overlap"\|"bind"\|"skew_s"\|"recorded_skew_s"/d' "$WORK/r.json" | sed 's/"exposed_s": \(.*\),$/"exposed_s": \1/' >"$WORK/old.json"
grep -q median "$WORK/old.json" && fail "old.json still has medians"
run_report 0 "$WORK/old.json" -o "$WORK/old"
[ "$(sed -n 2p "$WORK/old/analysis.txt")" = "$old_line" ] || fail "old JSON: '$(sed -n 2p "$WORK/old/analysis.txt")'"
# and a CSV from before overlap (its first 19 columns)
cut -d, -f1-19 "$WORK/r.csv" >"$WORK/v2.csv"
run_report 0 "$WORK/v2.csv" -o "$WORK/v2"
[ "$(sed -n 2p "$WORK/v2/analysis.txt")" = "$old_line" ] || fail "CSV v2: '$(sed -n 2p "$WORK/v2/analysis.txt")'"
# and one from before bind (its first 20 columns)
cut -d, -f1-20 "$WORK/r.csv" >"$WORK/v3.csv"
run_report 0 "$WORK/v3.csv" -o "$WORK/v3"
[ "$(sed -n 2p "$WORK/v3/analysis.txt")" = "$v3_line" ] || fail "CSV v3: '$(sed -n 2p "$WORK/v3/analysis.txt")'"
# and one from before the skew (its first 21 columns)
cut -d, -f1-21 "$WORK/r.csv" >"$WORK/v4.csv"
run_report 0 "$WORK/v4.csv" -o "$WORK/v4"
[ "$(sed -n 2p "$WORK/v4/analysis.txt")" = "$v4_line" ] || fail "CSV v4: '$(sed -n 2p "$WORK/v4/analysis.txt")'"

# Two backends, made-up rows: summary rows (the comparison reads communication)
H17="trace,backend,pass,nprocs,buffers,gaps,collective,size_class,calls,time_s,recorded_s,ratio,busbw_GBps,total_s,comm_s,gap_s,exposed_s"
row() { # backend pass comm_s
    echo "t,$1,$2,2,malloc,none,all,all,8,$3,,,1,$(awk -v c="$3" 'BEGIN { print c + 0.01 }'),$3,0.01,$3"
    echo "t,$1,$2,2,malloc,none,allreduce,1M-16M,8,$3,,,1,,,,"
}
{ echo "$H17"; row shm 1 0.010; row shm 2 0.012; row tcp 1 0.011; row tcp 2 0.020; } >"$WORK/noise.csv"
run_report 0 "$WORK/noise.csv" -o "$WORK/noise"
expect_in "$WORK/noise/analysis.txt" "shm and tcp are within noise of each other (their passes overlap)."
{ echo "$H17"; row shm 1 0.010; row shm 2 0.012; row tcp 1 0.021; row tcp 2 0.023; } >"$WORK/apart.csv"
run_report 0 "$WORK/apart.csv" -o "$WORK/apart"
expect_in "$WORK/apart/analysis.txt" "On the trace t (2 ranks, malloc buffers, gaps none), shm spends 11.0 of 21.0 ms in communication, 11.0 ms exposed; tcp 22.0 of 32.0 ms, 22.0 ms exposed; shm's communication is 2.0x shorter than tcp's (their passes apart)."
expect_in "$WORK/apart/analysis.txt" "| t | 2 | malloc | none | - | - | shm | 2 | 8 | 21.0 (20.0-22.0) |"
{ echo "$H17"; row shm 1 0.010; row tcp 1 0.021; } >"$WORK/once.csv"
run_report 0 "$WORK/once.csv" -o "$WORK/once"
expect_in "$WORK/once/analysis.txt" "one pass of a backend has no spread to judge a difference by"

# a bad row is named (file and line) and skipped, the rest reported
{ cat "$WORK/apart.csv"; echo "t,shm,3,2,malloc,none,allreduce,huge,8,0.01,,,1,,,,"; } >"$WORK/bad.csv"
run_report 1 "$WORK/bad.csv" -o "$WORK/bad"
grep -q "bad.csv:10: CSV field\|bad.csv:10: unknown size_class 'huge'" "$WORK/err" ||
    fail "bad replay row not named by file and line: $(cat "$WORK/err")"
expect_in "$WORK/bad/analysis.txt" "shm's communication is 2.0x shorter than tcp's"
finish
