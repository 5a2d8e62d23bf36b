#!/bin/sh
# With a GPU: the nccl backend on 1 rank (every collective, results checked),
# and tcp/shm on CUDA buffers through host staging with 2 and 4 ranks sharing
# the GPU. Exit 77 (skipped) on a machine without a usable GPU.
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/refusal.sh"

if ! "$BIN" info | grep -q "^  cuda .*loaded.* [1-9][0-9]* device(s)"; then
    echo "SKIP: no usable CUDA device here"
    exit 77
fi

run() { # run ARGS...: exit 0 (every result right), else fail with the output
    "$BIN" "$@" -q --csv "$WORK/gpu.csv" >"$WORK/out" 2>"$WORK/err" ||
        fail "collbench $*: exit $?: $(cat "$WORK/out" "$WORK/err")"
}

if "$BIN" check --backend nccl -P 1 >"$WORK/check" 2>&1; then :; else
    fail "check --backend nccl -P 1: $(cat "$WORK/check")"
fi
for coll in allreduce allgather reducescatter broadcast reduce alltoall barrier; do
    run "$coll" --backend nccl --device cuda -P 1 --sizes 4K,1M -w 1 -n 3 -c 1
done
run allreduce --backend nccl --device cuda -P 1 --sizes 64K -w 1 -n 2 -d all -o all
run allreduce --backend nccl --device cuda -P 1 --sizes 64K -w 1 -n 2 --inplace 2

backends=tcp
"$BIN" info | grep -q "backend shm  *available" && backends=tcp,shm
for coll in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
    placement=2
    case $coll in alltoall | sendrecv) placement=0 ;; esac
    run "$coll" --backend "$backends" --device cuda -P 2,4 --sizes 4K,1M -w 1 -n 2 -c 1 --inplace $placement
done
run allreduce --backend "$backends" --device cuda -P 2 --sizes 64K -w 1 -n 2 -d all -o all

# nccl with more ranks than GPUs: skipped with a note, not an error
ngpus=$("$BIN" info | sed -n 's/^  cuda .* \([0-9][0-9]*\) device(s).*/\1/p')
more=$((ngpus + 1))
"$BIN" allreduce --backend nccl --device cuda -P "$more" --sizes 1K >"$WORK/out" 2>&1 ||
    fail "nccl -P $more on $ngpus GPUs: exit $?: $(cat "$WORK/out")"
grep -q "skipped: $ngpus CUDA device" "$WORK/out" || fail "nccl -P $more: no skip note: $(cat "$WORK/out")"

# more ranks than GPUs started by hand: every one refused with exit 4, none hangs
expect_nccl_refused "$ngpus"

# nccl measures GPU buffers: asked for without --device cuda is a usage error
expect_exit 2 "add \-\-device cuda" allreduce --backend nccl -P 1 --sizes 1K

# the CSV says where the buffers were
grep -q ",nccl,.*,cuda,cuda,1," "$WORK/gpu.csv" || fail "no nccl cuda rows in the CSV: $(head -3 "$WORK/gpu.csv")"
grep -q ",wrong" "$WORK/gpu.csv" || fail "CSV without a header"
finish
