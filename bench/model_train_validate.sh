#!/bin/bash
# The training-step prediction (collbench model --train, docs/DESIGN.md "Cost
# model", "Training") at a world it was not fitted at: all-reduce rows and
# training rows (allreduce-sync and ddp) at FIT_P ranks on this host; the step
# predicted at each of HELD_P ranks on this host and measured there. Prints,
# per mode and world, predicted vs measured step and exposed communication
# (step - compute) and their errors, and the median and largest absolute step
# error. The model carries compute over from the fitted world (same machine,
# same per-rank batch): where the held-out world has more ranks than cores the
# measured compute grows too, and the table shows it beside the step.
#
#   bench/model_train_validate.sh [COLLBENCH]
# env: BACKEND (tcp), FIT_P (2), HELD_P ("3 4"), HIDDEN (1024,1024), INPUT
#      (1024), BATCH (32), BUCKET_MB (2), STEPS (10), ITERS (5; the all-reduce
#      rows), CORES (the cores the ranks share, told to the fit and the
#      predictions; default nproc, 0: not told), KEEP (a directory to keep the
#      CSV files in), FROM (such a directory: model its rows, measure nothing).
#      Exit 77 (a skip for ctest) where collbench train is unavailable (built
#      without OpenBLAS). Smallest run (ctest bench/model_train_validate):
#      HELD_P=3 HIDDEN=64 INPUT=64 BATCH=4 STEPS=2 ITERS=2 BUCKET_MB=1.
set -u
BIN=${1:-build/collbench}
HERE=$(cd "$(dirname "$0")" && pwd)
BACKEND=${BACKEND:-tcp}
FIT_P=${FIT_P:-2}
HELD_P=${HELD_P:-3 4}
HIDDEN=${HIDDEN:-1024,1024}
INPUT=${INPUT:-1024}
BATCH=${BATCH:-32}
BUCKET_MB=${BUCKET_MB:-2}
STEPS=${STEPS:-10}
ITERS=${ITERS:-5}
CORES=${CORES:-$(nproc)}
[ -x "$BIN" ] || { echo "no collbench at $BIN (build first, or pass its path)" >&2; exit 2; }
. "$HERE/../tests/have_train.sh"
have_train "$BIN" || { echo "SKIP: collbench train unavailable (built without OpenBLAS)"; exit 77; }
OUT=$(mktemp -d "${TMPDIR:-/tmp}/model_train_validate.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
CORES_FIT="" CORES_KEY=""
[ "$CORES" -gt 0 ] && CORES_FIT="--cores $CORES" CORES_KEY=",cores=$CORES"

train() { # train P CSV
    "$BIN" train --mode allreduce-sync,ddp --backend "$BACKEND" -P "$1" --hidden "$HIDDEN" \
        --input "$INPUT" --batch-sizes "$BATCH" --bucket-mb "$BUCKET_MB" --steps "$STEPS" \
        --warmup 2 --compute-steps 5 --csv "$2" >"$OUT/log" 2>&1 ||
        { echo "collbench train at $1 ranks failed:" >&2; cat "$OUT/log" >&2; exit 1; }
}

echo "# training-step prediction: fit at $FIT_P ranks, predict and measure $HELD_P ranks, one host,"
echo "# backend $BACKEND, mlp input $INPUT hidden $HIDDEN, batch $BATCH per rank, ddp buckets $BUCKET_MB MiB;"
echo "# $(nproc) cores (the model is told: ${CORES_FIT:-nothing}); load average now: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${FROM:-}" ]; then
    cp "$FROM"/ar.csv "$FROM"/train_fit.csv "$FROM"/train_held.csv "$OUT"/ || exit 2
    echo "# rows from $FROM (measured earlier), not measured now"
else
    # the gradient's buckets and the whole gradient lie within these sizes
    "$BIN" allreduce --backend "$BACKEND" -P "$FIT_P" --sizes 256K,1M,2M,4M,8M,16M,32M \
        -n "$ITERS" -w 2 -c 0 --inplace 0 --csv "$OUT/ar.csv" -q ||
        { echo "the all-reduce rows failed" >&2; exit 1; }
    train "$FIT_P" "$OUT/train_fit.csv"
    for p in $HELD_P; do train "$p" "$OUT/train_held.csv"; done
fi
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$OUT"/*.csv "$KEEP"/

args=()
for p in $HELD_P; do args+=(--predict "hosts=1,ranks-per-host=$p$CORES_KEY"); done
"$BIN" model "$OUT/ar.csv" $CORES_FIT --no-rows --collective allreduce --backend "$BACKEND" \
    --train "$OUT/train_fit.csv" "${args[@]}" >"$OUT/model" 2>&1 ||
    { echo "collbench model --train failed:" >&2; cat "$OUT/model" >&2; exit 1; }
echo "## the model's output"
cat "$OUT/model"

# the prediction for block K (the K-th --predict) and mode label L: "step exposed compute";
# the table's predicted exposed time is step - compute (overhead included), as measured
predicted() {
    awk -v blk="$1" -v mode="$2" '/predicted on/ { b++ }
        b == blk { l = substr($0, 5, 22); sub(/ +$/, "", l)
                   if (l == mode) { print $(NF - 2), $(NF - 3), $(NF - 6); exit } }' "$OUT/model"
}
echo "## held-out worlds: predicted vs measured step (ms)"
printf "| %-9s | %5s | %10s | %10s | %7s | %13s | %12s | %15s |\n" mode ranks predicted measured error "pred. exposed" "meas. exposed" "compute fit/meas"
printf "|%s|\n" "-----------|-------|------------|------------|---------|---------------|--------------|-----------------"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
         { print $c["mode"], $c["nprocs"], $c["bucket_mb"], $c["compress"], $c["step_ms_avg"], $c["compute_ms"] }' \
    "$OUT/train_held.csv" |
    while read -r mode np bucket compress step compute; do
        [ "$compress" = none ] || continue
        blk=0 k=0
        for p in $HELD_P; do k=$((k + 1)); [ "$p" = "$np" ] && blk=$k; done
        [ "$blk" -gt 0 ] || continue
        label=sync
        [ "$mode" = ddp ] && label="ddp $(awk -v b="$bucket" 'BEGIN { printf "%g", b }')M"
        read -r pstep _ pcomp <<<"$(predicted "$blk" "$label")"
        [ -n "${pstep:-}" ] || { echo "| $label | $np | n/a | $step | n/a | | | |"; continue; }
        awk -v l="$label" -v np="$np" -v ps="$pstep" -v ms="$step" -v mc="$compute" -v pc="$pcomp" \
            'BEGIN { printf "| %-9s | %5d | %10.2f | %10.2f | %+6.1f%% | %13.2f | %12.2f | %7.2f/%-7.2f |\n",
                     l, np, ps, ms, 100 * (ps - ms) / ms, ps - pc, ms - mc, pc, mc }'
    done | tee "$OUT/cells"
awk -F'|' '{ e = $6; gsub(/[ %+]/, "", e); if (e == "n/a" || e == "") next; e += 0; e = e < 0 ? -e : e; v[++n] = e; if (e > mx) mx = e }
     END { if (!n) exit; for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
           printf "## step error: median %.1f%%, max %.1f%% (%d cells)\n", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2, mx, n }' "$OUT/cells"
