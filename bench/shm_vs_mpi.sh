#!/usr/bin/env bash
# collbench's shm backend against Open MPI, all-reduce float32 sum out-of-place,
# every side timed the same way: collbench's harness (a barrier before each
# iteration, each iteration as long as its slowest rank), the mpi side being
# `collbench --backend mpi` launched through mpirun. Three columns per size and
# process count:
#   shm malloc  --backend shm --buffers malloc (private memory, what Open MPI,
#               torch and OSU measure: shm picks staging slots, CMA or its
#               copy-in strategy by size and ranks per core: docs/DESIGN.md)
#   shm coll    --backend shm --buffers coll (coll_alloc: shm's shared heap,
#               reduced in place without copies; the opt-in, like nccl-tests -R)
#   mpi         --backend mpi --buffers malloc (Open MPI's own algorithms)
# Cells are the p50 time (below 1 MiB) or the bus bandwidth at the p50 time;
# ratios are speed-ups (> 1: the first named is faster), marked "within noise"
# when the two sides' p25..p75 time intervals overlap. The last column checks
# issue 18's targets for the private-buffer path per cell: shm malloc at least
# 2x Open MPI from 64 KiB up, at least half the coll path's speed from 1 MiB
# up, and at 8 bytes no slower than Open MPI at 2 ranks, faster at 4 and 6.
# Exit 1 if any result was wrong or a cell is missing.
#
#   bench/shm_vs_mpi.sh [--sizes LIST] [--procs LIST]
#                         (env: COLLBENCH=build/collbench, PROCS=2,4,6,
#                          SIZES=8,64K,256K,1M,4M,16M,64M,256M (1G is valid too:
#                          6 ranks then hold 12 GiB of buffers per backend),
#                          ITERS=10, WARMUP=3 from 1 MiB; SMALL_ITERS=200,
#                          SMALL_WARMUP=20 below it, where 10 iterations of a
#                          few microseconds leave the p50 to chance,
#                          BIND=core|none for the shm ranks (mpi: mpirun's
#                          default), OUT=dir for the CSVs, default a temp dir)
# Exit 77 (a skip for ctest), saying why, without mpirun or the mpi backend.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-8,64K,256K,1M,4M,16M,64M,256M}
while [ $# -gt 0 ]; do
    case "$1" in
    --sizes) SIZES=$2; shift 2 ;;
    --procs) PROCS=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes LIST] [--procs LIST]" >&2; exit 2 ;;
    esac
done
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-3}
SMALL_ITERS=${SMALL_ITERS:-200}
SMALL_WARMUP=${SMALL_WARMUP:-20}
command -v mpirun >/dev/null || { echo "shm_vs_mpi: skipped: no mpirun in PATH (apt-get install openmpi-bin)"; exit 77; }
"$BIN" info | grep -Eq "^ *backend mpi +available" ||
    { echo "shm_vs_mpi: skipped: the mpi backend is not in this build (apt-get install libopenmpi-dev, rebuild)"; exit 77; }

# The sizes below 1 MiB and from it, each band with its own iterations.
bytes_of() {
    local v=$1 m=1
    case "$v" in
    *[kK]) m=1024; v=${v%?} ;;
    *[mM]) m=$((1024 * 1024)); v=${v%?} ;;
    *[gG]) m=$((1024 * 1024 * 1024)); v=${v%?} ;;
    *[tT]) m=$((1024 * 1024 * 1024 * 1024)); v=${v%?} ;;
    esac
    [[ "$v" =~ ^[0-9]+$ ]] || { echo "shm_vs_mpi: '$1' in --sizes is not a size (digits, then optionally K, M, G or T)" >&2; return 2; }
    echo $((v * m))
}
small="" large=""
IFS=, read -r -a slist <<<"$SIZES"
for sz in "${slist[@]}"; do
    b=$(bytes_of "$sz") || exit 2
    if [ "$b" -lt $((1024 * 1024)) ]; then small="$small${small:+,}$sz"
    else large="$large${large:+,}$sz"; fi
done
BIND=${BIND:-core}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
rm -f "$OUT/malloc.csv" "$OUT/coll.csv" "$OUT/mpi.csv"

# The three alternate per process count, so all see the same load on a shared
# machine.
# collbench's exit 1 (wrong results) still writes its rows: the table names them.
run() {
    local rc=0
    "$BIN" "$@" || rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || { echo "shm_vs_mpi: collbench $* exited $rc" >&2; exit "$rc"; }
}
IFS=, read -r -a plist <<<"$PROCS"
for p in "${plist[@]}"; do
    for band in small large; do
        sizes=${!band}
        [ -n "$sizes" ] || continue
        n=$ITERS w=$WARMUP
        [ "$band" = small ] && n=$SMALL_ITERS w=$SMALL_WARMUP
        common=(allreduce --sizes "$sizes" -P "$p" --inplace 0 -d float32 -o sum -n "$n" -w "$w" -q)
        run "${common[@]}" --backend shm --bind "$BIND" --buffers malloc --csv "$OUT/malloc.csv"
        run "${common[@]}" --backend shm --bind "$BIND" --buffers coll --csv "$OUT/coll.csv"
        run "${common[@]}" --backend mpi --buffers malloc --csv "$OUT/mpi.csv"
    done
done

echo "all-reduce float32 sum, out-of-place; collbench's timing on every side; shm ranks bound: $BIND"
echo "cells: p50 time below 1 MiB, else busbw at the p50 time; ratios: speed-ups. CSVs in $OUT"
echo
# columns by name (the CSV header); each file's own header
awk -F, '
  FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i
             f = FILENAME; sub(/.*\//, "", f); sub(/\.csv$/, "", f); next }
  { s = $col["bytes"]; p = $col["nprocs"]; k = p SUBSEP s
    p25[f, k] = $col["time_us_p25"]; p50[f, k] = $col["time_us_p50"]; p75[f, k] = $col["time_us_p75"]
    if ($col["wrong"] != "0") wrong = wrong " " f "/" p "/" s "(" $col["wrong"] ")"
    if (!(s in sz)) { sz[s] = 1; sizes[++ns] = s }
    if (!(p in pr)) { pr[p] = 1; procs[++np] = p } }
  function human(b) { return b >= 1048576 ? b / 1048576 " MiB" : b >= 1024 ? b / 1024 " KiB" : b " B" }
  function cell(f, k, p, s) {
    if (!((f, k) in p50)) { missing = missing " " f "/" p "/" s; return "-" }
    if (s < 1048576) return sprintf("%.1f us", p50[f, k])
    return sprintf("%.2f GB/s", s * 2 * (p - 1) / p / (p50[f, k] * 1e3))
  }
  function ratio(a, b, k) { # speed of a over b
    if (!((a, k) in p50) || !((b, k) in p50) || p50[a, k] <= 0) return "-"
    noise = p25[a, k] <= p75[b, k] && p25[b, k] <= p75[a, k] ? " within noise" : ""
    return sprintf("%.2fx%s", p50[b, k] / p50[a, k], noise)
  }
  # issue 18: speed ratios against thresholds, on the p50 times
  function targets(k, p, s,   t, m, o, c) {
    if (!(("malloc", k) in p50) || !(("mpi", k) in p50)) return "-"
    m = p50["malloc", k]; o = p50["mpi", k]; t = ""
    if (s <= 64) t = (p == 2 ? (m <= o ? "8 B <= mpi: met" : "8 B <= mpi: MISSED") \
                             : (m < o ? "8 B < mpi: met" : "8 B < mpi: MISSED"))
    if (s >= 65536) t = (o / m >= 2 ? "2x mpi: met" : "2x mpi: MISSED")
    if (s >= 1048576 && (("coll", k) in p50)) {
      c = p50["coll", k]
      t = t (c / m >= 0.5 ? ", half coll: met" : ", half coll: MISSED")
    }
    return t == "" ? "-" : t
  }
  END {
    print "| ranks | bytes | shm malloc | shm coll | mpi (malloc) | shm malloc/mpi | shm malloc/coll | targets |"
    print "|---|---|---|---|---|---|---|---|"
    for (j = 1; j <= np; j++) for (i = 1; i <= ns; i++) {
      p = procs[j]; s = sizes[i]; k = p SUBSEP s
      printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", p, human(s), cell("malloc", k, p, s),
             cell("coll", k, p, s), cell("mpi", k, p, s), ratio("malloc", "mpi", k),
             ratio("malloc", "coll", k), targets(k, p, s)
    }
    bad = 0
    if (wrong) { printf "\nWRONG results in:%s\n", wrong; bad = 1 }
    if (missing) { printf "\nno result for:%s\n", missing; bad = 1 }
    exit bad
  }' "$OUT/malloc.csv" "$OUT/coll.csv" "$OUT/mpi.csv"
