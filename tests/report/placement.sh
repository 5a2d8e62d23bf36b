# In place and out of place are different work (NCCL's one-rank in-place
# all-reduce moves no data; out of place it copies the buffer): backends are
# ranked only on rows of one placement. nccl was measured both ways, torch's
# nccl in place only: the in-place rows are compared (nccl 1.4 us against
# 25 us), never nccl's 740 us copy against torch's no-op. At 4 MiB shm was
# measured out of place only, tcp and gloo in place: tcp and gloo are ranked,
# shm is not ranked against them. A one-process in-place series is no latency
# and no bandwidth: the analysis says it moves no data.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/placement.csv" -o "$OUT"
A=$OUT/analysis.txt

expect_in "$A" "allreduce: nccl is 18x faster than torch-nccl at 1 MiB with 1 process"
if grep -q "torch-nccl is [0-9.]*x faster than nccl" "$A"; then
    fail "an out-of-place copy was ranked against an in-place no-op: $(grep -n 'torch-nccl' "$A" | head -3)"
fi
expect_in "$A" "allreduce nccl on gpu, cuda, cuda buffers, 1 process: one process in place moves no data: 1.4 us at 4 KiB is the call's own cost"
if grep -q "nccl on gpu.*peak algorithm bandwidth" "$A"; then
    fail "a one-process in-place no-op given a bandwidth: $(grep -n 'peak algorithm' "$A" | head -3)"
fi
expect_in "$A" "allreduce: tcp is 2.0x faster than gloo at 4 MiB with 2 processes"
if grep -q "shm is [0-9.]*x faster\|than shm at 4 MiB" "$A"; then
    fail "shm, measured out of place only, was ranked against in-place rows: $(grep -n 'shm' "$A" | head -3)"
fi
finish
