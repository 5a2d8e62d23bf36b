#!/bin/bash
# What overlap, bucketing and the parameter-server pattern do to a training
# step (issue 6), in one run, with the ratios the targets are about:
#   1. communication-heavy MLP (~50M parameters, 2 ranks): ddp vs allreduce-sync
#      targets: ddp step <= 0.85 x sync step; ddp exposed comm <= 0.5 x sync's
#   2. ps vs allreduce-sync at 4 ranks: ps must be slower
#   3. ddp bucket sizes 1, 5, 25, 100 MiB on the model of 1: the best one
#   4. the same comparison across 2 emulated hosts x 1 rank joined by a link
#      shaped to $LINK (network namespaces, veth, tc tbf; needs root, else
#      skipped with the reason): communication then waits on the link, not on
#      the cores that compute, which is where DDP's overlap pays. A model whose
#      compute outweighs its all-reduce on that link (MLP 4096-1024-1024-1024,
#      6.3M parameters, batch 768: ~250 ms of compute, ~190 ms of all-reduce
#      at 1 Gbit/s), ddp with $LINK_BUCKET MiB buckets, and a bucket sweep;
#      a host that fails there fails the script
#
# Knobs (environment): BACKEND (tcp), STEPS (15), WARMUP (3), BATCH (16), HIDDEN
# (4096,4096,4096 with --input $INPUT, 4096: 50.4M parameters), BUCKETS
# (1,5,25,100: part 3), PS_HIDDEN (2048,2048) and PS_INPUT (1024): part 2's
# model, CSV (a file to keep the rows here); part 4: LINK (1gbit; "none" skips
# it), LINK_HIDDEN (1024,1024,1024), LINK_INPUT (4096), LINK_BATCH (768),
# LINK_BUCKET (2), LINK_BUCKETS (1,2,5,25).
# Needs a build with OpenBLAS: exit 77 (a skip for ctest) saying so without.
# Smallest run (ctest bench/train_overlap): STEPS=2 WARMUP=1 BATCH=2 HIDDEN=16
# INPUT=16 PS_HIDDEN=16 PS_INPUT=16 BUCKETS=1,5 LINK_HIDDEN=16 LINK_INPUT=16
# LINK_BATCH=2 LINK_BUCKET=1 LINK_BUCKETS=1,5.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/collbench}
backend=${BACKEND:-tcp}
steps=${STEPS:-15}
batch=${BATCH:-16}
hidden=${HIDDEN:-4096,4096,4096}
dir=$(mktemp -d "${TMPDIR:-/tmp}/collbench-train-overlap.XXXXXX")
trap 'rm -rf "$dir"' EXIT
[ -x "$bin" ] || { echo "no collbench at $bin (make build, or pass its path)" >&2; exit 2; }
. "$root/tests/have_train.sh"
have_train "$bin" || { echo "train_overlap: skipped: collbench train does not run (a build without OpenBLAS? apt-get install libopenblas-dev, rebuild)"; exit 77; }

timing="--steps $steps --warmup ${WARMUP:-3} --compute-steps $((steps / 2 + 1))"
common="--backend $backend $timing"
heavy="--hidden $hidden --input ${INPUT:-4096} --batch-sizes $batch"

echo "== 1. overlap: ddp vs allreduce-sync, 2 ranks, $backend"
"$bin" train $common $heavy -P 2 --mode allreduce-sync,ddp --bucket-mb 25 --csv "$dir/overlap.csv"
echo "== 2. parameter server vs all-reduce, 4 ranks, $backend"
"$bin" train $common --hidden "${PS_HIDDEN:-2048,2048}" --input "${PS_INPUT:-1024}" --batch-sizes 32 -P 4 \
    --mode allreduce-sync,ps --csv "$dir/ps.csv"
echo "== 3. ddp bucket sizes, 2 ranks, $backend"
"$bin" train $common $heavy -P 2 --mode ddp --bucket-mb "${BUCKETS:-1,5,25,100}" --csv "$dir/buckets.csv"

# Part 4 in a subshell: its namespaces are removed on the way out, whatever happens.
link=${LINK:-1gbit}
link_bucket=${LINK_BUCKET:-2}
link_buckets=${LINK_BUCKETS:-1,2,5,25}
link_model="--hidden ${LINK_HIDDEN:-1024,1024,1024} --input ${LINK_INPUT:-4096} --batch-sizes ${LINK_BATCH:-768}"
link_bench() {
    . "$root/tests/netns/netns_lib.sh"
    netns_require || exit 77
    netns_setup 2 "$link" "" || { echo "cannot set up namespaces shaped to $link"; exit 77; }
    local port=$((30000 + $$ % 20000)) i pids=() token="$dir/link.token"
    (umask 077 && echo "train-overlap-$$" >"$token") # a file: ps would show --job-token
    for i in 0 1; do
        netns_run $i "$bin" train --backend tcp $timing $link_model --mode allreduce-sync,ddp \
            --bucket-mb "$link_buckets" --nnodes 2 --node-rank $i --nproc-per-node 1 \
            --master-addr "$(netns_addr 0)" --master-port $port --job-token-file "$token" \
            --csv "$dir/link.csv" >"$dir/link.node$i" 2>&1 &
        pids+=($!)
    done
    for i in 0 1; do wait "${pids[$i]}" || { echo "host $i failed:"; cat "$dir/link.node$i"; exit 1; }; done
    cat "$dir/link.node0"
}
if [ "$link" != none ]; then
    echo "== 4. overlap over a $link link: ddp vs allreduce-sync, 2 emulated hosts x 1 rank, tcp"
    link_rc=0
    ( link_bench ) || link_rc=$?
    case $link_rc in
    0) ;;
    77) echo "(part 4 skipped)"; rm -f "$dir/link.csv" ;;
    *) echo "part 4 failed (exit $link_rc)" >&2; exit 1 ;;
    esac
fi
[ -z "${CSV:-}" ] || { head -1 "$dir/overlap.csv"; tail -q -n +2 "$dir"/overlap.csv "$dir"/ps.csv "$dir"/buckets.csv $([ -f "$dir/link.csv" ] && echo "$dir/link.csv"); } >"$CSV"

# CSV columns: 5 mode, 9 bucket_mb, 12 step_ms_avg, 16 comm_exposed_ms
echo "== ratios (targets in brackets)"
overlap_ratios() { # FILE LABEL [BUCKET_MB: the ddp row to compare, default the only one]
    awk -F, -v l="$2" -v mb="${3:-}" 'FNR > 1 && $5 == "allreduce-sync" { t = $12; e = $16 }
         FNR > 1 && $5 == "ddp" && (mb == "" || $9 == mb) { d = $12; de = $16 }
         END { printf "ddp / allreduce-sync step time%s:     %.3f  (<= 0.85)  [%.2f ms vs %.2f ms]\n", l, d / t, d, t
               printf "ddp / allreduce-sync exposed comm%s:  %.3f  (<= 0.50)  [%.2f ms vs %.2f ms]\n", l, de / e, de, e }' "$1"
}
bucket_sweep() { # FILE: every ddp row's bucket size, step and exposed time; the best
    awk -F, 'FNR > 1 && $5 == "ddp" { printf "  ddp bucket %5s MiB: step %.2f ms, exposed %.2f ms\n", $9, $12, $16
                   if (best == "" || $12 < best) { best = $12; mb = $9 } }
         END { printf "best bucket size: %s MiB\n", mb }' "$1"
}
overlap_ratios "$dir/overlap.csv" ""
if [ -f "$dir/link.csv" ]; then
    overlap_ratios "$dir/link.csv" " over $link" "$link_bucket"
    echo "ddp bucket sizes over $link:"
    bucket_sweep "$dir/link.csv"
fi
awk -F, 'FNR > 1 && $5 == "allreduce-sync" { t = $12 } FNR > 1 && $5 == "ps" { p = $12 }
         END { printf "ps / allreduce-sync step, 4 ranks:  %.3f  (> 1)  [%.2f ms vs %.2f ms]\n", p / t, p, t }' \
    "$dir/ps.csv"
echo "ddp bucket sizes, $backend:"
bucket_sweep "$dir/buckets.csv"
