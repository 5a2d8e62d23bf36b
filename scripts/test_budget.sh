#!/usr/bin/env bash
# The test budget: reads a ctest log (the output of `ctest`, as `make test`
# saves it in build/ctest-fast.log), prints the tests' count, their summed and
# wall time, and the 15 slowest; with BUDGET_S, says whether the wall time is
# within it. Over budget is a warning naming the slowest tests, not a failure:
# timings on a shared machine vary. docs/TESTING.md says where a test belongs.
#
#   scripts/test_budget.sh LOG [BUDGET_S]
set -euo pipefail
log=${1:?usage: test_budget.sh CTEST_LOG [BUDGET_S]}
budget=${2:-}
[ -r "$log" ] || { echo "test_budget.sh: cannot read '$log'" >&2; exit 2; }
case "$budget" in ''|*[!0-9]*) [ -z "$budget" ] || { echo "test_budget.sh: BUDGET_S '$budget' is not a number of seconds" >&2; exit 2; } ;; esac

# "  12/230 Test  #45: shm/collectives_2 ......   Passed    1.23 sec"
times=$(sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec$/\2 \1/p' "$log" | sort -rn)
wall=$(sed -nE 's/^Total Test time \(real\) = +([0-9.]+) sec$/\1/p' "$log" | tail -1)
if [ -z "$times" ]; then
    echo "test budget: no test times in $log"
    exit 0
fi
printf '%s\n' "$times" | awk -v wall="${wall:-?}" '{ n++; s += $1 } END {
    printf "test budget: %d tests, %.0f s of test time, %s s wall\n", n, s, wall }'
echo "the 15 slowest (s):"
printf '%s\n' "$times" | head -15 | awk '{ printf "  %7.1f  %s\n", $1, $2 }'
if [ -n "$budget" ] && [ -n "$wall" ]; then
    if awk -v w="$wall" -v b="$budget" 'BEGIN { exit !(w > b) }'; then
        top=$(printf '%s\n' "$times" | head -5 | awk '{ printf "%s%s (%.0f s)", (NR > 1 ? ", " : ""), $2, $1 }')
        echo "WARNING: over budget: ${wall} s wall against ${budget} s. Make the slowest tests" \
             "cheaper or move them to the long tier (docs/TESTING.md): $top"
    else
        echo "within budget: ${wall} s wall of ${budget} s"
    fi
fi
