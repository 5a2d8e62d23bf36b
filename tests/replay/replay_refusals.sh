#!/bin/sh
# collbench replay refuses, before any rank starts and writing nothing: ranks
# whose traces disagree, a -P that is not the trace's world, an output that
# is a directory, a call libcoll
# does not have, buffers this host cannot hold, a truncated file.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

no_outputs() {
    [ ! -e "$WORK/r.csv" ] && [ ! -e "$WORK/r.json" ] || fail "$1: an output file was written"
}

expect_exit 2 'the traces disagree: group "0": collective call 3' \
    replay "$HERE/disagree" --backend tcp --csv "$WORK/r.csv" -J "$WORK/r.json"
grep -q 'rank1.jsonl seq 3 (line 6) is allreduce float32 sum count 131072: the count differs' \
    "$WORK/err" || fail "disagree: the difference is not named: $(cat "$WORK/err")"
grep -q '^# replay' "$WORK/out" && fail "disagree: something ran"
no_outputs disagree

expect_exit 2 "-P 3 differs from the trace's world of 2 ranks" \
    replay "$HERE/two_ranks" -P 3 --backend tcp --csv "$WORK/r.csv"
no_outputs -P

expect_exit 2 "--bind: 'socket': recorded, core or none" \
    replay "$HERE/two_ranks" --bind socket --backend tcp --csv "$WORK/r.csv"
no_outputs --bind

expect_exit 2 "--plan: 'always': recorded or probe" \
    replay "$HERE/two_ranks" --plan always --backend tcp --csv "$WORK/r.csv"
no_outputs --plan

mkdir "$WORK/calls.csv"
expect_exit 2 "--calls $WORK/calls.csv: a directory" \
    replay "$HERE/two_ranks" --backend tcp --csv "$WORK/r.csv" --calls "$WORK/calls.csv"
no_outputs --calls

mkdir "$WORK/gather"
cp "$HERE/two_ranks"/rank*.jsonl "$WORK/gather/"
for r in 0 1; do
    sed -i 's/"op":"reduce"/"op":"gather"/' "$WORK/gather/rank$r.jsonl"
done
expect_exit 2 'rank0.jsonl:[0-9]*: seq [0-9]*: gather: libcoll has no gather' \
    replay "$WORK/gather" --backend tcp --csv "$WORK/r.csv"
no_outputs gather

mkdir "$WORK/huge"
for r in 0 1; do # 4 TB all-reduces on both ranks: they agree, the host cannot hold them
    sed 's/"count":4194304/"count":1000000000000/' "$HERE/two_ranks/rank$r.jsonl" \
        >"$WORK/huge/rank$r.jsonl"
done
expect_exit 2 "the trace's buffers need [0-9.]* GiB on this host (rank [01]'s: [0-9.]* GiB), more than 80% of the" \
    replay "$WORK/huge" --backend tcp --csv "$WORK/r.csv"
no_outputs huge

mkdir "$WORK/cut"
cp "$HERE/two_ranks/rank0.jsonl" "$WORK/cut/"
head -n 10 "$HERE/two_ranks/rank1.jsonl" >"$WORK/cut/rank1.jsonl"
expect_exit 2 'cut/rank1.jsonl:10: no footer' replay "$WORK/cut" --backend tcp -J "$WORK/r.json"
no_outputs truncated
finish
