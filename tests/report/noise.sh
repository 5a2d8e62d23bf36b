# One machine, one process count, both buffer kinds: a difference is claimed
# only beyond the p25-p75 spread, coll buffers are compared only with malloc
# buffers of the same backend (their own finding), a time at 1 MiB is not
# called a latency, and the comparison plot is named after its size.
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/buffers_noise.csv" -o "$OUT"
A=$OUT/analysis.txt

# 1 MiB: the p25-p75 ranges are apart. 10 MiB: shm 1.0-1.6 ms and auto 1.2-1.9 ms overlap.
expect_in "$A" "allreduce: shm is 2.0x faster than auto at 1 MiB with 2 processes, malloc buffers (100.0 us vs 200.0 us); shm is 4.0x faster than mpi (400.0 us)."
expect_in "$A" "allreduce: shm and auto are within noise at 10 MiB with 2 processes, malloc buffers (1.10 ms vs 1.54 ms; their p25-p75 ranges overlap); shm is 3.6x faster than mpi (4.00 ms)."
if grep -q "shm is 1.4x faster than auto" "$A"; then fail "analysis.txt reports noise as a finding: $(grep '1.4x' "$A")"; fi

# coll buffers: their own finding against malloc shm, never against mpi's
# private memory (30 us vs 400 us would be 13x).
expect_in "$A" "coll buffers vs malloc buffers on shm: 3.3x faster (allreduce at 1 MiB with 2 processes: 30.0 us vs 100.0 us)."
expect_in "$A" "coll buffers vs malloc buffers on shm: 3.7x faster (allreduce at 10 MiB with 2 processes: 300.0 us vs 1.10 ms)."
if grep -Eq "1[0-9]x faster than mpi" "$A"; then fail "analysis.txt compares coll buffers with mpi: $(grep -E '1[0-9]x faster than mpi' "$A")"; fi

expect_in "$A" "allreduce shm, malloc buffers, 2 processes: time at the smallest size measured (1 MiB) is 100.0 us; no size of 64 KiB or less was measured"
if grep -q "latency [0-9.]* [um]s at the smallest size (1 MiB)" "$A"; then fail "analysis.txt calls a 1 MiB time a latency"; fi

expect_in "$OUT/summary_by_config.md" "| allreduce | box | cpu | coll | shm | 2 | 1 | 1 MiB - 10 MiB (2) | 30.0 us | 300.0 us |"
expect_in "$OUT/full_results.md" "| allreduce | shm | auto | cpu | coll | 2 | 1 | float32 | sum | 0 | 10 MiB | 10485760 | 300.000 | 261.000 | 290.000 | 300.000 | 310.000 |"

if have_plots "$WORK/err"; then
    [ -s "$OUT/backend_comparison_10MiB.png" ] || fail "backend_comparison_10MiB.png missing: $(ls "$OUT")"
    [ ! -e "$OUT/backend_comparison_100MB.png" ] || fail "backend_comparison_100MB.png written for a 10 MiB comparison"
    expect_in "$OUT/index.html" "<code>backend_comparison_10MiB.png</code>"
fi
finish
