#!/usr/bin/env bash
# GPU numbers for docs/PERFORMANCE.md, as one markdown document on stdout, and
# every measured row in $RESULTS/gpu.csv (for `collbench report`):
#   1. the physical reference: device-to-device cudaMemcpy bandwidth of a large
#      buffer on GPU 0 (`collbench info --gpu-bandwidth`);
#   2. NCCL, one rank per GPU (1 rank on a one-GPU machine): all-reduce;
#   3. staged backends (tcp, and shm when built): CUDA buffers copied through
#      host memory, STAGED_PROCS ranks sharing the GPUs;
#   4. the peers, in the same run and timed the same way (bench/torch_allreduce.py:
#      a barrier, then one timed in-place all-reduce ended by a device
#      synchronize, each iteration at its slowest rank): torch's gloo on CUDA
#      tensors beside 3, torch's nccl beside 2.
# Steps 2-4 run ROUNDS times, collbench and torch in alternating order (A B,
# then B A), each round appending its own rows: the report folds them as
# passes and claims a difference only when it holds in every round.
# Every run checks its results (-c 1); a wrong result stops the script.
#
#   bench/gpu.sh > results/gpu.md
#   env: COLLBENCH, RESULTS (kept; default a temporary directory), SIZES,
#        STAGED_SIZES, STAGED_PROCS, ITERS, WARMUP, ROUNDS, COPY_SIZE,
#        TORCH_PYTHON (python3 whose torch sees the GPU; "none" leaves the peers out)
#
# Exits 77 (a skip for ctest) saying why on a machine without a usable GPU.
# Smallest run (ctest bench/gpu): SIZES=4K STAGED_SIZES=4K ITERS=2 COPY_SIZE=1M.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${COLLBENCH:-build/collbench}
SIZES=${SIZES:-4K,64K,1M,16M,256M,1G}
STAGED_SIZES=${STAGED_SIZES:-1M,16M,256M,1G}
STAGED_PROCS=${STAGED_PROCS:-2,4,6}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-2}
ROUNDS=${ROUNDS:-2}
COPY_SIZE=${COPY_SIZE:-1G}
TORCH_PYTHON=${TORCH_PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
RESULTS=${RESULTS:-$tmp}
mkdir -p "$RESULTS"
csv=$RESULTS/gpu.csv

"$BIN" info >"$tmp/info"
if ! grep -q "^  cuda .*loaded.* [1-9][0-9]* device(s)" "$tmp/info"; then
    echo "bench/gpu.sh: no GPU: no usable CUDA device here, skipped:"
    grep -E "^  (cuda|nccl) " "$tmp/info"
    exit 77
fi
"$BIN" info --gpu-bandwidth="$COPY_SIZE" >"$tmp/bw"
ngpus=$(sed -n 's/^  cuda .* \([0-9][0-9]*\) device(s).*/\1/p' "$tmp/info")
nccl_procs=$(seq -s, 1 "$ngpus")

staged=tcp
grep -q "backend shm  *available" "$tmp/info" && staged=tcp,shm
peers=none
if [ "$TORCH_PYTHON" != none ] &&
    "$TORCH_PYTHON" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    peers=$("$TORCH_PYTHON" -c "import torch; print(torch.__version__)")
fi

# In-place float32 sum, as torch's all_reduce; the same iterations on both sides.
common=(-n "$ITERS" -w "$WARMUP" --inplace 1 --time-budget 0 -c 1 -q --csv "$csv")
collbench_side() {
    "$BIN" allreduce --backend nccl --device cuda -P "$nccl_procs" --sizes "$SIZES" "${common[@]}" >/dev/null
    "$BIN" allreduce --backend "$staged" --device cuda -P "$STAGED_PROCS" --sizes "$STAGED_SIZES" \
        "${common[@]}" >/dev/null
}
peer_failed=""
torch_side() { # a peer that fails (or gives wrong results) is named, not fatal
    [ "$peers" != none ] || return 0
    local t=("$TORCH_PYTHON" "$here/torch_allreduce.py" --device cuda --iters "$ITERS"
        --warmup "$WARMUP" --csv "$csv")
    "${t[@]}" --backends nccl --nprocs "$nccl_procs" --sizes "$SIZES" >/dev/null ||
        peer_failed="$peer_failed torch-nccl(exit $?)"
    "${t[@]}" --backends gloo --nprocs "$STAGED_PROCS" --sizes "$STAGED_SIZES" >/dev/null ||
        peer_failed="$peer_failed torch-gloo(exit $?)"
}
for ((round = 1; round <= ROUNDS; round++)); do
    if ((round % 2)); then collbench_side; torch_side; else torch_side; collbench_side; fi
done

echo "## GPU: $(sed -n 's/^  gpu 0  *//p' "$tmp/info")"
echo
grep -E "^  (cpu|cores|cuda|cuda driver|nccl|host|kernel) " "$tmp/info" | sed 's/^  */- /'
echo "- peers: torch $peers${peer_failed:+; failed:$peer_failed}"
echo
echo "Physical reference: $(sed -n 's/^  gpu bandwidth  *//p' "$tmp/bw")"
echo

# One table: rows = backend x ranks x size, the rounds side by side (median
# time of each round; bandwidths the mean over rounds).
table() {
    awk -F, '
      NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      { k = $col["backend"] "|" $col["nprocs"] "|" $col["bytes"]
        if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        p50[k] = p50[k] sprintf("%s%.1f", p50[k] == "" ? "" : ", ", $col["time_us_p50"])
        alg[k] += $col["algbw_GBps"]; bus[k] += $col["busbw_GBps"]; cnt[k]++
        wrong[k] += $col["wrong"] }
      END { for (i = 1; i <= n; i++) { k = order[i]; split(k, f, "|")
              printf "| %s | %s | %s | %s | %.2f | %.2f | %d |\n", f[1], f[2], f[3], p50[k],
                     alg[k] / cnt[k], bus[k] / cnt[k], wrong[k] } }' "$csv"
}
echo "### All-reduce on CUDA buffers (float32 sum, in place; $ROUNDS rounds, alternated)"
echo
echo "| backend | ranks | bytes | p50 us per round | algbw GB/s | busbw GB/s | wrong |"
echo "|---|---|---|---|---|---|---|"
table
echo
echo "Command: bench/gpu.sh (SIZES=$SIZES STAGED_SIZES=$STAGED_SIZES STAGED_PROCS=$STAGED_PROCS"
echo "ITERS=$ITERS WARMUP=$WARMUP ROUNDS=$ROUNDS COPY_SIZE=$COPY_SIZE); rows in $csv"
