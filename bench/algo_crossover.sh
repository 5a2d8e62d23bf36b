#!/usr/bin/env bash
# Where do a collective's algorithms cross over on this machine?
# Runs each algorithm (default: all-reduce rd, rhd, ring) over the same sizes and
# process counts in one go, then prints a markdown table of the median
# iteration time of each and its ratio to the fastest (x1.00 = fastest).
# These ratios set the crossover constants at the top of src/algo/select.c.
#
#   bench/algo_crossover.sh                               all-reduce: rd rhd ring
#   COLL=broadcast ALGOS="tree ring" bench/algo_crossover.sh
#   COLL=allgather ALGOS="rd ring" PROCS=2,4 bench/algo_crossover.sh
# (env also: COLLBENCH, BACKEND, PROCS, SIZES, ITERS, WARMUP (5), ROUNDS (3))
# Smallest run (ctest bench/algo_crossover): PROCS=2 SIZES=256 ITERS=2 WARMUP=1 ROUNDS=1.
set -euo pipefail
BIN=${COLLBENCH:-build/collbench}
BACKEND=${BACKEND:-tcp}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-256,4K,16K,64K,256K,1M,4M,16M}
ITERS=${ITERS:-30}
COLL=${COLL:-allreduce}
ALGOS=${ALGOS:-rd rhd ring}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Rounds interleave the algorithms so a noisy moment hurts one round, not one
# algorithm; each cell is the best median over the rounds.
ROUNDS=${ROUNDS:-3}
for round in $(seq "$ROUNDS"); do
 for algo in $ALGOS; do
  "$BIN" "$COLL" --backend "$BACKEND" --algo "$algo" --sizes "$SIZES" -P "$PROCS" \
    --inplace 0 -n "$ITERS" -w "${WARMUP:-5}" -q --csv "$tmp/r.csv" >/dev/null
 done
done

echo "$COLL float32 (sum), backend $BACKEND, best median time (us) of $ROUNDS rounds per algorithm; x = ratio to the fastest"
echo
awk -F, -v algos="$ALGOS" '
  NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { key = $col["nprocs"] SUBSEP $col["bytes"]; al = $col["algo"]; p50 = $col["time_us_p50"]
    if (!((key, al) in t) || p50 < t[key, al]) t[key, al] = p50; if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
  END {
    na = split(algos, a, " ")
    printf "| ranks | bytes |"; for (i = 1; i <= na; i++) printf " %s us |", a[i]; printf " fastest |\n"
    printf "|---|---|"; for (i = 1; i <= na; i++) printf "---|"; printf "---|\n"
    for (k = 1; k <= n; k++) {
      split(order[k], f, SUBSEP); best = ""
      for (i = 1; i <= na; i++) if ((order[k], a[i]) in t && (best == "" || t[order[k], a[i]] < t[order[k], best])) best = a[i]
      printf "| %s | %s |", f[1], f[2]
      for (i = 1; i <= na; i++)
        if ((order[k], a[i]) in t) printf " %.1f (x%.2f) |", t[order[k], a[i]], t[order[k], a[i]] / t[order[k], best]
        else printf " - |"
      printf " %s |\n", best
    }
  }' "$tmp/r.csv"
