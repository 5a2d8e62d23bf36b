#!/bin/sh
# --gaps recorded spends a gap's recorded CPU time (the trace's "cpu": the
# program's calling thread) as CPU, where --gaps sleep sleeps the gap's wall
# time: the handmade two_ranks trace with 0.4 s of CPU put on one gap of
# 0.15 ms wall, replayed both ways; the ranks' CPU time differs by about
# 2 x 0.4 s, and the gaps spent (gap_s) hold the 0.4 s only with recorded;
# a profiler trace's (its operators' wall time) is spun at the share of a
# core each rank had: all of it with a core per rank, cores / ranks with more
# ranks than cores.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
CPU_NS=400000000

mkdir "$WORK/t"
for f in "$HERE"/two_ranks/rank*.jsonl; do
    sed 's/\("seq":1,.*"gap":[0-9]*\)}/\1,"cpu":'$CPU_NS'}/' "$f" >"$WORK/t/$(basename "$f")"
done
[ "$(grep -c '"cpu":' "$WORK"/t/rank*.jsonl | awk -F: '{ s += $2 } END { print s }')" -eq 2 ] ||
    fail "the trace was not made: $(grep -h '"seq":1,' "$WORK"/t/rank*.jsonl)"

# The children's CPU seconds (user and system: the spin reads the thread's CPU
# clock, a system call) of one replay of $WORK/${2:-t} with --gaps ${3:-$1},
# and its CSV in $WORK/$1.csv.
cpu_of() {
    sh -c '"$@" >/dev/null 2>"$0.err" || echo "exit $?" >>"$0.err"; times' "$WORK/$1" \
        "$BIN" replay "$WORK/${2:-t}" --backend shm --gaps "${3:-$1}" -T 30 --csv "$WORK/$1.csv" |
        sed -n '2s/^\([0-9]*\)m\([0-9.]*\)s \([0-9]*\)m\([0-9.]*\)s$/\1 \2 \3 \4/p' |
        awk '{ printf "%.3f", $1 * 60 + $2 + $3 * 60 + $4 }'
    if grep -q '^exit' "$WORK/$1.err"; then fail "--gaps $1: $(cat "$WORK/$1.err")"; fi
}
rec=$(cpu_of recorded)
slept=$(cpu_of sleep)
awk -v r="$rec" -v s="$slept" -v c=$CPU_NS 'BEGIN { exit !(r - s >= 2 * c / 1e9 * 0.75) }' ||
    fail "CPU: $rec s with --gaps recorded, $slept s with sleep: want 2 x 0.4 s more"
gap_s() { awk -F, 'NR > 1 && $7 == "all" { print $16; exit }' "$WORK/$1.csv"; }
g=$(gap_s recorded)
awk -v g="$g" -v c=$CPU_NS 'BEGIN { exit !(g >= c / 1e9 * 0.9) }' || fail "recorded: gap_s $g, want 0.4 s or more"
g=$(gap_s sleep)
awk -v g="$g" -v c=$CPU_NS 'BEGIN { exit !(g < c / 1e9 / 2) }' || fail "sleep: gap_s $g, want under 0.2 s"

# A profiler trace's CPU times are its operators' wall times: spun at the
# share of a core a rank had (three_ranks, its source the profiler's): 3 x 0.4
# s with 3 cores or more, 3 x 0.4 x cores / 3 with fewer
mkdir "$WORK/p"
for f in "$HERE"/three_ranks/rank*.jsonl; do
    sed -e 's/\("seq":1,.*"gap":[0-9]*\)}/\1,"cpu":'$CPU_NS'}/' \
        -e 's/"source":"handmade"/"source":"torch-profiler"/' "$f" >"$WORK/p/$(basename "$f")"
done
spun=$(cpu_of prec p recorded)
slept=$(cpu_of psleep p sleep)
awk -v r="$spun" -v s="$slept" -v c=$CPU_NS -v n="$(nproc)" 'BEGIN { want = 3 * c / 1e9 * (n < 3 ? n / 3 : 1)
    exit !(r - s >= want * 0.75 && r - s <= want * 1.25) }' ||
    fail "3 ranks on $(nproc) cores: $spun s of CPU spun, $slept s slept: want 3 x 0.4 s x min(1, cores / 3) more"
finish
