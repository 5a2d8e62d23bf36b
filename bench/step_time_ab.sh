#!/bin/bash
# What does a change cost in wall time? Two collbench command lines (e.g. a
# suite step as the old binary ran it and as the new one runs it) run
# alternately, A B A B, ROUNDS times each, so that both see the same machine;
# prints each round's seconds, B/A per round and the median ratio, and the
# rows each side wrote (a side that measures less says so).
#
#   A="/tmp/old/collbench allreduce ..." B="build/collbench allreduce ..." bench/step_time_ab.sh
# env: A, B (required), ROUNDS (3), KEEP (a directory: each run's CSV is
# copied there as A.1.csv, B.1.csv, ...). Each command gets --csv FILE appended.
set -u
: "${A:?set A to the first command line}" "${B:?set B to the second command line}"
ROUNDS=${ROUNDS:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/step_ab.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "| round | A (s) | B (s) | B/A |"
echo "|---|---|---|---|"
for r in $(seq "$ROUNDS"); do
    for side in A B; do
        cmd=$A
        [ "$side" = B ] && cmd=$B
        t0=$(date +%s.%N)
        if ! $cmd --csv "$work/$side.$r.csv" >"$work/$side.$r.log" 2>&1; then
            echo "step_time_ab.sh: side $side failed (round $r):" >&2
            tail -5 "$work/$side.$r.log" >&2
            exit 1
        fi
        t1=$(date +%s.%N)
        echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >"$work/$side.$r.s"
    done
    a=$(cat "$work/A.$r.s") b=$(cat "$work/B.$r.s")
    # milliseconds: a quick step (the smoke run's 0.05 s) is not 0.0 s, nor its ratio nan
    echo "$a $b" | awk -v r="$r" '{ printf "| %d | %.3f | %.3f | %.2f |\n", r, $1, $2, $2 / $1 }'
    echo "$a $b" | awk '{ print $2 / $1 }' >>"$work/ratios"
done
sort -g "$work/ratios" | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
    printf "median B/A over %d rounds: %.2f\n", NR, m }'
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp "$work"/*.csv "$KEEP"/
for side in A B; do
    echo "$side: $(tail -q -n +2 "$work"/$side.*.csv | wc -l) rows in $ROUNDS rounds"
done
