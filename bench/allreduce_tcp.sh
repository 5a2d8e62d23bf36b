#!/usr/bin/env bash
# The first table of docs/PERFORMANCE.md: tcp all-reduce bus bandwidth per size
# and process count (the defaults of `collbench allreduce`), as a markdown table.
#
#   bench/allreduce_tcp.sh              (env: COLLBENCH, PROCS, SIZES, and ITERS,
#                                        WARMUP: -n, -w; unset: collbench's defaults)
# Smallest run (ctest bench/allreduce_tcp): PROCS=2 SIZES=4K ITERS=2 WARMUP=1.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-1M,10M,100M,1G}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN" allreduce --backend tcp --sizes "$SIZES" -P "$PROCS" --inplace 0 ${ITERS:+-n "$ITERS"} \
    ${WARMUP:+-w "$WARMUP"} -q --csv "$tmp/r.csv" >/dev/null

echo "all-reduce float32 sum, backend tcp, out-of-place: busbw GB/s (median time us, timed iterations)"
echo
awk -F, '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { s = $col["bytes"]; p = $col["nprocs"]
    b[s, p] = sprintf("%.2f (%.0f us, %d it)", $col["busbw_GBps"], $col["time_us_p50"], $col["iters"])
    if (!(s in sz)) { sz[s] = 1; sizes[++ns] = s }
    if (!(p in pr)) { pr[p] = 1; procs[++np] = p } }
  END {
    printf "| bytes |"; for (j = 1; j <= np; j++) printf " %s ranks |", procs[j]; printf "\n"
    printf "|---|"; for (j = 1; j <= np; j++) printf "---|"; printf "\n"
    for (i = 1; i <= ns; i++) {
      printf "| %s |", sizes[i]
      for (j = 1; j <= np; j++) printf " %s |", ((sizes[i], procs[j]) in b) ? b[sizes[i], procs[j]] : "-"
      printf "\n"
    }
  }' "$tmp/r.csv"
