#!/bin/sh
# shm's probe of the window a core per rank has (shm_core_probe.h):
# with COLL_SHM_CORE_PROBE=2 a 2-rank run says once what it measured (three
# ways timed, two verdicts) and its results check; the probe does not run when
# turned off, when the window's end is given, or when one rank has a fault
# still to fire (its bytes would count towards it), and ranks that disagree
# on that still plan alike (the run finishes and checks). The verdict itself
# is the machine's: not asserted.
set -u
BIN=${1:?usage: $0 path/to/collbench}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-coreprobe.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
if [ "$(nproc)" -lt 2 ]; then
    echo "SKIP: the probe needs a core per rank; this process has $(nproc) CPU" >&2
    exit 77
fi

# run NAME EXPECTED_PROBE_LINES [VAR=VALUE...]
run() {
    name=$1 want=$2
    shift 2
    env "$@" timeout 60 "$BIN" allreduce -P 2 --backend shm --sizes 64K,1M --inplace 2 -n 3 -w 1 \
        -T 20 >"$WORK/out" 2>"$WORK/err"
    rc=$?
    got=$(grep -c "core probe" "$WORK/err")
    if [ "$rc" -ne 0 ] || [ "$(grep -c 'Out of bounds values : 0 OK' "$WORK/out")" -ne 1 ]; then
        echo "FAIL: $name: exit $rc: $(tail -3 "$WORK/err")" >&2
        FAILED=1
    elif [ "$got" -ne "$want" ]; then
        echo "FAIL: $name: $got probe lines, expected $want: $(cat "$WORK/err")" >&2
        FAILED=1
    fi
}

run "probe" 1 COLL_SHM_CORE_PROBE=2
N="[0-9.]*[1-9][0-9.]*"
if ! grep -Eq "private engine $N us, CMA slices $N us, staging $N us: the window a core per rank has is (open|shut); 4 KiB pages (stage outside it|take CMA slices)$" "$WORK/err"; then
    echo "FAIL: probe: the line does not give the three times and both verdicts: $(cat "$WORK/err")" >&2
    FAILED=1
fi
run "probe off" 0 COLL_SHM_CORE_PROBE=0
run "window given" 0 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_MAX=2M
# the slices' bound given: the probe runs, and leaves it as given
run "slices given" 1 COLL_SHM_CORE_PROBE=2 COLL_SHM_CMA_ALLREDUCE_MIN=64K
grep -q "4 KiB pages take CMA slices$" "$WORK/err" ||
    { echo "FAIL: slices given: the probe moved them: $(cat "$WORK/err")" >&2; FAILED=1; }
# rank 1's fault never fires (a million store requests): it alone would not probe
run "fault pending on rank 1" 0 COLL_SHM_CORE_PROBE=2 COLL_FAULT=1:store:delay:1000000
[ "$FAILED" -eq 0 ] && echo "PASS"
exit "$FAILED"
