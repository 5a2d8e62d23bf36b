#!/bin/sh
# Exit codes and messages for help, version and bad usage (nothing is launched).
. "$(dirname "$0")/lib.sh"

expect_exit 0 "" --help
grep -q allreduce "$WORK/out" || fail "--help does not list allreduce"
expect_exit 0 "" help allgather
grep -q -e "--minbytes" "$WORK/out" || fail "help allgather does not show the options"
expect_exit 0 "" --version
grep -q "^collbench " "$WORK/out" || fail "--version prints no version"

expect_exit 2 "frobnicate" frobnicate
expect_exit 2 "frobnicate" help frobnicate
expect_exit 2 "\-\-bogus" allreduce --bogus
expect_exit 2 "\-P" allreduce -P 0
expect_exit 2 "\-P" allreduce -P 2,x
expect_exit 2 "\-b" allreduce -b 1Q
expect_exit 2 "\-e" allreduce -b 1K -e 2KX
expect_exit 2 "\-b" allreduce -b 1M -e 1K
expect_exit 2 "\-n" allreduce -n 0
expect_exit 2 "\-n" allreduce -n
expect_exit 2 "\-w" allreduce -w -1
expect_exit 2 "\-o" allreduce -d int8 -o avg
expect_exit 2 "\-d" allreduce -d float8
expect_exit 2 "\-\-algo" allreduce --algo nonsense
expect_exit 2 "\-\-inplace" allreduce --inplace 5
expect_exit 2 "\-\-sizes" allreduce --sizes 6 -d float32
expect_exit 2 "\-r" broadcast -r 3 -P 2,3 --sizes 1K
expect_exit 2 "unexpected" allreduce extra-argument
expect_exit 2 "\-\-csv" allreduce --sizes 1K -P 2 --csv "$WORK/no-such-dir/r.csv"
echo "not,our,header" >"$WORK/other.csv"
expect_exit 2 "\-\-csv" allreduce --sizes 1K -P 2 --csv "$WORK/other.csv"
finish
