# collbench report --baseline: against an earlier run of the same machine,
# the cell 30% slower (shm, beyond its p25-p75 spread) is reported with its
# ratio and fails --fail-on-regression 10 (exit 1, the report still written);
# the cell inside noise (tcp) is not reported; a run of another machine is
# refused (exit 2, nothing written) unless --cross-machine, which says so.
. "$(dirname "$0")/lib.sh"

SLOWER="| allreduce | shm | malloc | 2 | 1 MiB | 100.0 us | 130.0 us | 1.30x | slower 30% |"
run_report 1 "$FIX/baseline_now.csv" --baseline "$FIX/baseline_then.csv" --fail-on-regression 10 -o "$WORK/r1"
A=$WORK/r1/analysis.txt
expect_in "$A" "$SLOWER"
expect_in "$WORK/r1/index.html" "<td>slower 30%</td>"
[ "$(sed -n 2p "$A")" = "Against the baseline: 1 of 2 cells slower beyond noise, 0 faster, the rest within noise; the worst allreduce shm, malloc buffers, 2 processes, 1 MiB, 30% slower." ] ||
    fail "the regression summary does not head the findings: $(sed -n 2p "$A")"
if grep -Eq '^\| allreduce \| tcp \|.*(slower|faster)' "$A"; then fail "the tcp cell inside noise is reported"; fi
expect_in "$WORK/err" "more than --fail-on-regression 10%"

# Under the threshold, and a baseline given as a directory: exit 0.
mkdir "$WORK/then" && cp "$FIX/baseline_then.csv" "$WORK/then/results.csv"
run_report 0 "$FIX/baseline_now.csv" --baseline "$WORK/then" --fail-on-regression 40 -o "$WORK/r2"
expect_in "$WORK/r2/analysis.txt" "$SLOWER"

# Another machine: refused, nothing written; with --cross-machine every line says so.
run_report 2 "$FIX/baseline_now.csv" --baseline "$FIX/baseline_other.csv" -o "$WORK/r3"
expect_in "$WORK/err" "different machines are not compared"
[ ! -e "$WORK/r3" ] || fail "a refused comparison wrote $WORK/r3"
run_report 0 "$FIX/baseline_now.csv" --baseline "$FIX/baseline_other.csv" --cross-machine -o "$WORK/r4"
expect_in "$WORK/r4/analysis.txt" "Against the baseline (cross-machine: this run on box, the baseline on otherbox; not like for like)"
expect_in "$WORK/r4/analysis.txt" "| 1.30x | slower 30% (cross-machine) |"

# Bad usage is named.
run_report 2 "$FIX/baseline_now.csv" --fail-on-regression 10 -o "$WORK/r5"
expect_in "$WORK/err" "need --baseline"
run_report 2 "$FIX/baseline_now.csv" --baseline "$FIX/baseline_then.csv" --fail-on-regression ten -o "$WORK/r6"
expect_in "$WORK/err" "--fail-on-regression 'ten'"
finish
