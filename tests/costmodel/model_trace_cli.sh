#!/bin/sh
# collbench model --trace: a program's trace as the workload. Rows made from
# known parameters (tcp rings, alpha 20 us, beta 5e-4 us/B, no noise) at 2, 3
# and 4 ranks fit and validate; a 2-rank trace's calls predicted on 4 ranks:
# every rank's calls, the one that adds up to the most shown (a subgroup that
# leaves rank 0 out counts);
# all-reduce counts unchanged, all-gather per-rank counts unchanged (its
# vector doubles), the sum per collective and in all as the formulas give it,
# calls without a validated model left out and named with their share of the
# bytes, the assumptions said. Bad input: a missing or garbage --trace, and
# --trace without --predict, exit 2 naming the problem.
. "$(dirname "$0")/../cli/lib.sh"

HEADER="timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong"
# rows COLLECTIVE: one row per process count (2, 3, 4) and size, the ring's time
rows() {
    awk -v coll="$1" 'BEGIN {
        np = split("2,3,4", P, ","); ns = split("65536,1048576,16777216,67108864", S, ",")
        for (i = 1; i <= np; i++) for (j = 1; j <= ns; j++) {
            p = P[i]; n = S[j]
            if (coll == "allreduce") t = 2 * (p - 1) * 20 + 2 * (p - 1) / p * n * 5e-4
            else t = (p - 1) * 20 + (p - 1) / p * n * 5e-4
            bw = n / t / 1e3
            printf "2026-11-26T00:00:00Z,vm,%s,tcp,ring,cpu,malloc,%d,1,float32,%s,0,%d,%d,1,10,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6g,%.6g,0\n",
                coll, p, coll == "allreduce" ? "sum" : "none", n, n / 4, t, t, t, t, t, t, t, bw, bw
        }
    }'
}
{ echo "$HEADER"; rows allreduce; rows allgather; } >"$WORK/rings.csv"

# each rank of a 2-rank trace: 3 all-reduces of 1 MiB, 2 all-gathers of 256 KiB
# a rank, a broadcast and a barrier (no rows: left out)
mkdir "$WORK/trace"
call() { # seq op count red [group]
    echo "{\"seq\":$1,\"group\":\"${5:-0}\",\"op\":\"$2\",\"dtype\":\"float32\",\"red\":\"$4\",\"count\":$3,\"in\":$3,\"out\":$3,\"root\":$([ "$2" = broadcast ] && echo 0 || echo -1),\"peer\":-1,\"gap\":0}"
}
for r in 0 1; do
    {
        echo "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":$r,\"world\":2,\"source\":\"handmade\"}"
        echo '{"group":"0","ranks":[0,1]}'
        call 0 allreduce 262144 sum
        call 1 allgather 65536 ""
        call 2 allreduce 262144 sum
        call 3 broadcast 1000 ""
        call 4 allgather 65536 ""
        call 5 allreduce 262144 sum
        call 6 barrier 0 ""
        echo '{"end":true,"calls":7,"truncated":false}'
    } >"$WORK/trace/rank$r.jsonl"
done

expect_exit 0 "" model "$WORK/rings.csv" --trace "$WORK/trace" --predict hosts=1,ranks-per-host=4 --no-rows
out=$WORK/out
grep -q "/trace, 14 calls of 2 ranks, 1 distinct" "$out" || fail "no workload heading (2 ranks alike): $(cat "$out")"
grep -q "^    rank 0, the most of the 2 ranks (the ranks: 3.626-3.626 ms)" "$out" ||
    fail "no rank line (equal ranks: the first shown): $(cat "$out")"
grep -q "^   assumes, where the cluster's world is not the trace's: .*" "$out" ||
    fail "no assumptions line: $(cat "$out")"
grep -q "gradients keep their sizes): all-reduce, broadcast and reduce counts" "$out" ||
    fail "the data-parallel assumption is not said: $(cat "$out")"
grep -q "all-gather and reduce-scatter per-rank counts unchanged" "$out" ||
    fail "the all-gather assumption is not said: $(cat "$out")"
grep -q "^vm / tcp / malloc buffers on 1 hosts x 4 ranks (hosts=1,ranks-per-host=4): the trace's communication" "$out" ||
    fail "no per-backend heading: $(cat "$out")"
# at 4 ranks: all-reduce 2*3*20 + 2*3/4*1 MiB*5e-4 = 906.432 us, three of them;
# all-gather of 4 x 256 KiB: 3*20 + 3/4*1 MiB*5e-4 = 453.216 us, two of them
awk '$1 == "allreduce" && NF >= 4 { ar = $4; arn = $2; arb = $3 }
     $1 == "allgather" && NF >= 4 { ag = $4; agb = $3 }
     $1 == "total" { tot = $4; calls = $2 }
     function near(x, want) { return x > 0.98 * want && x < 1.02 * want }
     END {
         if (arn != 3 || arb != 3 * 1048576) { print "allreduce: " arn " calls, " arb " bytes"; exit 1 }
         if (agb != 2 * 4 * 262144) { print "allgather bytes " agb ", want its vector at 4 ranks"; exit 1 }
         if (!near(ar, 2.719296)) { print "allreduce " ar " ms, want 2.719"; exit 1 }
         if (!near(ag, 0.906432)) { print "allgather " ag " ms, want 0.906"; exit 1 }
         if (calls != 7 || tot < ar + ag - 0.002 || tot > ar + ag + 0.002) { print "total " tot " of " calls " calls, want " ar + ag " of 7"; exit 1 }
     }' "$out" >"$WORK/sums" || fail "the sums: $(cat "$WORK/sums"): $(cat "$out")"
# left out: the broadcast and the barrier, named, with their share of the bytes
grep -q "left out (not in the total): 2 of 7 calls, 0.1% of the bytes: broadcast 1 (no fitted broadcast rows of this backend and buffer kind); barrier 1 (no fitted barrier rows" "$out" ||
    fail "left-out calls not named with their share: $(grep -A1 total "$out")"

grep -q "extrapolated beyond the rows" "$out" && fail "4 ranks on one host is within the rows: $(cat "$out")"
# beyond the rows (2 hosts, 8 ranks), said per series used
expect_exit 0 "" model "$WORK/rings.csv" --trace "$WORK/trace" --predict hosts=2,ranks-per-host=4,link=10Gbit/s,latency=5us --no-rows
grep -q "extrapolated beyond the rows (expect errors larger than the fit's residuals): allreduce ring: 2 hosts (rows: up to 1); 8 ranks (rows: up to 4)" "$WORK/out" ||
    fail "2 hosts: no extrapolation said: $(tail -3 "$WORK/out")"

# every rank's calls count: 3 ranks, ranks 1 and 2 also in a subgroup of their
# own (2 more all-reduces of 1 MiB at 2 ranks: 2 x (2*20 + 1 MiB*5e-4) =
# 1128.6 us): rank 1 makes the most; on 4 ranks its all-reduces come to
# 3 x 906.432 + 1128.6 us
mkdir "$WORK/sub"
for r in 0 1 2; do
    {
        echo "{\"format\":\"collbench-trace\",\"version\":1,\"rank\":$r,\"world\":3,\"source\":\"handmade\"}"
        echo '{"group":"0","ranks":[0,1,2]}'
        call 0 allreduce 262144 sum
        call 1 allreduce 262144 sum
        call 2 allreduce 262144 sum
        if [ $r -gt 0 ]; then
            echo '{"group":"s","ranks":[1,2]}'
            call 3 allreduce 262144 sum s
            call 4 allreduce 262144 sum s
        fi
        echo "{\"end\":true,\"calls\":$([ $r -gt 0 ] && echo 5 || echo 3),\"truncated\":false}"
    } >"$WORK/sub/rank$r.jsonl"
done
expect_exit 0 "" model "$WORK/rings.csv" --trace "$WORK/sub" --predict hosts=1,ranks-per-host=4 --no-rows
grep -q "calls of 3 ranks, 2 distinct" "$WORK/out" || fail "ranks 1 and 2 are alike: $(cat "$WORK/out")"
grep -q "^    rank 1, the most of the 3 ranks (the ranks: 2.719-3.848 ms)" "$WORK/out" ||
    fail "subgroup: rank 1 not shown as the most: $(cat "$WORK/out")"
awk '$1 == "allreduce" && NF >= 4 { exit !($2 == 5 && $4 > 3.84 && $4 < 3.86) }' "$WORK/out" ||
    fail "subgroup: rank 1's all-reduces: $(grep allreduce "$WORK/out")"
# ranks that disagree are refused, naming both files
sed 's/"count":262144/"count":262145/' "$WORK/sub/rank2.jsonl" >"$WORK/sub/rank2.tmp" && mv "$WORK/sub/rank2.tmp" "$WORK/sub/rank2.jsonl"
expect_exit 2 "the traces disagree: group" model "$WORK/rings.csv" --trace "$WORK/sub" --predict hosts=2

# one rank's file: that rank's calls; on the trace's own world the all-gather keeps its bytes
expect_exit 0 "" model "$WORK/rings.csv" --trace "$WORK/trace/rank0.jsonl" --predict hosts=1,ranks-per-host=2 --no-rows
grep -q "rank 0's 7 calls of a 2-rank world" "$WORK/out" || fail "one file: no heading: $(cat "$WORK/out")"
awk '$1 == "allgather" && NF >= 4 { exit !($3 == 2 * 2 * 262144) }' "$WORK/out" ||
    fail "2 ranks: allgather bytes changed: $(grep allgather "$WORK/out")"

# a model that did not validate predicts nothing: only one process count
awk -F, 'NR == 1 || $8 == 2' "$WORK/rings.csv" >"$WORK/two.csv"
expect_exit 1 "no call of the trace could be predicted" model "$WORK/two.csv" --trace "$WORK/trace" --predict hosts=1,ranks-per-host=4
grep -q "allreduce 3 (no validated model (allreduce ring: one process count" "$WORK/out" ||
    fail "unvalidated model not named: $(grep left "$WORK/out")"

# bad input
expect_exit 2 "collbench model: --trace $WORK/nowhere: No such file or directory" \
    model "$WORK/rings.csv" --trace "$WORK/nowhere" --predict hosts=2
mkdir "$WORK/empty"
expect_exit 2 "$WORK/empty holds no rank<R>.jsonl trace" model "$WORK/rings.csv" --trace "$WORK/empty" --predict hosts=2
mkdir "$WORK/garbage"
echo "this is not a trace" >"$WORK/garbage/rank0.jsonl"
expect_exit 2 "$WORK/garbage/rank0.jsonl:1" model "$WORK/rings.csv" --trace "$WORK/garbage" --predict hosts=2
expect_exit 2 "--trace needs --predict" model "$WORK/rings.csv" --trace "$WORK/trace"
expect_exit 2 "--trace is the workload: not with --sizes" model "$WORK/rings.csv" --trace "$WORK/trace" --predict hosts=2 --sizes 1M
finish
