#!/bin/sh
# collbench trace import on the checked-in profiler traces (gloo: a real torch
# 2.6 trace; nccl: handmade record_param_comms) writes rank files replay reads,
# with the importer's warnings; trace show summarizes them; bad input and a
# DIR with rank files already are refused (exit 2), nothing written.
. "$(dirname "$0")/../../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

# field FILE LINE KEY: the value of "KEY" on line LINE of FILE (numbers, strings)
field() {
    sed -n "${2}p" "$1" | sed -n "s/.*\"$3\":\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

# ---- nccl: record_param_comms and their GPU kernels, two groups, splits, send/recv ----
expect_exit 0 "" trace import "$HERE/nccl/rank1.pt.trace.json" "$HERE/nccl/rank0.pt.trace.json" \
    -o "$WORK/nccl"
for r in 0 1; do
    f="$WORK/nccl/rank$r.jsonl"
    [ -f "$f" ] || { fail "nccl: no rank$r.jsonl"; continue; }
    [ "$(field "$f" 1 source)" = torch-profiler ] || fail "nccl rank$r: header $(sed -n 1p "$f")"
    [ "$(field "$f" 1 rank)" = "$r" ] || fail "nccl rank$r: rank from distributedInfo: $(sed -n 1p "$f")"
    [ "$(tail -1 "$f")" = '{"end":true,"calls":7,"truncated":false}' ] ||
        fail "nccl rank$r: footer $(tail -1 "$f")"
done
grep -q '"seq":0,"group":"0","op":"allreduce","dtype":"float32","red":"sum","count":1048576' \
    "$WORK/nccl/rank0.jsonl" || fail "nccl: the allreduce (once, not its nested events)"
grep -q '"op":"broadcast","dtype":"bfloat16","red":"","count":4096,"in":4096,"out":4096,"root":1' \
    "$WORK/nccl/rank0.jsonl" || fail "nccl: the broadcast from root 1"
grep -q '"group":"1","op":"alltoall".*"in_splits":\[3,5\]' "$WORK/nccl/rank0.jsonl" ||
    fail "nccl: the all-to-all's splits in group 1"
grep -q '"op":"recv".*"peer":0' "$WORK/nccl/rank1.jsonl" || fail "nccl: rank 1 receives from 0"
grep -q '^{"group":"1","ranks":\[0,1\],"desc":"undefined"}$' "$WORK/nccl/rank0.jsonl" ||
    fail "nccl: group 1's ranks from pg_config"
# each call ends with its NCCL kernel on the GPU (kernel start + 150 us on rank 1)
grep -q '"op":"broadcast".*"t0":1764312000001603500,"t1":1764312000001783500,' \
    "$WORK/nccl/rank1.jsonl" || fail "nccl: the broadcast does not end with its kernel"
grep -q 'without the backend' "$WORK/err" && fail "nccl: a call without its kernel: $(cat "$WORK/err")"
grep -q 'rank0.pt.trace.json: 2 calls with a reduction.*assumed sum' "$WORK/err" ||
    fail "nccl: no warning about the reduction: $(cat "$WORK/err")"
grep -q '^group "1": ranks 0,1; undefined' "$WORK/out" || fail "nccl: summary: $(cat "$WORK/out")"
grep -Eq '^  alltoall +1 +40 B' "$WORK/out" || fail "nccl: summary's alltoall: $(cat "$WORK/out")"

expect_exit 0 "" trace show "$WORK/nccl"
grep -Eq '^  allreduce +1 +4.0 MiB' "$WORK/out" || fail "show: $(cat "$WORK/out")"

# ---- gloo: a real torch 2.6 profiler trace (c10d and gloo events, record_shapes) ----
expect_exit 0 "" trace import "$HERE/gloo/rank0.pt.trace.json" "$HERE/gloo/rank1.pt.trace.json" \
    -o "$WORK/gloo"
for r in 0 1; do
    f="$WORK/gloo/rank$r.jsonl"
    [ -f "$f" ] || { fail "gloo: no rank$r.jsonl"; continue; }
    [ "$(field "$f" 1 backend)" = gloo ] || fail "gloo rank$r: header $(sed -n 1p "$f")"
    grep -q '"op":"allreduce","dtype":"float32","red":"sum","count":1024,' "$f" ||
        fail "gloo rank$r: the allreduce of 1024 floats"
    grep -q '"op":"broadcast","dtype":"int64","red":"","count":64,"in":64,"out":64,"root":1' "$f" ||
        fail "gloo rank$r: the broadcast of 64 longs from rank 1"
    grep -q '"op":"allgather","dtype":"float32","red":"","count":256,"in":256,"out":512' "$f" ||
        fail "gloo rank$r: the allgather"
    grep -q '"op":"reduce","dtype":"int64","red":"sum","count":64,"in":64,"out":64,"root":1' "$f" ||
        fail "gloo rank$r: the reduce to rank 1"
    grep -q '"op":"alltoall","dtype":"float32","red":"","count":8,"in":16,"out":16' "$f" ||
        fail "gloo rank$r: the all-to-all, 8 per peer"
    grep -q '"op":"reducescatter","dtype":"float32","red":"sum","count":16,"in":32,"out":16' "$f" ||
        fail "gloo rank$r: the reduce-scatter"
    grep -q '"op":"allreduce","dtype":"float32","red":"sum","count":100,' "$f" ||
        fail "gloo rank$r: the all-reduce in the second group"
    [ "$(tail -1 "$f")" = '{"end":true,"calls":11,"truncated":false}' ] ||
        fail "gloo rank$r: footer $(tail -1 "$f")"
done
grep -q '"op":"send","dtype":"float32","red":"","count":256,.*"peer":1' "$WORK/gloo/rank0.jsonl" ||
    fail "gloo: rank 0 sends to 1"
grep -q '"op":"recv","dtype":"float32","red":"","count":256,.*"peer":0' "$WORK/gloo/rank1.jsonl" ||
    fail "gloo: rank 1 receives from 0"
grep -q 'distributedInfo lists 2 groups with rank 0' "$WORK/err" ||
    fail "gloo: the second group's calls placed in the world's is not said: $(cat "$WORK/err")"
grep -q 'without the backend' "$WORK/err" && fail "gloo: a call without its gloo event: $(cat "$WORK/err")"
grep -q 'rank1.pt.trace.json: 11 calls (allreduce 4, allgather 1, reducescatter 1, broadcast 1, reduce 1, alltoall 1, barrier 1, recv 1) placed in group "0" (2 ranks): the c10d::<collective> events do not name their group; assumed the world group' \
    "$WORK/err" || fail "gloo: the placement is not said: $(cat "$WORK/err")"
grep -q '"desc":"placed: no group name in the profiler event; assumed the world group"' \
    "$WORK/gloo/rank0.jsonl" || fail "gloo: the group's desc does not say how it was placed"

# -o's missing parents are made, as report's and suite's are
expect_exit 0 "" trace import "$HERE/nccl/rank0.pt.trace.json" "$HERE/nccl/rank1.pt.trace.json" \
    -o "$WORK/new/parents/nccl"
[ -f "$WORK/new/parents/nccl/rank1.jsonl" ] || fail "-o with missing parents: no rank files"

# ---- the imported traces replay: both groups of each, every call ----
for t in nccl gloo; do
    calls=$(grep -c '"seq":' "$WORK/$t/rank0.jsonl")
    expect_exit 0 "" replay "$WORK/$t" --backend tcp -T 60
    grep -Eq "^ +all +all +$((calls * 2)) " "$WORK/out" \
        || fail "$t: the replay's summary does not count the $calls calls of each rank: $(cat "$WORK/out")"
done

# ---- refusals: nothing written ----
expect_exit 2 "holds rank files already" trace import "$HERE/gloo/rank0.pt.trace.json" \
    "$HERE/gloo/rank1.pt.trace.json" -o "$WORK/gloo"
expect_exit 0 "" trace import "$HERE/gloo/rank0.pt.trace.json" "$HERE/gloo/rank1.pt.trace.json" \
    -o "$WORK/gloo" --force
printf '{"traceEvents": [' >"$WORK/bad.json"
expect_exit 2 "bad.json: not JSON" trace import "$WORK/bad.json" -o "$WORK/bad"
[ -e "$WORK/bad/rank0.jsonl" ] && fail "bad: a rank file was written"
truncate -s 3G "$WORK/huge.json"
expect_exit 2 "huge.json: 3221225472 bytes, over the limit" trace import "$WORK/huge.json" -o "$WORK/huge"
expect_exit 2 "are both rank 0" trace import "$HERE/gloo/rank0.pt.trace.json" \
    "$HERE/gloo/rank0.pt.trace.json" -o "$WORK/twice"
expect_exit 2 "world 2 (from distributedInfo), --world says 4" trace import \
    "$HERE/gloo/rank0.pt.trace.json" "$HERE/gloo/rank1.pt.trace.json" -o "$WORK/w" --world 4
expect_exit 2 "the traces disagree" trace import "$HERE/gloo/rank0.pt.trace.json" -o "$WORK/one"
[ -e "$WORK/one/rank0.jsonl" ] && fail "one rank of two: a rank file was written"
expect_exit 2 "no -o DIR" trace import "$HERE/gloo/rank0.pt.trace.json"
expect_exit 2 "unknown subcommand" trace frobnicate
expect_exit 2 "holds no rank" trace show "$WORK"
finish
