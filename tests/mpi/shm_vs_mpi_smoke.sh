#!/bin/sh
# bench/shm_vs_mpi.sh at its smallest: it runs all three sides, prints one table
# row per size, and fails when a result is wrong. No time is judged.
#   shm_vs_mpi_smoke.sh COLLBENCH SCRIPT
BIN=${1:?usage: $0 collbench bench/shm_vs_mpi.sh}
SCRIPT=${2:?usage: $0 collbench bench/shm_vs_mpi.sh}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shm-vs-mpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
fail() { echo "FAIL: $*" >&2; FAILED=1; }
smoke() { COLLBENCH=$BIN SIZES=8,64K PROCS=2 ITERS=2 WARMUP=1 OUT=$WORK/csv bash "$SCRIPT" >"$WORK/out" 2>&1; }

smoke || fail "exit $?: $(cat "$WORK/out")"
grep -q '^| ranks | bytes | shm malloc | shm coll | mpi (malloc) | shm malloc/mpi | shm malloc/coll | targets |$' "$WORK/out" ||
    fail "no table header: $(cat "$WORK/out")"
for row in '| 2 | 8 B | ' '| 2 | 64 KiB | '; do
    grep -F "$row" "$WORK/out" | grep -qv ' - |' || fail "no complete row '$row': $(cat "$WORK/out")"
done

# A wrong result must fail the run and be named (collbench's test hook).
COLLBENCH_TEST_CORRUPT=1
export COLLBENCH_TEST_CORRUPT
if smoke; then fail "wrong results passed: $(cat "$WORK/out")"; fi
grep -q "WRONG results in: malloc/2/8" "$WORK/out" || fail "wrong results not named: $(cat "$WORK/out")"
[ "$FAILED" -eq 0 ] && echo PASS
exit "$FAILED"
