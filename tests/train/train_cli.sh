#!/bin/sh
# collbench train: rows for every mode, the CSV/JSON schema of docs/DESIGN.md,
# bad input exits 2, a NaN loss stops the run naming the step.
. "$(dirname "$0")/../cli/lib.sh"

SMALL="--hidden 64 --input 32 --steps 4 --warmup 1 --compute-steps 2 --backend tcp"

"$BIN" train $SMALL -P 1,2 --mode single,allreduce-sync,ddp,ps,local-sgd:2 --batch-sizes 8,16 \
    --bucket-mb 0.01 --compress none,fp16,topk:0.1 --csv "$WORK/t.csv" -J "$WORK/t.json" \
    >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 0 ] || fail "train: exit $rc: $(cat "$WORK/err")"
for mode in single allreduce-sync ddp ps local-sgd:2; do
    grep -q "^mlp-64 .* $mode " "$WORK/out" || fail "no $mode row in: $(cat "$WORK/out")"
done
grep -q "topk:0.1" "$WORK/out" || fail "no topk row: $(cat "$WORK/out")"
grep -q "^memory per rank" "$WORK/out" || fail "no memory table: $(cat "$WORK/out")"
head -1 "$WORK/t.csv" | grep -qx 'timestamp,host,model,params,mode,backend,nprocs,batch,bucket_mb,compress,steps,step_ms_avg,step_ms_p50,step_ms_p99,compute_ms,comm_exposed_ms,comm_overhead_pct,samples_per_s,scaling_eff' ||
    fail "--csv header: $(head -1 "$WORK/t.csv")"
# 2 batch sizes x (single + sync + 3 ddp + ps + local-sgd)
[ "$(tail -n +2 "$WORK/t.csv" | wc -l)" -eq 14 ] || fail "--csv rows: $(cat "$WORK/t.csv")"
awk -F, 'NR > 1 && $5 == "single" && $19 != "1.0000" { bad = 1 } END { exit bad }' "$WORK/t.csv" ||
    fail "single rows must have scaling_eff 1: $(cat "$WORK/t.csv")"
if command -v python3 >/dev/null; then
    python3 - "$WORK/t.json" <<'PY' || fail "-J: $(cat "$WORK/t.json")"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["results"]["training"]["mlp-64"]
m = d["results"]["memory"]["mlp-64"]
keys = "timestamp,host,model,params,mode,backend,nprocs,batch,bucket_mb,compress,steps,step_ms_avg,step_ms_p50,step_ms_p99,compute_ms,comm_exposed_ms,comm_overhead_pct,samples_per_s,scaling_eff".split(",")
assert len(t) == 14 and all(sorted(r) == sorted(keys) for r in t), t
mk = "model,batch,params_bytes,grads_bytes,optim_bytes,activations_bytes,comm_buffers_bytes,peak_rss_bytes".split(",")
assert len(m) == 2 and all(sorted(r) == sorted(mk) for r in m), m
assert all(r["params_bytes"] == r["grads_bytes"] > 0 and r["peak_rss_bytes"] > 0 for r in m), m
assert {r["batch"] for r in m} == {8, 16}, m
PY
fi

# NaN: stops, names the step, exit 3
expect_exit 3 "step 3" train $SMALL -P 2 --mode ddp --inject-nan 3
expect_exit 3 "step 2" train $SMALL -P 1 --inject-nan 2

expect_exit 2 "\-\-hidden" train --hidden 64,0
expect_exit 2 "\-\-bucket-mb" train --bucket-mb 0
expect_exit 2 "(0,1\]" train --compress topk:0
expect_exit 2 "(0,1\]" train --compress topk:1.5
expect_exit 2 "4 processes" train --global-batch 2 -P 1,4
# the refusal states its rule (80% of what is available), not just two numbers
expect_exit 2 "more than 80% of the [0-9]* MiB available" train --hidden 40000,40000 --input 1000
expect_exit 2 "\-\-mode" train --mode dp
expect_exit 2 "\-\-image" train --model cnn --image 20
expect_exit 2 "\-\-bogus" train --bogus 1
finish
