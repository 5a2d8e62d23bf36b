#!/bin/sh
# collbench model on a CSV made from known parameters (a tcp ring: alpha 20 us,
# beta 5e-4 us/B, +-3% noise): the fit finds them, prints every row's
# residual and predicts; bad --predict syntax, one size only and a missing
# file are refused with messages naming the problem.
. "$(dirname "$0")/../cli/lib.sh"

HEADER="timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong"
# rows P... SIZE...: one row per process count and size
rows() {
    awk -v procs="$1" -v sizes="$2" 'BEGIN {
        np = split(procs, P, ","); ns = split(sizes, S, ","); k = 0
        for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++) {
            p = P[i]; n = S[j]; k++
            t = (2 * (p - 1) * 20 + 2 * (p - 1) / p * n * 5e-4) * (1 + (k % 2 ? 0.03 : -0.03))
            bw = n / t / 1e3
            printf "2026-11-26T00:00:00Z,vm,allreduce,tcp,ring,cpu,malloc,%d,1,float32,sum,0,%d,%d,1,10,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6g,%.6g,0\n",
                p, n, n / 4, t, t, t, t, t, t, t, bw, bw * 2 * (p - 1) / p
        }
    }'
}
{ echo "$HEADER"; rows 2,3,4 65536,1048576,16777216,67108864; } >"$WORK/ring.csv"
{ echo "$HEADER"; rows 2,3,4 1048576; } >"$WORK/one_size.csv"

expect_exit 0 "" model "$WORK/ring.csv"
out="$WORK/out"
grep -q "algo ring" "$out" || fail "no series line: $(cat "$out")"
# alpha within 25% of 20 us, beta within 5% of 0.5 ns/B
awk '$1 == "alpha_intra" { a = $2 } $1 == "beta_intra" { b = $2 }
     END { exit !(a > 15 && a < 25 && b > 0.475 && b < 0.525) }' "$out" ||
    fail "parameters not found back: $(grep -E 'alpha|beta' "$out")"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ .*% +[0-9.]+' "$out")" -eq 12 ] || fail "want 12 residual rows: $(cat "$out")"
# held out: each process count predicted from the other two, within the noise
grep -qE "held out \(each count left out, the rest fitted, its rows predicted\): fit 3,4 -> 2 ranks [0-9.]+%; fit 2,4 -> 3 ranks [0-9.]+%; fit 2,3 -> 4 ranks [0-9.]+%" "$out" ||
    fail "no held-out folds: $(cat "$out")"
grep -qE "held-out error: median [0-5]\.[0-9]%, max [0-9.]+% over 12 rows \(in-sample median [0-9.]+%\): a report of these files would draw it" "$out" ||
    fail "held-out error not within the 3% noise: $(grep held "$out")"
# A CSV carries no core count: the fit says what it assumed and how to give it,
# and no verdict about "the report", which may have read results.json and its
# cores (was: "the report does not draw it" where the suite's report drew it)
grep -q "cores: not recorded in these files (a CSV has no column for them): fitted as if each rank had a core" "$out" ||
    fail "the fit does not say it assumed a core per rank: $(cat "$out")"
grep -q "give --cores N" "$out" || fail "no hint to give --cores: $(cat "$out")"
grep -q "the report \(does not \)\?draws\? it" "$out" && fail "a verdict about the report without its cores: $(grep held "$out")"
expect_exit 0 "" model "$WORK/ring.csv" --cores 2
grep -q "cores: 2, --cores (where ranks outnumber them" "$out" || fail "--cores not stated: $(cat "$out")"
grep -q "cores: not recorded" "$out" && fail "--cores given, yet not known: $(cat "$out")"
grep -qE "held-out error: .*: with these cores a report would (not )?draw it" "$out" ||
    fail "verdict not tied to --cores: $(grep held "$out")"

expect_exit 0 "" model "$WORK/ring.csv" --predict hosts=8,link=10Gbit/s,latency=5us --sizes 1M,1G
grep -q "on 8 hosts x 1 ranks, link 10 Gbit/s" "$out" || fail "no prediction heading: $(cat "$out")"
grep -q "1G pick: ring" "$out" || fail "no pick: $(cat "$out")"
grep -q "not modelled" "$out" || fail "limits not stated"
# beyond the rows (one host, 2-4 ranks, 64K-64M): said, with the fit's residuals
grep -q "extrapolated beyond the rows: 8 hosts (rows: up to 1); 8 ranks (rows: up to 4); sizes up to 1G (rows: up to 64M); a 10 Gbit/s link (rows: one host only)" "$out" ||
    fail "extrapolation not named: $(cat "$out")"
grep -q "the fit's residuals (median [0-9]*%" "$out" || fail "no error bar: $(cat "$out")"
expect_exit 0 "" model "$WORK/ring.csv" --predict hosts=1,ranks-per-host=3 --sizes 1M
grep -q "extrapolated" "$out" && fail "a measured cluster called an extrapolation: $(cat "$out")"

expect_exit 2 "unknown key 'speed'" model "$WORK/ring.csv" --predict hosts=8,speed=1
expect_exit 2 "needs latency" model "$WORK/ring.csv" --predict hosts=8,link=10Gbit/s
expect_exit 2 "bad rate" model "$WORK/ring.csv" --predict hosts=8,link=ten,latency=1us
expect_exit 2 "\-\-sizes needs \-\-predict" model "$WORK/ring.csv" --sizes 1M
# every argument checked before the fit: nothing printed before exit 2 (was:
# nan busbw at --sizes 0, a 300-digit time at latency=1e300s, both exit 0, and
# the whole fit printed before a bad --predict was refused)
refused() {
    want=$1
    shift
    expect_exit 2 "$want" model "$WORK/ring.csv" "$@"
    [ -s "$WORK/out" ] && fail "model $*: printed before refusing: $(head -n 3 "$WORK/out")"
}
P=hosts=8,link=10Gbit/s,latency=5us
refused "\-\-sizes: '0': each size must be from 1 byte to 1T" --predict $P --sizes 0
refused "\-\-sizes: '2T'" --predict $P --sizes 2T
refused "latency: '1e300s' is more than 1s" --predict hosts=8,link=10Gbit/s,latency=1e300s --sizes 1M
refused "link: '1e300GB/s' is outside 1Mbit/s..100Tbit/s" --predict hosts=8,link=1e300GB/s,latency=1us
refused "unknown key 'speed'" --predict hosts=8,speed=1
refused "hosts= is given twice" --predict hosts=64,hosts=2
refused "\-\-train: $WORK/no-such-training.csv: No such file" --predict $P --train "$WORK/no-such-training.csv"
# fitted on one host, no link given: nothing to say about 8 hosts
expect_exit 1 "nothing could be predicted" model "$WORK/ring.csv" --predict hosts=8
grep -q "one host only" "$WORK/out" || fail "no reason for the missing prediction: $(cat "$WORK/out")"
expect_exit 1 "no series could be fitted" model "$WORK/one_size.csv"
grep -q "only one message size" "$WORK/out" || fail "refusal does not say why: $(cat "$WORK/out")"
# the cores a run recorded (results.json machines.<host>.cores) reach the fit;
# a value that is no count of cores is refused by name
FIX=$(dirname "$0")/../report/fixtures
sed 's/"memcpy_GBps": 5.0/&, "cores": 2/' "$FIX/findings_copy_rate.json" >"$WORK/cores.json"
expect_exit 0 "" model "$WORK/cores.json"
grep -q "cores: 2, as the run recorded them (where ranks outnumber them, per-byte CPU costs x ranks/2)" "$out" ||
    fail "recorded cores not used: $(cat "$out")"
sed 's/"memcpy_GBps": 5.0/&, "cores": 2.5/' "$FIX/findings_copy_rate.json" >"$WORK/cores.json"
expect_exit 1 "machines.box.cores is not a count of cores" model "$WORK/cores.json"
expect_exit 1 "no-such.csv" model "$WORK/no-such.csv"
expect_exit 2 "no result files" model
finish
