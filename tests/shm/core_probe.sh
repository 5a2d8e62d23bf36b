#!/bin/sh
# shm's probes of the ways a core per rank has (shm_core_probe.h): with
# COLL_SHM_CORE_PROBE=2 a 2-rank run at 64 KiB and 8 MiB says once per
# question what it measured (huge pages: staging against CMA slices, then
# the private engine against what that chose; the window: private engine
# against them; from its end: staging against them; the slices' lowest band
# on 4 KiB pages: staging against them; the window above, from 8 MiB: the
# private engine against what that band's answer chose)
# and its results check, on 4 KiB and on huge pages; no probe runs when
# turned off or when one rank has a fault still to fire (its bytes would
# count towards it), and ranks that disagree on that still plan alike (the
# run finishes and checks); a knob given leaves its probes out (the
# window's end: the window and the band above; a slices' bound: its bands;
# the window's end on huge pages, the window above's: their probes; a
# window given past the window above's start: that one's too);
# COLL_SHM_PROBE_GIVEN=1 runs them all the same, the values given kept;
# with more ranks than cores, 4 ranks at 1 MiB: the private engine's stores;
# COLL_SHM_PROBE_EVERY_S has them run again. The verdicts are the
# machine's: not asserted.
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
    env "$@" timeout 60 "$BIN" allreduce -P "${NP:-2}" --backend shm --buffers "${BUFS:-malloc}" \
        --sizes "${SIZES:-64K,8M}" --inplace 2 -n 3 -w 1 -T 20 >"$WORK/out" 2>"$WORK/err"
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
HUGE="^$HEAD 1024 KiB a rank in place on huge pages, .*: staging $N, CMA slices $N: "
HUGE="$HUGE(no huge pages here: CMA slices|(staging|CMA slices) where some rank holds huge pages)$"
HUGE_WINDOW="^$HEAD 64 KiB a rank in place on huge pages, .*: private engine $N, (CMA slices|staging) $N: "
HUGE_WINDOW="$HUGE_WINDOW(no huge pages here: no window on them|the window on huge pages is (open|shut))$"
LOW="^$HEAD 64 KiB a rank in place on 4 KiB pages, .*: staging $N, CMA slices $N: "
LOW="$LOW(staging up to twice the slices' bound|CMA slices from their bound)$"
ABOVE_WINDOW="^$HEAD 16384 KiB a rank out of place on 4 KiB pages, .*: private engine $N, (CMA slices|staging) $N: "
ABOVE_WINDOW="$ABOVE_WINDOW""the window above is (open|shut)$"
run "probes" 6 COLL_SHM_CORE_PROBE=2
expect "window" "^$HEAD 512 KiB a rank in place on 4 KiB pages, .*: private engine $N, CMA slices $N: the window a core per rank has is (open|shut)$"
expect "above" "^$HEAD 16384 KiB a rank in place on 4 KiB pages, .*: staging $N, CMA slices $N: (staging|CMA slices) from the window's end$"
expect "huge pages" "$HUGE"
expect "huge pages' window" "$HUGE_WINDOW"
expect "lowest band" "$LOW"
expect "window above" "$ABOVE_WINDOW"
BUFS=thp run "probes, huge pages" 6 COLL_SHM_CORE_PROBE=2
expect "huge pages, thp" "$HUGE"
expect "huge pages' window, thp" "$HUGE_WINDOW"
run "probe off" 0 COLL_SHM_CORE_PROBE=0
run "window given" 4 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_MAX=2M
expect "window given" "$HUGE"
expect "window given, lowest band" "$LOW"
run "slices given" 4 COLL_SHM_CORE_PROBE=2 COLL_SHM_CMA_ALLREDUCE_MIN=64K
expect "slices given" "^$HEAD 512 KiB "
BUFS=thp run "huge pages' bound given" 5 COLL_SHM_CORE_PROBE=2 COLL_SHM_CMA_HUGE_MIN=64K
expect "huge pages' bound given" "^$HEAD 16384 KiB a rank in place "
expect "huge pages' bound given, window" "$HUGE_WINDOW"
BUFS=thp run "huge pages' window given" 5 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_HUGE_MAX=128K
expect "huge pages' window given" "$HUGE"
run "window above given" 5 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_ABOVE_MAX=0
expect "window above given" "$LOW"
# COLL_SHM_PROBE_GIVEN=1: the probes a knob given leaves out run all the same,
# and the value given stands (the verdict is said, not taken)
run "given, probed for their time" 6 COLL_SHM_CORE_PROBE=2 COLL_SHM_PROBE_GIVEN=1 \
    COLL_SHM_PRIV_CORE_MAX=256K
expect "given, probed: the window's" "^$HEAD 512 KiB a rank in place on 4 KiB pages, .*: the window a core per rank has is (open|shut) \(not taken: its knob is given\)$"
expect "given, probed: the others'" "$HUGE"
# a first window given past the second's start covers it: that one is not asked
run "window given past the window above's start" 3 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_CORE_MAX=16M
expect "window given past the window above's start" "$LOW"
# more ranks than cores: the private engine's stores, streamed or cached
if [ "$(nproc)" -lt 4 ]; then
    NP=4 SIZES=64K,1M run "more ranks than cores" 1 COLL_SHM_CORE_PROBE=2
    expect "more ranks than cores" "^$HEAD 1024 KiB a rank in place on 4 KiB pages, .*: private engine streaming $N, private engine $N: the private engine( streams from 1 MiB a rank|'s stores stay cached)$"
    NP=4 SIZES=64K,1M run "more ranks than cores, bound given" 0 COLL_SHM_CORE_PROBE=2 COLL_SHM_PRIV_STREAM_MIN=16M
else
    echo "4 ranks have a core each here ($(nproc) CPUs): the probe with more ranks than cores is not run" >&2
fi
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
