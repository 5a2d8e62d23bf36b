#!/bin/bash
# shm against auto on one host over the main job's all-reduce grid (2, 4, 6
# ranks x 1M, 10M, 100M, 256M, in place), with malloc and coll buffers. The
# two backends run alternately, the order reversed every other round (shm auto,
# auto shm, ...: ROUNDS pairs; a backend that always ran first would carry
# whatever the run before leaves behind), each run a separate collbench
# allreduce, so that both see the same machine. Per cell
# the table gives each pair's shm/auto ratio of p50 times and its verdict by
# the report's rule (a difference only where the two p25-p75 ranges do not
# overlap), then the cell's: "ok" when shm is within noise of auto or faster
# in every pair, "shm slower in every pair", or "mixed" (slower in some).
#
#   bench/shm_vs_auto.sh [collbench allreduce flags...]
# env: COLLBENCH (build/collbench), ROUNDS (2), PROCS (2,4,6),
#      SIZES (1M,10M,100M,256M), BUFFERS (malloc coll), ITERS (10), WARMUP (2).
# Results are checked (-c 1). Exit 1 when a run failed.
set -u
BIN=${COLLBENCH:-build/collbench}
ROUNDS=${ROUNDS:-2}
PROCS=${PROCS:-2,4,6}
SIZES=${SIZES:-1M,10M,100M,256M}
BUFFERS=${BUFFERS:-malloc coll}
ITERS=${ITERS:-10}
WARMUP=${WARMUP:-2}
[ -x "$BIN" ] || { echo "shm_vs_auto.sh: $BIN is not an executable (COLLBENCH=...)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/shm_vs_auto.XXXXXX")
trap 'rm -rf "$work"' EXIT

for r in $(seq "$ROUNDS"); do
    order="shm auto"
    [ $((r % 2)) = 0 ] && order="auto shm"
    for buf in $BUFFERS; do
        for side in $order; do
            if ! "$BIN" allreduce --backend "$side" -P "$PROCS" --sizes "$SIZES" --inplace 1 \
                --buffers "$buf" -n "$ITERS" -w "$WARMUP" --time-budget 0 -c 1 -q \
                --csv "$work/$side.$buf.$r.csv" "$@" >"$work/$side.$buf.$r.log" 2>&1; then
                echo "shm_vs_auto.sh: $side, $buf buffers, round $r failed:" >&2
                tail -5 "$work/$side.$buf.$r.log" >&2
                exit 1
            fi
        done
    done
done

# One line per (side, round, buffers, nprocs, bytes): p25, p50, p75.
for f in "$work"/*.csv; do
    base=$(basename "$f" .csv)
    side=${base%%.*}
    round=${base##*.}
    awk -F, -v side="$side" -v round="$round" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { print side, round, $c["buffers"], $c["nprocs"], $c["bytes"],
                $c["time_us_p25"], $c["time_us_p50"], $c["time_us_p75"] }' "$f"
done >"$work/all"

echo "| buffers | ranks | bytes | shm/auto p50 per pair (verdict) | cell |"
echo "|---|---|---|---|---|"
sort -k3,3 -k4,4n -k5,5n -k2,2n "$work/all" | awk -v rounds="$ROUNDS" '
{   key = $3 " | " $4 " | " $5
    if (!(key in seen)) { seen[key] = 1; order[++k] = key }
    lo[key, $1, $2] = $6; p50[key, $1, $2] = $7; hi[key, $1, $2] = $8 }
END {
    for (i = 1; i <= k; i++) {
        key = order[i]; pairs = ""; slower = 0; n = 0
        for (r = 1; r <= rounds; r++) {
            if (!((key, "shm", r) in p50) || !((key, "auto", r) in p50)) continue
            s = p50[key, "shm", r]; a = p50[key, "auto", r]
            v = (lo[key, "shm", r] > hi[key, "auto", r]) ? "slower" : \
                (hi[key, "shm", r] < lo[key, "auto", r]) ? "faster" : "within noise"
            if (v == "slower") slower++
            n++
            pairs = pairs (pairs == "" ? "" : ", ") sprintf("%.2fx (%s)", a > 0 ? s / a : 0, v)
        }
        cell = n == 0 ? "missing" : slower == 0 ? "ok" : slower == n ? "shm slower in every pair" : "mixed"
        printf "| %s | %s | %s |\n", key, pairs, cell
    }
}'
