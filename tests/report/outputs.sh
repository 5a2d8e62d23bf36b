# collbench report from the fixtures: the files, the table rows, the analysis
# sentences (facts built into the fixtures), the plots' size, a self-contained
# index.html, and the same bytes on a second run and with the inputs reversed.
# These fixtures have the older header (no buffers, p25, p75): the legacy path,
# where buffers read "unknown" and the spread is min-p99. They hold two
# machines: cpubox (shm, tcp) and gpubox (nccl).
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/comm_cpu.csv" "$FIX/gpu_and_train.json" -o "$OUT"
cp "$WORK/err" "$WORK/first_err"

for f in combined.csv combined_training.csv full_results.md summary_by_config.md analysis.txt index.html; do
    [ -s "$OUT/$f" ] || fail "$f missing or empty"
done

# combined.csv: the docs/DESIGN.md header, 20 CSV + 7 JSON rows minus 1 duplicate, no repeats.
head -1 "$OUT/combined.csv" | grep -qx 'timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong,pass' ||
    fail "combined.csv header: $(head -1 "$OUT/combined.csv")"
rows=$(($(wc -l <"$OUT/combined.csv") - 1))
[ "$rows" -eq 26 ] || fail "combined.csv has $rows rows, want 26"
[ -z "$(sort "$OUT/combined.csv" | uniq -d)" ] || fail "combined.csv has duplicate rows"
grep -q "duplicate rows merged" "$WORK/first_err" || fail "the duplicate row was not reported as merged"
[ "$(($(wc -l <"$OUT/combined_training.csv") - 1))" -eq 4 ] || fail "combined_training.csv: want 4 rows"

# Tables.
[ "$(grep -c '^| allreduce |' "$OUT/full_results.md")" -eq 22 ] || fail "full_results.md: want 22 allreduce rows"
[ "$(grep -c '^| allgather |' "$OUT/full_results.md")" -eq 4 ] || fail "full_results.md: want 4 allgather rows"
expect_in "$OUT/full_results.md" "| allreduce | nccl | auto | cuda | unknown | 2 | 1 | float32 | sum | 0 | 1 MiB | 1048576 | 50.000 | 45.000 | - | 50.000 | - | 60.000 |"
expect_in "$OUT/full_results.md" "| mlp | 1200000 | ddp | tcp | 4 | 64 | 25 | none | 20 | 75.000 |"
expect_in "$OUT/full_results.md" "| mlp | 64 | 4.6 MiB | 4.6 MiB | 9.2 MiB | 2 MiB | 25 MiB | 100 MiB |"
expect_in "$OUT/summary_by_config.md" "| allreduce | cpubox | cpu | unknown | shm | 2 | 1 | 1 KiB - 100 MiB (5) | 5.0 us | 10.00 ms | 10.5 | 100 MiB | 0 |"
expect_in "$OUT/summary_by_config.md" "| allreduce | cpubox | cpu | unknown | tcp | 4 | 1 | 1 KiB - 100 MiB (5) | 6.0 us | 60.00 ms | 2.62 | 100 MiB | 3 |"
expect_in "$OUT/summary_by_config.md" "| allreduce | gpubox | cuda | unknown | nccl | 2 | 1 | 1 KiB - 1 MiB (2) | 15.0 us | - | 21 | 1 MiB | 0 |"
expect_in "$OUT/summary_by_config.md" "| mlp | ddp | cpubox | shm | 2 | 64 | 25 | none | 40.00 | 30.00 | 10.00 | 25% | 3200.0 | 0.90 |"
[ "$(grep -c '^| all' "$OUT/summary_by_config.md")" -eq 7 ] || fail "summary_by_config.md: want 7 configurations"

# Analysis: the facts the fixtures were built with. Backends compare within
# one machine and device; the two machines only in their own section.
A=$OUT/analysis.txt
expect_in "$A" "allreduce: shm is 4.2x faster than tcp at 100 MiB with 2 processes on cpubox, cpu (10.00 ms vs 42.00 ms)."
# tcp's 6 us and shm's 8 us at 1 KiB: their min-p99 ranges overlap.
expect_in "$A" "allreduce: tcp and shm are within noise at 1 KiB with 4 processes on cpubox, cpu (6.0 us vs 8.0 us; their min-p99 ranges overlap)."
expect_in "$A" "allreduce with 4 processes on cpubox, cpu: the fastest backend changes with size: no clear winner (within noise) at 1 KiB, shm from 64 KiB to 100 MiB."
expect_in "$A" "allgather with 2 processes on cpubox, cpu: shm is the fastest backend at every size compared (1 MiB to 100 MiB)."
expect_in "$A" "Across machines (different hardware, not a like-for-like comparison"
expect_in "$A" "allreduce at 1 MiB with 2 processes: nccl on gpubox (cuda, unknown buffers) vs shm on cpubox (cpu, unknown buffers): 4.0x faster (50.0 us vs 200.0 us)."
if grep -E "nccl is .* than|than nccl" "$A" | grep -v "Across" >/dev/null; then
    fail "analysis.txt compares nccl (gpubox) with a cpubox backend outside the machines section: $(grep -E 'nccl is .* than|than nccl' "$A")"
fi
expect_in "$A" "allreduce shm on cpubox, cpu, 2 processes: bus bandwidth saturates at about 9.87 GB/s from 16 MiB on (peak 10.5 GB/s at 100 MiB)."
expect_in "$A" "allreduce tcp on cpubox, cpu, 2 processes: bus bandwidth is still rising at the largest size"
expect_in "$A" "allreduce shm on cpubox, cpu, 2 processes: latency 5.0 us at the smallest size (1 KiB); with a peak algorithm bandwidth of 10.5 GB/s the latency/bandwidth crossover is near 51.2 KiB"
expect_in "$A" "allgather shm on cpubox, cpu, 2 processes: time at the smallest size measured (1 MiB) is 150.0 us; no size of 64 KiB or less was measured"
expect_in "$A" "allreduce shm on cpubox, cpu at 100 MiB: 2 and 4 processes take 10.00 ms and 16.00 ms (1.6x the time for 2.0x the processes"
expect_in "$A" "WRONG RESULTS: allreduce tcp, 4 processes, 64 KiB (float32 sum, unknown buffers, host cpubox): 3 wrong elements."
expect_in "$A" "noisy: allreduce tcp, 2 processes, 1 MiB (float32 sum, unknown buffers, host cpubox): p99 2.40 ms is 5.0x the p50 480.0 us."
expect_in "$A" "mlp (ddp, tcp, 4 processes, batch 64, bucket 25 MB, compress none): step 75.00 ms = compute 30.00 ms + exposed communication 45.00 ms (60% of the step)"
expect_in "$A" "mlp with 4 processes: shm trains 1.7x faster than tcp"
expect_in "$A" "memory of mlp, batch 64: peak RSS 100 MiB"

# Plots: valid PNGs of at least the documented size, and their SVGs.
if have_plots "$WORK/first_err"; then
    for p in time_vs_size busbw_vs_size time_vs_size_allgather busbw_vs_size_allgather \
             backend_comparison_100MiB scaling_vs_procs training_breakdown; do
        size=$("$PNG_INFO" "$OUT/$p.png") || { fail "$p.png is not a PNG"; continue; }
        # at least the documented size; small multiples and bar rows grow with their panels
        [ "${size% *}" -ge 1000 ] && [ "${size#* }" -ge 650 ] || fail "$p.png is $size, want 1000 650 or more"
        grep -q "<svg" "$OUT/$p.svg" 2>/dev/null || fail "$p.svg missing or not SVG"
        expect_in "$OUT/index.html" "<code>$p.png</code>"
    done
    n=$(grep -o 'src="data:image/png;base64,' "$OUT/index.html" | wc -l)
    [ "$n" -eq 7 ] || fail "index.html inlines $n PNGs, want 7"
else
    expect_in "$OUT/index.html" "Plots skipped"
fi
# Self-contained: no external resource.
if grep -Eq '(src|href)="(https?:|//)' "$OUT/index.html"; then fail "index.html refers to the network"; fi
expect_in "$OUT/index.html" "<td>allreduce</td><td>shm</td>"
expect_in "$OUT/index.html" "shm is 4.2x faster than tcp at 100 MiB with 2 processes"

# Deterministic: the same files give the same bytes, in any order.
run_report 0 "$FIX/gpu_and_train.json" "$FIX/comm_cpu.csv" -o "$WORK/again"
diff -r "$OUT" "$WORK/again" >"$WORK/diff" || fail "a second report differs: $(head -5 "$WORK/diff")"

# An existing directory is refused without --force and left alone; --force
# writes the report and keeps the other files there.
rm "$OUT/analysis.txt"
echo keep >"$OUT/keep.txt"
run_report 2 "$FIX/comm_cpu.csv" -o "$OUT"
grep -q "already exists" "$WORK/err" || fail "no 'already exists' message: $(cat "$WORK/err")"
[ ! -e "$OUT/analysis.txt" ] || fail "the existing directory was written without --force"
run_report 0 "$FIX/comm_cpu.csv" -o "$OUT" --force
[ -s "$OUT/analysis.txt" ] || fail "--force did not write analysis.txt"
[ -f "$OUT/keep.txt" ] || fail "--force removed a file that is not the report's"

finish
