#!/usr/bin/env bash
# collbench's tcp backend against Open MPI restricted to TCP on loopback
# (--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo), all-reduce
# float32 sum out-of-place, one run of each: busbw ratio tcp/mpi per size and
# process count, as a markdown table (issue 4's target: >= 1.5 from 10 MiB up).
#
#   bench/tcp_vs_mpi.sh        (env: COLLBENCH, PROCS, SIZES, ITERS, WARMUP, OUT)
# The mpi side is `collbench allreduce --backend mpi`, launched by collbench
# through mpirun with the flags above in COLLBENCH_MPIRUN_ARGS. Exit 77 (a skip
# for ctest), saying why, without mpirun in PATH or the mpi backend in the build.
# Smallest run (ctest bench/tcp_vs_mpi): PROCS=2 SIZES=4K ITERS=2 WARMUP=1.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-1M,10M,100M,1G}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
OUT=${OUT:-$(mktemp -d)}
MPI_TCP_ONLY="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo"
command -v mpirun >/dev/null || { echo "tcp_vs_mpi: skipped: no mpirun in PATH (apt-get install openmpi-bin)"; exit 77; }
"$BIN" info | grep -Eq "^ *backend mpi +available" ||
    { echo "tcp_vs_mpi: skipped: the mpi backend is not in this build (apt-get install libopenmpi-dev, rebuild)"; exit 77; }
mkdir -p "$OUT"
rm -f "$OUT/tcp.csv" "$OUT/mpi.csv"

# tcp and mpi alternate per process count, so both sides of a ratio see the
# same load on a shared machine.
IFS=, read -r -a plist <<<"$PROCS"
for p in "${plist[@]}"; do
    common=(allreduce --sizes "$SIZES" -P "$p" --inplace 0 -n "$ITERS" -w "$WARMUP" -q)
    "$BIN" "${common[@]}" --backend tcp --csv "$OUT/tcp.csv" >/dev/null
    COLLBENCH_MPIRUN_ARGS="$MPI_TCP_ONLY ${COLLBENCH_MPIRUN_ARGS:-}" \
        "$BIN" "${common[@]}" --backend mpi --csv "$OUT/mpi.csv" >/dev/null
done

echo "all-reduce float32 sum, out-of-place, loopback: busbw ratio collbench tcp / Open MPI"
echo "(--mca btl tcp,self); each cell: ratio (tcp GB/s / mpi GB/s). CSVs in $OUT"
echo
# columns by name (the CSV header, docs/DESIGN.md)
awk -F, '
  FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { s = $col["bytes"]; p = $col["nprocs"] }
  FILENAME ~ /tcp\.csv$/ { t[s, p] = $col["busbw_GBps"] } FILENAME ~ /mpi\.csv$/ { m[s, p] = $col["busbw_GBps"] }
  $col["wrong"] != "0" { wrong = wrong " " $col["backend"] "/" p "/" s }
  { if (!(s in sz)) { sz[s] = 1; sizes[++ns] = s }
    if (!(p in pr)) { pr[p] = 1; procs[++np] = p } }
  END {
    printf "| bytes |"; for (j = 1; j <= np; j++) printf " %s ranks |", procs[j]; printf "\n"
    printf "|---|"; for (j = 1; j <= np; j++) printf "---|"; printf "\n"
    for (i = 1; i <= ns; i++) {
      printf "| %s |", sizes[i]
      for (j = 1; j <= np; j++) {
        k = sizes[i] SUBSEP procs[j]
        if (!(k in t) || !(k in m) || m[k] <= 0) { printf " - |"; continue }
        r = t[k] / m[k]
        printf " %.2f (%.2f / %.2f) |", r, t[k], m[k]
        if (sizes[i] >= 10 * 1048576 && r < 1.5) below = below " " procs[j] "x" sizes[i]
      }
      printf "\n"
    }
    printf "\nbelow the 1.5 target from 10 MiB up:%s\n", below ? below : " none"
    if (wrong) { printf "WRONG results in:%s\n", wrong; exit 1 }
  }' "$OUT/tcp.csv" "$OUT/mpi.csv"
