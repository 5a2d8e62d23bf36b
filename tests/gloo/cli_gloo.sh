#!/bin/sh
# collbench --backend gloo: every collective with results checked (#wrong 0 in
# both columns), each of Gloo's allreduce algorithms, and the refusals: a
# bfloat16 reduction is skipped with a note naming the pair, an algorithm Gloo
# lacks names Gloo's.
. "$(dirname "$0")/../cli/lib.sh"

no_wrong() { # $1: what ran; the table in $WORK/out has rows, all #wrong 0
    rows=$(grep -c '^ *[0-9]' "$WORK/out")
    [ "$rows" -ge 1 ] || fail "$1 printed no rows: $(cat "$WORK/out")"
    awk '/^ *[0-9]/ && ($9 != "0" || ($13 != "0" && $13 != "-")) { bad = 1 } END { exit bad }' \
        "$WORK/out" || fail "$1: #wrong != 0: $(cat "$WORK/out")"
}

grep_out() { grep -q -e "$1" "$WORK/out" || fail "$2: $(cat "$WORK/out")"; }

for coll in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
    expect_exit 0 "" "$coll" --backend gloo --sizes 1000,64K -P 3 -w 1 -n 2 -c 2 -r 2
    no_wrong "$coll"
    grep_out "backend gloo" "$coll: the table does not say backend gloo"
done
expect_exit 0 "" barrier --backend gloo -P 3 -w 1 -n 2
grep_out '^ *0 .* N/A ' "barrier: #wrong is not N/A"
for algo in ring ring_chunked halving_doubling bcube; do
    expect_exit 0 "" allreduce --backend gloo --algo "$algo" --sizes 4,100K -P 3 -w 1 -n 2 -c 2
    no_wrong "allreduce --algo $algo"
    grep_out "algo $algo" "allreduce --algo $algo: the table does not name the algorithm"
done
# every dtype/op pair Gloo reduces
for d in float32 float64 float16 int8 uint8 int32 int64; do
    expect_exit 0 "" allreduce --backend gloo --sizes 64 -P 2 -w 0 -n 1 -d "$d" -o all
done
# A bfloat16 reduction is skipped with a note naming the pair; the run goes on (exit 0).
expect_exit 0 "" allreduce --backend gloo --sizes 64 -P 2 -d bfloat16
grep -q "bfloat16 sum: skipped (the gloo backend cannot allreduce bfloat16 with sum" "$WORK/out" ||
    fail "bfloat16 sum on gloo: no note naming the pair: $(cat "$WORK/out")"
expect_exit 2 "Gloo's allreduce algorithms" allreduce --backend gloo --algo rhd --sizes 64 -P 2
expect_exit 3 "allreduce only" broadcast --backend gloo --algo ring --sizes 64 -P 2
finish
