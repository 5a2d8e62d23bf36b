#!/bin/sh
# collbench model --train: all-reduce rows made from a known tcp ring (alpha
# 20 us, beta 5e-4 us/B, no noise) and training rows of a 1e6-parameter model
# measured at 4 ranks (compute 10 ms; sync step 13.62 ms, ddp 11.5 ms). At the
# measured world the prediction gives back the measured step (the model's miss
# is the overhead); at 8 ranks the steps worked by hand (docs/DESIGN.md "Cost
# model", "Training"): sync 10 + 0.5 + 3.78 = 14.28 ms, ddp (1M buckets)
# 11.767 ms. Missing inputs are refused with messages naming them.
. "$(dirname "$0")/../cli/lib.sh"

HEADER="timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong"
awk 'BEGIN {
    np = split("2,3,4", P, ","); ns = split("65536,1048576,16777216,67108864", S, ",")
    for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++) {
        p = P[i]; n = S[j]
        t = 2 * (p - 1) * 20 + 2 * (p - 1) / p * n * 5e-4
        bw = n / t / 1e3
        printf "2026-11-26T00:00:00Z,vm,allreduce,tcp,ring,cpu,malloc,%d,1,float32,sum,0,%d,%d,1,10,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6g,%.6g,0\n",
            p, n, n / 4, t, t, t, t, t, t, t, bw, bw * 2 * (p - 1) / p
    }
}' >"$WORK/body"
{ echo "$HEADER"; cat "$WORK/body"; } >"$WORK/ring.csv"

THEAD="timestamp,host,model,params,mode,backend,nprocs,batch,bucket_mb,compress,steps,step_ms_avg,step_ms_p50,step_ms_p99,compute_ms,comm_exposed_ms,comm_overhead_pct,samples_per_s,scaling_eff"
T0="2026-11-26T00:00:00Z,vm,mlp,1000000"
{
    echo "$THEAD"
    echo "$T0,single,tcp,1,32,0,none,10,10.000,10.000,10.100,10.000,0.000,0.00,3200.00,1.0000"
    echo "$T0,allreduce-sync,tcp,2,32,0,none,10,12.000,12.000,12.100,10.000,2.000,16.67,5333.33,0.8333"
    echo "$T0,allreduce-sync,tcp,4,32,0,none,10,13.620,13.620,13.700,10.000,3.620,26.58,9397.94,0.7342"
    echo "$T0,ddp,tcp,4,32,1,none,10,11.500,11.500,11.600,10.000,1.500,13.04,11130.43,0.8696"
    echo "$T0,ddp,tcp,4,32,1,fp16,10,11.000,11.000,11.100,10.000,1.000,9.09,11636.36,0.9091"
    echo "$T0,ddp,tcp,4,32,1,topk:0.01,10,10.800,10.800,10.900,10.000,0.800,7.41,11851.85,0.9259"
} >"$WORK/train.csv"

expect_exit 0 "" model "$WORK/ring.csv" --no-rows --train "$WORK/train.csv" \
    --predict hosts=1,ranks-per-host=4 --predict hosts=1,ranks-per-host=8 \
    --predict hosts=4,ranks-per-host=2,link=10Gbit/s,latency=5us
out="$WORK/out"
grep -q "training step predictions (not measured)" "$out" || fail "no heading: $(cat "$out")"
grep -q "Not modelled" "$out" || fail "limits not stated"
grep -q "rows at 4 ranks" "$out" || fail "not calibrated at the largest world: $(cat "$out")"
grep -q "topk.*not modelled" "$out" || fail "top-k not refused: $(cat "$out")"
# block N of the predictions: the step column of MODE
step() {
    awk -v blk="$1" -v mode="$2" '/predicted on/ { b++ } b == blk { l = substr($0, 5, 22); sub(/ +$/, "", l); if (l == mode) { print $(NF - 2); exit } }' "$out"
}
near() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a - b < 0.02 && b - a < 0.02) }'; }
near "$(step 1 sync)" 13.62 || fail "sync at the measured world: $(step 1 sync), want 13.62: $(cat "$out")"
near "$(step 1 'ddp 1M')" 11.50 || fail "ddp at the measured world: $(step 1 'ddp 1M'), want 11.50"
near "$(step 1 'ddp 1M fp16')" 11.00 || fail "ddp fp16 at the measured world: $(step 1 'ddp 1M fp16')"
near "$(step 2 sync)" 14.28 || fail "sync at 8 ranks: $(step 2 sync), want 14.28"
near "$(step 2 'ddp 1M')" 11.767 || fail "ddp at 8 ranks: $(step 2 'ddp 1M'), want 11.767"
grep -q "predicted on 4 hosts x 2 ranks, link 10 Gbit/s" "$out" || fail "no link block: $(cat "$out")"
[ -n "$(step 3 sync)" ] || fail "no sync prediction over the link: $(cat "$out")"

expect_exit 2 "\-\-train needs \-\-predict" model "$WORK/ring.csv" --train "$WORK/train.csv"
# a --train file that cannot be read is refused before the fit (exit 2, as a bad flag)
expect_exit 2 "no-such.csv: No such file" model "$WORK/ring.csv" --train "$WORK/no-such.csv" --predict hosts=2
sed 's/,tcp,/,shm,/' "$WORK/train.csv" >"$WORK/train_shm.csv"
expect_exit 1 "no training step could be predicted" model "$WORK/ring.csv" --train "$WORK/train_shm.csv" --predict hosts=1,ranks-per-host=8
grep -q "no fitted all-reduce of backend shm" "$WORK/out" || fail "no reason for the shm refusal: $(cat "$WORK/out")"
head -3 "$WORK/train.csv" >"$WORK/train_single.csv"
sed -i '3d' "$WORK/train_single.csv"
expect_exit 1 "no allreduce-sync or ddp rows" model "$WORK/ring.csv" --train "$WORK/train_single.csv" --predict hosts=2
finish
