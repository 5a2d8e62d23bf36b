#!/usr/bin/env bash
# GPU numbers for docs/PERFORMANCE.md, as one markdown document on stdout:
#   1. the physical reference: device-to-device cudaMemcpy bandwidth of a large
#      buffer on GPU 0 (`collbench info --gpu-bandwidth`);
#   2. NCCL on one GPU (1 rank): all-reduce and broadcast times per size;
#   3. staged backends (tcp, and shm when built): CUDA buffers copied through
#      host memory, 2 and 4 ranks sharing the GPU.
# Every run checks its results (-c 1); a wrong result stops the script.
#
#   bench/gpu.sh > results/gpu.md     (env: COLLBENCH, SIZES, STAGED_SIZES, ITERS, COPY_SIZE)
#
# Exits 77 (a skip for ctest) saying why on a machine without a usable GPU.
# Smallest run (ctest bench/gpu): SIZES=4K STAGED_SIZES=4K ITERS=2 COPY_SIZE=1M.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
SIZES=${SIZES:-4K,64K,1M,16M,256M,1G}
STAGED_SIZES=${STAGED_SIZES:-64K,1M,16M,256M}
ITERS=${ITERS:-20}
COPY_SIZE=${COPY_SIZE:-1G}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN" info >"$tmp/info"
if ! grep -q "^  cuda .*loaded.* [1-9][0-9]* device(s)" "$tmp/info"; then
    echo "bench/gpu.sh: no GPU: no usable CUDA device here, skipped:"
    grep -E "^  (cuda|nccl) " "$tmp/info"
    exit 77
fi
"$BIN" info --gpu-bandwidth="$COPY_SIZE" >"$tmp/bw"

staged=tcp
grep -q "backend shm  *available" "$tmp/info" && staged=tcp,shm

for coll in allreduce broadcast; do
    "$BIN" "$coll" --backend nccl --device cuda -P 1 --sizes "$SIZES" -n "$ITERS" --inplace 0 -q \
        --csv "$tmp/nccl.csv" >/dev/null
done
"$BIN" allreduce --backend "$staged" --device cuda -P 2,4 --sizes "$STAGED_SIZES" -n "$ITERS" \
    --inplace 0 -q --csv "$tmp/staged.csv" >/dev/null

echo "## GPU: $(sed -n 's/^  gpu 0  *//p' "$tmp/info")"
echo
grep -E "^  (cpu|cuda|cuda driver|nccl|host) " "$tmp/info" | sed 's/^  */- /'
echo
echo "Physical reference: $(sed -n 's/^  gpu bandwidth  *//p' "$tmp/bw")"
echo

# One table per CSV: rows = collective x backend x ranks x size.
table() {
    awk -F, '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { printf "| %s | %s | %s | %s | %.1f | %.1f | %.2f | %.2f | %s |\n",
               $col["collective"], $col["backend"], $col["nprocs"], $col["bytes"],
               $col["time_us_avg"], $col["time_us_p50"], $col["algbw_GBps"],
               $col["busbw_GBps"], $col["wrong"] }' "$1"
}
header='| collective | backend | ranks | bytes | avg us | p50 us | algbw GB/s | busbw GB/s | wrong |
|---|---|---|---|---|---|---|---|---|'

echo "### NCCL, 1 rank on one GPU (out-of-place, float32 sum)"
echo
echo "$header"
table "$tmp/nccl.csv"
echo
echo "### Host staging: CUDA buffers through $staged, ranks sharing the GPU (all-reduce)"
echo
echo "$header"
table "$tmp/staged.csv"
echo
echo "Command: bench/gpu.sh (SIZES=$SIZES STAGED_SIZES=$STAGED_SIZES ITERS=$ITERS COPY_SIZE=$COPY_SIZE)"
