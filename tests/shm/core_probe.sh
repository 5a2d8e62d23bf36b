#!/bin/sh
# shm's probes of the ways a core per rank has (shm_core_probe.h): with
# COLL_SHM_CORE_PROBE=2 a 2-rank run at 64 KiB and 4 MiB says once per band
# what it measured (the window: private engine against CMA slices; from its
# end: staging against them) and its results check; no probe runs when
# turned off, when the window's end is given, or when one rank has a fault
# still to fire (its bytes would count towards it), and ranks that disagree
# on that still plan alike (the run finishes and checks); a slices' bound
# given leaves the band above unprobed; COLL_SHM_PROBE_EVERY_S has them run
# again. The verdicts are the machine's: not asserted.
set -u
BIN=${1:?usage: $0 path/to/collbench}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-coreprobe.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
if [ "$(nproc)" -lt 2 ]; then
    echo "SKIP: the probes need a core per rank; this process has $(nproc) CPU" >&2
    exit 77
fi

# run NAME EXPECTED_PROBE_LINES [VAR=VALUE...]
run() {
    name=$1 want=$2
    shift 2
    env "$@" timeout 60 "$BIN" allreduce -P 2 --backend shm --sizes 64K,4M --inplace 2 -n 3 -w 1 \
        -T 20 >"$WORK/out" 2>"$WORK/err"
    rc=$?
    got=$(grep -c "collbench shm: probe" "$WORK/err")
    if [ "$rc" -ne 0 ] || [ "$(grep -c 'Out of bounds values : 0 OK' "$WORK/out")" -ne 1 ]; then
        echo "FAIL: $name: exit $rc: $(tail -3 "$WORK/err")" >&2
        FAILED=1
    elif [ "$got" -ne "$want" ]; then
        echo "FAIL: $name: $got probe lines, expected $want: $(cat "$WORK/err")" >&2
        FAILED=1
    fi
}
# expect NAME REGEX: the last run's stderr has a line matching it
expect() {
    grep -Eq "$2" "$WORK/err" || { echo "FAIL: $1: no line like '$2': $(cat "$WORK/err")" >&2; FAILED=1; }
}

N="[0-9.]*[1-9][0-9.]* us"
HEAD="collbench shm: probe, all-reduce of"
run "probes" 2 COLL_SHM_CORE_PROBE=2
expect "window" "^$HEAD 512 KiB .*: private engine $N, CMA slices $N: the window a core per rank has is (open|shut)$"
expect "above" "^$HEAD 4096 KiB .*: staging $N, CMA slices $N: (staging|CMA slices) from the window's end$"
run "probe off" 0 COLL_SHM_CORE_PROBE=0
run "window given" 0 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_MAX=2M
run "slices given" 1 COLL_SHM_CORE_PROBE=2 COLL_SHM_CMA_ALLREDUCE_MIN=64K
expect "slices given" "^$HEAD 512 KiB "
# rank 1's fault never fires (a million store requests): it alone would not probe
run "fault pending on rank 1" 0 COLL_SHM_CORE_PROBE=2 COLL_FAULT=1:store:delay:1000000
# asked again: a 2-second soak with COLL_SHM_PROBE_EVERY_S=1 probes each band
# more than once (rank 0's word in its post), and every rank agrees (it checks)
COLL_SHM_CORE_PROBE=2 COLL_SHM_PROBE_EVERY_S=1 timeout 60 "$BIN" allreduce -P 2 --backend shm \
    --sizes 64K,4M --inplace 1 --duration 2s -T 20 >"$WORK/out" 2>"$WORK/err"
rc=$?
again=$(grep -c "collbench shm: probe" "$WORK/err")
if [ "$rc" -ne 0 ] || [ "$again" -lt 3 ] || ! grep -q "Out of bounds values : 0 OK" "$WORK/out"; then
    echo "FAIL: probed again: exit $rc, $again probe lines (want 3 or more): $(tail -3 "$WORK/err")" >&2
    FAILED=1
fi
[ "$FAILED" -eq 0 ] && echo "PASS"
exit "$FAILED"
