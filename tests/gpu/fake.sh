#!/bin/sh
# Every --device cuda and nccl path, without a GPU: a fake libcudart (host
# memory registered as device memory) and a one-rank fake libnccl, loaded
# through COLL_CUDART_PATH and COLL_NCCL_PATH. Results are checked (-c 1), so
# a buffer that skipped its upload, download or staging shows up as wrong.
# $1 collbench, $2 libfake_cudart.so, $3 libfake_nccl.so
. "$(dirname "$0")/../cli/lib.sh"
. "$(dirname "$0")/refusal.sh"
COLL_CUDART_PATH=${2:?libfake_cudart.so}
COLL_NCCL_PATH=${3:?libfake_nccl.so}
export COLL_CUDART_PATH COLL_NCCL_PATH

run() { # run ARGS...: exit 0, else fail with the output
    "$BIN" "$@" >"$WORK/out" 2>"$WORK/err" || fail "collbench $*: exit $?: $(cat "$WORK/out" "$WORK/err")"
}

run info
grep -q "^  cuda .*loaded, version 12.4, 1 device(s)" "$WORK/out" || fail "info: cuda: $(cat "$WORK/out")"
grep -q "^  gpu 0  *Fake CUDA device, 16.0 GiB" "$WORK/out" || fail "info: gpu 0: $(cat "$WORK/out")"
grep -q "^  nccl .*version 2.21.5" "$WORK/out" || fail "info: nccl version: $(cat "$WORK/out")"
grep -q "^  backend nccl  *available" "$WORK/out" || fail "info: nccl not available: $(cat "$WORK/out")"
run info --gpu-bandwidth=1M
grep -q "gpu bandwidth .*device-to-device cudaMemcpy of 1M: .* GB/s" "$WORK/out" || fail "info --gpu-bandwidth: $(cat "$WORK/out")"

# nccl, one rank: every collective, both placements, results checked
for coll in allreduce allgather reducescatter broadcast reduce alltoall barrier; do
    run "$coll" --backend nccl --device cuda -P 1 --sizes 1K,64K -w 1 -n 2 -c 1 --csv "$WORK/r.csv"
done
run allreduce --backend nccl --device cuda -P 1 --sizes 4K -w 1 -n 1 -d all -o all
grep -q ",allreduce,nccl,auto,cuda,cuda,1,1," "$WORK/r.csv" || fail "CSV rows for nccl cuda: $(head -3 "$WORK/r.csv")"
# more ranks than GPUs: skipped with a note, not an error
run allreduce --backend nccl --device cuda -P 1,2 --sizes 1K
grep -q "allreduce nccl 2 ranks: skipped: 1 CUDA device here" "$WORK/out" || fail "no skip note: $(cat "$WORK/out")"
# nccl with host buffers (the check command's): staged through device memory
run check --backend nccl -P 2
grep -q "^NOTE  nccl: 1 ranks instead of 2" "$WORK/out" || fail "check: no NOTE: $(cat "$WORK/out")"
[ "$(grep -c '^PASS  nccl' "$WORK/out")" -eq 5 ] || fail "check --backend nccl: $(cat "$WORK/out")"
grep -q "^INFO  cuda: runtime 12.4 .* 1 device (gpu 0: Fake CUDA device)" "$WORK/out" || fail "check: INFO: $(cat "$WORK/out")"
# the ranks of a torchrun-style launch that cannot get a GPU each are refused
# at init, all of them (tests/gpu/refusal.sh)
expect_nccl_refused 1

# tcp on CUDA buffers: staged through host memory, 2 ranks sharing the GPU
for coll in allreduce allgather reducescatter broadcast reduce alltoall sendrecv; do
    placement=2
    case $coll in alltoall | sendrecv) placement=0 ;; esac
    run "$coll" --backend tcp --device cuda -P 2 --sizes 1K,64K -w 1 -n 2 -c 1 --inplace $placement
done
grep -q "2 ranks share 1 CUDA device" "$WORK/out" || fail "no sharing note: $(cat "$WORK/out")"
run allreduce --backend tcp --device cuda -P 3 --sizes 4K -w 1 -n 1 -d all -o all

# a wrong result on the device is caught through the host mirrors
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "wrong" allreduce --backend tcp --device cuda -P 2 --sizes 4K -w 1 -n 1
# cudaMalloc failing for a size: that size is skipped, the sweep goes on
FAKE_CUDA_MAX_ALLOC=100000 run allreduce --backend tcp --device cuda -P 2 --sizes 64K,1M,4K -w 1 -n 1
grep -q "1M: skipped (out of device memory: cudaMalloc of 1048576 bytes: cudaErrorMemoryAllocation: out of memory)" \
    "$WORK/out" || fail "no out-of-memory note: $(cat "$WORK/out")"
[ "$(grep -c '^ *4096 ' "$WORK/out")" -ge 1 ] || fail "the sweep stopped at the skipped size: $(cat "$WORK/out")"
finish
