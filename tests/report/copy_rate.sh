# Bus bandwidth against this machine's memory-copy rate: with a rate recorded
# in results.json ("machines"), the findings give each backend's best bus
# bandwidth (correct host-buffer rows) and its ratio to the rate; without one
# (an older file, a CSV), no such sentence.
. "$(dirname "$0")/lib.sh"

WANT="On box, allreduce: shm reaches 3.5 GB/s bus bandwidth at 1 MiB (coll buffers, 2 processes), 0.70x this machine's single-thread memory-copy rate (5 GB/s); tcp reaches 0.95 GB/s bus bandwidth at 256 MiB (malloc buffers, 2 processes), 0.19x."

run_report 0 "$FIX/findings_copy_rate.json" -o "$WORK/with"
expect_in "$WORK/with/analysis.txt" "$WANT"
expect_in "$WORK/with/index.html" "$WANT"

# the same file as one from before the rate was recorded: no sentence, no error
sed 's/"machines"/"older_key"/' "$FIX/findings_copy_rate.json" >"$WORK/without.json"
run_report 0 "$WORK/without.json" -o "$WORK/without"
grep -F "memory-copy rate" "$WORK/without/analysis.txt" "$WORK/without/index.html" &&
    fail "a memory-copy sentence without a recorded rate"
expect_in "$WORK/without/analysis.txt" "Findings"
finish
