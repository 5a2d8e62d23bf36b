# Reports past the bounds of src/report/report.h: too many rows, too many
# lines for one plot, too many sizes on a line are refused before anything is
# written (exit 2, naming the count and the limit); index.html shows the first
# rows of a big full-results table only, and says where the rest is.
. "$(dirname "$0")/lib.sh"

H=timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong,pass
# gen HOSTS PROCS SIZES: a CSV of HOSTS x PROCS series of SIZES sizes each.
gen() {
    awk -v H="$1" -v P="$2" -v S="$3" -v head="$H" 'BEGIN {
        print head
        for (h = 0; h < H; h++) for (p = 0; p < P; p++) for (s = 1; s <= S; s++) {
            b = 256 * s; t = 5 + b / 1000
            printf "2026-11-23T12:00:00Z,h%d,allreduce,shm,auto,cpu,malloc,%d,1,float32,sum,0,%d,%d,5,20,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.4f,%.4f,0,1\n",
                h, p + 2, b, b / 4, t, t * .9, t * .95, t, t * 1.05, t * 1.2, t * 1.3, b / t / 1000, b / t / 1000
        }
    }'
}
# refused NAME HOSTS PROCS SIZES MESSAGE
refused() {
    gen "$2" "$3" "$4" >"$WORK/$1.csv"
    run_report 2 "$WORK/$1.csv" -o "$WORK/$1"
    expect_in "$WORK/err" "$5"
    [ ! -e "$WORK/$1" ] || fail "$1: refused, yet $WORK/$1 was made"
}
refused rows 1 21 1000 "collbench report: 21000 rows (after merging duplicates), over the limit of 20000 one report takes"
refused series 130 1 2 "allreduce has over 128 series"
refused sizes 1 1 1001 "allreduce shm with 2 processes on h0 has 1001 sizes, over the limit of 1000 points a line takes"

# 1,200 rows: all in full_results.md and combined.csv, the first 1,000 in index.html.
gen 1 3 400 >"$WORK/big.csv"
run_report 0 "$WORK/big.csv" -o "$WORK/big"
expect_in "$WORK/big/index.html" "The first 1000 of 1200 rows; every row is in"
[ "$(grep -c '^| allreduce |' "$WORK/big/full_results.md")" -eq 1200 ] || fail "full_results.md: want 1200 rows"
[ "$(($(wc -l <"$WORK/big/combined.csv") - 1))" -eq 1200 ] || fail "combined.csv: want 1200 rows"
rows=$(sed -n '/<h2>Full results/,$p' "$WORK/big/index.html" | grep -c '^<tr><td')
[ "$rows" -eq 1000 ] || fail "index.html's full table: $rows rows, want 1000"

finish
