#!/usr/bin/env bash
# issue 3's speed targets in one run: all-reduce float32 sum, out-of-place, on
# `collbench --backend shm` and on Open MPI's MPI_Allreduce (bench/mpi_allreduce.c,
# built here with mpicc, run with mpirun), per size and process count; prints
# both bus bandwidths, the ratio shm/mpi, the 8-byte latencies, single-core
# memcpy bandwidth, and for 100 MiB on 2 processes the fraction of the
# memory-traffic bound that shm reaches (model in docs/PERFORMANCE.md, shm).
#
#   bench/shm_vs_mpi.sh        (env: COLLBENCH=build/collbench, PROCS=2,4,6,
#                               SIZES=8,64K,1M,10M,100M,1G, ITERS=20, WARMUP=5,
#                               BIND=core|none for the shm ranks, default core:
#                               see docs/PERFORMANCE.md, shm; BUFFERS=coll|malloc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-8,64K,1M,10M,100M,1G}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
BIND=${BIND:-core}
# coll: buffers from coll_alloc (shm's shared heap, read without copies);
# malloc: private buffers, as a framework's tensors (single copy through CMA)
BUFFERS=${BUFFERS:-coll}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v mpicc >/dev/null || { echo "shm_vs_mpi: mpicc not found (apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 4; }
mpicc -O2 -o "$tmp/mpi_allreduce" "$here/mpi_allreduce.c"

# Single-core memcpy bandwidth, 256 MiB buffers (far beyond the caches).
cat > "$tmp/memcpy_bw.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void)
{
    size_t n = 256u << 20;
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n); memset(b, 2, n);
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        double t0 = now();
        memcpy(b, a, n);
        double t = now() - t0;
        if (t < best) best = t;
        a[i] = b[n - 1 - i]; /* keep the copies observable */
    }
    printf("%.2f\n", n / best / 1e9);
    return b[7] == 3;
}
C
cc -O2 -o "$tmp/memcpy_bw" "$tmp/memcpy_bw.c"
memcpy_gbps=$("$tmp/memcpy_bw")

# shm through collbench; the CSV's bytes column is the size asked for.
"$BIN" allreduce --backend shm --sizes "$SIZES" -P "$PROCS" --inplace 0 -d float32 -o sum \
    -n "$ITERS" -w "$WARMUP" --bind "$BIND" --buffers "$BUFFERS" -q --csv "$tmp/shm.csv" >/dev/null

# MPI, one mpirun per process count. Root may run mpirun only when told so.
root_flag=()
[ "$(id -u)" = 0 ] && root_flag=(--allow-run-as-root)
: > "$tmp/mpi.txt"
for np in ${PROCS//,/ }; do
    mpirun "${root_flag[@]}" --oversubscribe -np "$np" "$tmp/mpi_allreduce" -n "$ITERS" -w "$WARMUP" \
        ${SIZES//,/ } | awk -v np="$np" '{ print np, $0 }' >> "$tmp/mpi.txt"
done

echo "all-reduce float32 sum, out-of-place: busbw GB/s shm / mpi = ratio (up to 64 B: avg time shm / mpi = ratio mpi/shm)"
echo "single-core memcpy: $memcpy_gbps GB/s; shm ranks bound: $BIND; shm buffers: $BUFFERS"
echo
awk -F, -v memcpy="$memcpy_gbps" '
  function human(b) { return b >= 1073741824 ? b / 1073741824 "G" : b >= 1048576 ? b / 1048576 "M" : b >= 1024 ? b / 1024 "K" : b }
  function cell(np, b) {
    if (!((np, b) in sbw) || !((np, b) in mbw)) return " - |"
    if (b + 0 <= 64) return sprintf(" %.1f us / %.1f us = %.2fx |", sus[np, b], mus[np, b], sus[np, b] > 0 ? mus[np, b] / sus[np, b] : 0)
    return sprintf(" %.2f / %.2f = %.2fx |", sbw[np, b], mbw[np, b], mbw[np, b] > 0 ? sbw[np, b] / mbw[np, b] : 0)
  }
  FNR == 1 && FILENAME ~ /shm.csv$/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
  FILENAME ~ /shm.csv$/ {
    np = $col["nprocs"]; b = $col["bytes"]
    sbw[np, b] = $col["busbw_GBps"]; sus[np, b] = $col["time_us_avg"]
    if (!(b in seen)) { seen[b] = 1; sizes[++ns] = b }
    if (!(np in pseen)) { pseen[np] = 1; procs[++npr] = np }
    next }
  { split($0, f, " "); mbw[f[1], f[2]] = f[5]; mus[f[1], f[2]] = f[3] }
  END {
    printf "| bytes |"; for (j = 1; j <= npr; j++) printf " %s procs |", procs[j]; printf "\n"
    printf "|---|"; for (j = 1; j <= npr; j++) printf "---|"; printf "\n"
    for (i = 1; i <= ns; i++) {
      b = sizes[i]; printf "| %s |", human(b)
      for (j = 1; j <= npr; j++) printf "%s", cell(procs[j], b)
      printf "\n"
    }
    # 2 ranks, 100 MiB: an all-reduce must read both inputs (2 N) and write both
    # outputs (2 N); the shm backend does exactly that (direct all-reduce on
    # buffers from coll_alloc), split over the 2 cores: 2 N of traffic per core,
    # what a memcpy of N costs. Bound: busbw = N / t <= memcpy bandwidth.
    b = 104857600
    if ((2, b) in sbw) {
      bound = memcpy
      printf "\n100 MiB, 2 procs: shm busbw %.2f GB/s = %.0f%% of the memory-traffic bound %.2f GB/s (= single-core memcpy)\n", sbw[2, b], 100 * sbw[2, b] / bound, bound
    }
  }' "$tmp/shm.csv" "$tmp/mpi.txt"
