#!/bin/sh
# --algo a backend does not run is refused (exit 2, naming what it has), never
# accepted and recorded under a name that did not run.
. "$(dirname "$0")/lib.sh"

run() { expect_exit "$@" --sizes 1K -P 2 -n 2 -w 1; }

run 2 "allreduce --algo ring: backend shm has no algorithm 'ring' (it has: auto" allreduce --backend shm --algo ring
run 2 "backend shm has no algorithm 'direct'" allreduce --backend shm --algo direct
run 2 "broadcast --algo tree: backend shm has no algorithm 'tree'" broadcast --backend shm --algo tree
# auto on one host runs everything on shm, so the same holds there.
run 2 "backend auto runs every call of one host on shm: backend shm has no algorithm 'rd'" \
    allreduce --backend auto --algo rd

# What a backend has runs and is recorded as asked.
algo_of() { # the algo column of the CSV's first row
    awk -F, 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next } NR==2 { print $col["algo"] }' "$1"
}
run 0 "" allreduce --backend shm --algo auto --csv "$WORK/shm.csv"
[ "$(algo_of "$WORK/shm.csv")" = auto ] || fail "shm --algo auto recorded '$(algo_of "$WORK/shm.csv")'"
run 0 "" allreduce --backend tcp --algo ring --csv "$WORK/tcp.csv"
[ "$(algo_of "$WORK/tcp.csv")" = ring ] || fail "tcp --algo ring recorded '$(algo_of "$WORK/tcp.csv")'"
# With --algo and no --backend, the default sweep keeps the backend that has it.
run 0 "" allreduce --algo ring --csv "$WORK/sweep.csv"
backends=$(awk -F, 'NR==1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { print $col["backend"] }' \
    "$WORK/sweep.csv" | sort -u | tr '\n' ' ')
[ "$backends" = "tcp " ] || fail "default sweep with --algo ring ran on: '$backends'"
finish
