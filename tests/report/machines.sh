# Results of two machines: each machine's series stands alone (a backend of
# both appears twice, sizes of one never extend the other's line), backends
# are compared within a machine, and machines only in the section that says
# they differ in hardware, without cpubox's coll-buffer run (its own finding).
. "$(dirname "$0")/lib.sh"

OUT=$WORK/report
run_report 0 "$FIX/two_machines.csv" -o "$OUT"
S=$OUT/summary_by_config.md
A=$OUT/analysis.txt

# shm ran on both: two rows, each with its own sizes.
expect_in "$S" "| allreduce | cpubox | cpu | malloc | shm | 2 | 1 | 1 KiB - 1 MiB (3) | 5.0 us |"
expect_in "$S" "| allreduce | boxb | cpu | malloc | shm | 2 | 1 | 1 MiB - 16 MiB (2) | 100.0 us |"
[ "$(grep -c '^| allreduce |' "$S")" -eq 4 ] || fail "summary_by_config.md: want 4 series (malloc shm twice, tcp, coll shm)"

# tcp ran on cpubox only: shm is compared with it on cpubox (200 us), never
# with boxb's shm (100 us).
expect_in "$A" "allreduce: shm is 2.4x faster than tcp at 1 MiB with 2 processes on cpubox, malloc buffers (200.0 us vs 480.0 us)."
if grep -q "100.0 us vs 480.0 us" "$A"; then fail "analysis.txt compares boxb's shm with cpubox's tcp"; fi
expect_in "$A" "Across machines (different hardware, not a like-for-like comparison"
expect_in "$A" "allreduce at 1 MiB with 2 processes: shm on boxb (cpu, malloc buffers) vs shm on cpubox (cpu, malloc buffers): 2.0x faster (100.0 us vs 200.0 us)."
if grep -q "coll buffers) vs\|vs shm on cpubox (cpu, coll" "$A"; then fail "analysis.txt sets coll buffers against another machine"; fi
expect_in "$A" "coll buffers vs malloc buffers on shm: 10x faster (allreduce at 1 MiB with 2 processes on cpubox: 20.0 us vs 200.0 us)."
# boxb's line starts at its own smallest size.
expect_in "$A" "allreduce shm on boxb, malloc buffers, 2 processes: time at the smallest size measured (1 MiB) is 100.0 us"
expect_in "$A" "allreduce shm on cpubox, malloc buffers, 2 processes: latency 5.0 us at the smallest size (1 KiB)"

if have_plots "$WORK/err"; then
    expect_in "$OUT/index.html" "a panel per machine and process count"
    # The comparison at 1 MiB: the only size two backends of one machine share.
    [ -s "$OUT/backend_comparison_1MiB.png" ] || fail "backend_comparison_1MiB.png missing: $(ls "$OUT")"
fi
finish
