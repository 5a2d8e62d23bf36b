#!/usr/bin/env bash
# The gloo backend in one run (issue: gloo backend): all-reduce float32 sum,
#  1. collbench --backend gloo against torch.distributed's gloo (when python3
#     can import torch), both in place as torch runs it: busbw and the ratio,
#     which should be within 10% (0.90-1.10) at 10 MiB and up;
#  2. shm, tcp and mpi (those available) against gloo, out of place, for each
#     buffer kind (malloc: private buffers; coll: the backend's own memory).
#
#   bench/gloo_vs.sh     (env: COLLBENCH=build/collbench, PROCS=2,4,6,
#                         SIZES=1M,10M,100M,1G, ITERS=20, WARMUP=5,
#                         BUFFERS="malloc coll", BACKENDS="shm tcp mpi",
#                         PYTHON: the python3 with torch, default python3 or /usr/bin/python3)
# Without a python3 that imports torch.distributed the collbench part still
# runs and the first table has no torch column (said on stderr and in the
# header). Exit 77 (a skip for ctest) when the build has no gloo backend.
# Smallest run (ctest bench/gloo_vs): PROCS=2 SIZES=4K ITERS=2 WARMUP=1
# BUFFERS=malloc BACKENDS="shm tcp".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${COLLBENCH:-build/collbench}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-1M,10M,100M,1G}
ITERS=${ITERS:-20}
WARMUP=${WARMUP:-5}
BUFFERS=${BUFFERS:-malloc coll}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$BIN" info | grep -Eq "^ *backend gloo +available" ||
    { echo "gloo_vs: the gloo backend is not in this build (apt-get install libgloo-dev g++, rebuild)"; exit 77; }
backends=gloo
for b in ${BACKENDS:-shm tcp mpi}; do
    [ "$b" = gloo ] && continue
    if "$BIN" info | grep -Eq "^ *backend $b +available"; then backends="$backends,$b"; fi
done

# Gloo alone, as torch runs it: without the backend's argument check (one small
# allgather per call, on by default; docs/RELIABILITY.md)
export COLL_GLOO_CHECK=0
for buf in $BUFFERS; do
    "$BIN" allreduce --backend "$backends" --sizes "$SIZES" -P "$PROCS" -d float32 -o sum \
        -n "$ITERS" -w "$WARMUP" --buffers "$buf" -c 0 -q --csv "$tmp/cb-$buf.csv" >/dev/null
done

# torch's sizes in bytes: the CSV's own (collbench parsed the suffixes)
sizes=$(awk -F, 'NR > 1 { print $13 }' "$tmp/cb-$(set -- $BUFFERS; echo "$1").csv" | sort -un | tr '\n' ' ')
: > "$tmp/torch.txt"
# Debian's python3-torch is for /usr/bin/python3, which a pyenv may shadow
py=""
for p in ${PYTHON:-python3 /usr/bin/python3}; do
    if "$p" -c "import torch.distributed" 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
    for np in ${PROCS//,/ }; do
        "$py" "$here/torch_gloo_allreduce.py" "$np" "$ITERS" "$WARMUP" $sizes >> "$tmp/torch.txt"
    done
    torch_version=$("$py" -c "import torch; print(torch.__version__)")
else
    torch_version="skipped: no ${PYTHON:-python3 or /usr/bin/python3} imports torch.distributed (apt-get install python3-torch): no torch column"
    echo "gloo_vs: torch part skipped (no python3 with torch.distributed)" >&2
fi

echo "all-reduce float32 sum; busbw GB/s = bytes/time x 2(n-1)/n; torch $torch_version"
echo
first=$(set -- $BUFFERS; echo "$1")
echo "collbench gloo (in place, buffers $first) / torch.distributed gloo = ratio"
# (mawk: no sorting in awk; rows come out with a sort key, sorted, key cut)
awk -v procs="$PROCS" '
  function human(b) { b += 0; return b >= 1073741824 ? b / 1073741824 "G" : b >= 1048576 ? b / 1048576 "M" : b >= 1024 ? b / 1024 "K" : b }
  BEGIN { nnp = split(procs, nps, ",") }
  FILENAME ~ /torch.txt$/ { split($0, f, " "); t[f[1], f[2]] = f[3]; next }
  FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  $col["backend"] == "gloo" && $col["in_place"] == 1 { g[$col["nprocs"], $col["bytes"]] = $col["busbw_GBps"]; bs[$col["bytes"]] }
  END {
    for (b in bs) {
      line = "| " human(b) " |"
      for (j = 1; j <= nnp; j++) {
        np = nps[j]
        if (!((np, b) in g)) { line = line " - |"; continue }
        if (!((np, b) in t)) { line = line sprintf(" %.3f / - |", g[np, b]); continue }
        tb = b / (t[np, b] * 1e-6) / 1e9 * 2 * (np - 1) / np
        line = line sprintf(" %.3f / %.3f = %.2f |", g[np, b], tb, tb > 0 ? g[np, b] / tb : 0)
      }
      print b "\t" line
    }
  }' FS=, "$tmp/cb-$first.csv" "$tmp/torch.txt" > "$tmp/t1"
printf "| size |"; for np in ${PROCS//,/ }; do printf " %s ranks |" "$np"; done; echo
printf "|---|"; for np in ${PROCS//,/ }; do printf -- "---|"; done; echo
sort -n "$tmp/t1" | cut -f2-

for buf in $BUFFERS; do
    echo
    echo "out of place, buffers $buf: busbw GB/s per backend (x gloo)"
    printf "| ranks | size |"; for k in ${backends//,/ }; do printf " %s |" "$k"; done; echo
    printf "|---|---|"; for k in ${backends//,/ }; do printf -- "---|"; done; echo
    awk -F, -v backends="$backends" '
      function human(b) { return b >= 1073741824 ? b / 1073741824 "G" : b >= 1048576 ? b / 1048576 "M" : b >= 1024 ? b / 1024 "K" : b }
      BEGIN { nk = split(backends, ks, ",") }
      FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
      $col["in_place"] == 0 {
        np = $col["nprocs"]; b = $col["bytes"]
        bw[$col["backend"], np, b] = $col["busbw_GBps"]; rows[np SUBSEP b]
      }
      END {
        for (r in rows) {
          split(r, f, SUBSEP); np = f[1]; b = f[2]
          line = "| " np " | " human(b) " |"
          for (j = 1; j <= nk; j++) {
            k = ks[j]
            if (!((k, np, b) in bw)) { line = line " - |"; continue }
            g = bw["gloo", np, b]
            if (k == "gloo" || g == 0) line = line sprintf(" %.3f |", bw[k, np, b])
            else line = line sprintf(" %.3f (%.1fx) |", bw[k, np, b], bw[k, np, b] / g)
          }
          printf "%d\t%d\t%s\n", np, b, line
        }
      }' "$tmp/cb-$buf.csv" | sort -n -k1,1 -k2,2 | cut -f3-
done
