#!/bin/bash
# Hierarchical auto all-reduce over 2 emulated hosts x 2 ranks (network
# namespaces, links shaped by tc tbf to $RATE, netem $DELAY where the kernel has
# it) against the links' bound: each host moves 2(H-1)/H of the data each way
# over its link, so algbw <= L*H/(2(H-1)) and busbw <= that x 2(n-1)/n.
# Target (issue 4): busbw >= 0.8 of the bound at the large sizes. Needs root.
#
#   bench/auto_hier.sh [COLLBENCH] [SIZES]     e.g. bench/auto_hier.sh build/collbench 16M,64M,256M
# env: RATE (10gbit), DELAY (1ms), ITERS (10), BACKENDS ("auto tcp"), CSV (append rows there,
#      the header too when it is new), HOSTS (2; 3+ share a bridge, each path
#      crossing two shaped ports: twice DELAY one way), PER_NODE (2), TARGET (a fraction of the bound: exit 1 when the largest size
#      of a backend stays below it; bench/multihost_link.sh sets it)
# Exit 1 when a node fails (its output on stderr), 77 (a skip for ctest) without
# root or ip netns. Smallest run (ctest bench/auto_hier): ITERS=2, SIZES 4K.
BIN=${1:-build/collbench}
SIZES=${2:-1M,16M,64M,256M}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../tests/netns/netns_lib.sh"
RATE=${RATE:-10gbit}
DELAY=${DELAY:-1ms}
ITERS=${ITERS:-10}
BACKENDS=${BACKENDS:-auto tcp}
HOSTS=${HOSTS:-2}
PER_NODE=${PER_NODE:-2}
[ -x "$BIN" ] || { echo "no collbench at $BIN (build first, or pass its path)" >&2; exit 2; }
netns_require
OUT=$(mktemp -d "${TMPDIR:-/tmp}/auto_hier.XXXXXX")
netns_setup $HOSTS "$RATE" "$DELAY" || { echo "cannot set up shaped namespaces" >&2; exit 1; }
trap 'netns_cleanup; rm -rf "$OUT"' EXIT
MASTER=$(netns_addr 0)
PORT=$((30000 + $$ % 20000))
TOKEN_FILE="$OUT/token" # a file: ps would show a --job-token to every user
(umask 077 && echo "auto-hier-$$" >"$TOKEN_FILE")

gbps=$(awk -v r="$RATE" 'BEGIN { n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u);
    m = u == "gbit" ? 1e9 : u == "mbit" ? 1e6 : u == "kbit" ? 1e3 : 1; print n * m / 8 / 1e9 }')
n=$((HOSTS * PER_NODE))
bound=$(awk -v L="$gbps" -v H=$HOSTS -v n=$n 'BEGIN { print L * H / (2 * (H - 1)) * 2 * (n - 1) / n }')

echo "# all-reduce float32, $HOSTS hosts x $PER_NODE ranks, links $RATE$([ "$NETNS_DELAY_OK" -eq 1 ] && echo " + $DELAY"), busbw bound $bound GB/s"
printf "# %-8s %12s %12s %10s\n" backend bytes busbw_GBps of_bound
for backend in $BACKENDS; do
    PORT=$((PORT + 1))
    csv="$OUT/$backend.csv"
    pids=()
    for ((i = 0; i < HOSTS; i++)); do
        netns_run $i "$BIN" allreduce --backend "$backend" --sizes "$SIZES" -n "$ITERS" -w 2 -c 0 \
            --inplace 0 --time-budget 60 -T 300 --csv "$csv" --nnodes $HOSTS --node-rank $i \
            --nproc-per-node $PER_NODE --master-addr "$MASTER" --master-port $PORT \
            --job-token-file "$TOKEN_FILE" -q >"$OUT/$backend.node$i" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || { echo "$backend: a node failed:" >&2; cat "$OUT/$backend".node* >&2; FAILED=1; }; done
    [ -f "$csv" ] || continue
    awk -F, -v b="$bound" -v be="$backend" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { bw = $col["busbw_GBps"]; printf "  %-8s %12d %12.3f %10.2f\n", be, $col["bytes"], bw, bw / b }' "$csv"
    if [ -n "${TARGET:-}" ]; then
        awk -F, -v b="$bound" -v t="$TARGET" -v be="$backend" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            $col["bytes"] + 0 >= big { big = $col["bytes"] + 0; f = $col["busbw_GBps"] / b }
            END { printf "# %s: %.2f of the bound at %d B, target %.2f: %s\n", be, f, big, t, (f >= t ? "met" : "MISSED"); exit (f < t) }' "$csv" ||
            MISSED=1
    fi
    if [ -n "${CSV:-}" ]; then
        if [ -s "$CSV" ]; then tail -n +2 "$csv" >>"$CSV"; else cat "$csv" >"$CSV"; fi
    fi
done
echo "# target: auto >= 0.80 of the bound at the large sizes"
[ -z "${FAILED:-}" ] || exit 1
exit "${MISSED:-0}"
