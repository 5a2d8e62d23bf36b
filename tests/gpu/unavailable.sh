#!/bin/sh
# --device cuda and the nccl backend without what they need: exit 4 and a
# message naming the library or device that is missing, never a crash.
# Deterministic on any machine: the loaders are pointed at a library that does
# not exist (COLL_CUDART_PATH, COLL_NCCL_PATH). On a machine with no usable GPU
# the natural reason (no driver, no device) is checked too.
. "$(dirname "$0")/../cli/lib.sh"

BOGUS=/nonexistent/collbench-test/libbogus.so.99

# no CUDA runtime: refused before any rank starts, the variable named
COLL_CUDART_PATH=$BOGUS expect_exit 4 "COLL_CUDART_PATH=$BOGUS cannot be loaded" \
    allreduce --device cuda -P 1 --sizes 1K
COLL_CUDART_PATH=$BOGUS expect_exit 4 "\-\-device cuda" broadcast --device cuda -P 2 --backend tcp --sizes 1K
COLL_CUDART_PATH=libm.so.6 expect_exit 4 "libm.so.6 has no cudaGetDeviceCount" \
    allreduce --device cuda -P 1 --sizes 1K

# no NCCL: check and info say why, --backend nccl is exit 4
COLL_NCCL_PATH=$BOGUS "$BIN" check --backend nccl >"$WORK/check" 2>"$WORK/check.err"
rc=$?
[ "$rc" -eq 4 ] || fail "check --backend nccl without libnccl: exit $rc, want 4"
grep -q "^UNAVAILABLE  nccl: NCCL not found: COLL_NCCL_PATH=$BOGUS" "$WORK/check" ||
    fail "check --backend nccl: no reason naming COLL_NCCL_PATH: $(cat "$WORK/check")"
grep -q "^INFO  nccl: NCCL not found" "$WORK/check" || fail "check: no INFO line for nccl: $(cat "$WORK/check")"
grep -q "^INFO  cuda: " "$WORK/check" || fail "check: no INFO line for cuda: $(cat "$WORK/check")"

COLL_NCCL_PATH=$BOGUS "$BIN" info >"$WORK/info" 2>&1 || fail "info without libnccl: exit $?"
grep -q "nccl .*NCCL not found: COLL_NCCL_PATH=$BOGUS" "$WORK/info" || fail "info: nccl reason: $(cat "$WORK/info")"
grep -q "backend nccl  *unavailable: NCCL not found" "$WORK/info" || fail "info: backend nccl: $(cat "$WORK/info")"

# nccl unavailable without --device cuda: still exit 4 with the reason
COLL_NCCL_PATH=$BOGUS expect_exit 4 "backend nccl unavailable: NCCL not found" allreduce --backend nccl -P 1 --sizes 1K

# info --gpu-bandwidth: a bad size is exit 2; no runtime is exit 4
expect_exit 2 "\-\-gpu-bandwidth" info --gpu-bandwidth=lots
COLL_CUDART_PATH=$BOGUS expect_exit 4 "COLL_CUDART_PATH" info --gpu-bandwidth=1M

# this machine as it is: without a usable GPU, --device cuda is exit 4 naming
# what is missing; with one, gpu/runs covers it
if "$BIN" info | grep -q "^  cuda .*loaded.* [1-9][0-9]* device(s)"; then
    :
else
    expect_exit 4 "\-\-device cuda: .*\(libcudart\|CUDA driver\|CUDA device\)" allreduce --device cuda -P 1 --sizes 1K
    "$BIN" check --backend nccl >"$WORK/check" 2>&1
    rc=$?
    [ "$rc" -eq 4 ] || fail "check --backend nccl with no GPU: exit $rc, want 4"
    grep -q "^UNAVAILABLE  nccl: .*\(libcudart\|CUDA driver\|CUDA device\)" "$WORK/check" ||
        fail "check --backend nccl with no GPU: reason: $(cat "$WORK/check")"
fi
finish
