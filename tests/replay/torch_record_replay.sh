#!/bin/sh
# Issue 49's chain end to end, tiny (long tier: torch starts several times):
# bench/record_ddp.sh records the DDP program (the 64-128-10 MLP, 2 ranks, 3
# steps) on coll with COLL_TRACE under the host's torch and, where
# scripts/torch_root.sh's root is, under torch 2, with the same program on
# gloo under torch.profiler; then bench/replay_fidelity.sh replays every
# trace once (coll's on shm; the profile imported and replayed on gloo and
# shm; the profile on shm against the program on coll) and each of its rows
# must be there with numbers. No verdict is judged: timing stays out of
# ctest. $2: the build with collbench_torch (record_ddp.sh's BUILD).
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${2:?usage: $0 path/to/collbench BUILD_DIR}
REC=$HERE/../../bench/record_ddp.sh
FID=$HERE/../../bench/replay_fidelity.sh

TINY=1 RANKS=2 STEPS=3 BUILD=$BUILD COLLBENCH=$BIN bash "$REC" "$WORK/coll" "$WORK/prof" \
    >"$WORK/record.log" 2>&1 || fail "record_ddp.sh: exit $?: $(tail -5 "$WORK/record.log")"
set -- "$WORK"/coll/torch*/2ranks
[ -d "$1" ] || { fail "no coll recording: $(tail -5 "$WORK/record.log")"; finish; }
prof=
ls "$WORK"/prof/torch*/2ranks/*.json >/dev/null 2>&1 && prof=$WORK/prof

COLLBENCH=$BIN OUT=$WORK/out PASSES=1 TIMEOUT=120 bash "$FID" "$WORK/coll" ${prof:+"$prof"} \
    >"$WORK/stdout" 2>"$WORK/stderr" || fail "replay_fidelity.sh: exit $?: $(cat "$WORK/stderr")"
T=$WORK/out/fidelity.md
for d in "$WORK"/coll/torch*/2ranks; do
    v=$(basename "$(dirname "$d")")
    # the program's all-reduces as recorded, and as replayed on shm
    grep -Eq "^\| coll on shm: communication \| $v/2ranks \| .* \| [0-9.]*[1-9][0-9.]* \| [0-9.]*[1-9][0-9.]* \| [0-9.]+ \| 15% \| (pass|FAIL) \|$" "$T" ||
        fail "$v: no communication row with times: $(grep "$v" "$T")"
    grep -Eq "^\| coll on shm: one allreduce \(median\) \| $v/2ranks \| " "$T" ||
        fail "$v: no all-reduce median row: $(grep "$v" "$T")"
done
if [ -n "$prof" ]; then
    grep -Eq "^\| gloo profile on gloo: communication \| torch2[^|]*/2ranks \| .* \| [0-9.]*[1-9][0-9.]* \| [0-9.]*[1-9][0-9.]* \| [0-9.]+ \| 20% \| (pass|FAIL) \|$" "$T" ||
        fail "no gloo profile row with times: $(grep 'gloo profile' "$T")"
    grep -Eq "^\| gloo profile on shm vs the program on coll \(coll/torch2[^)]*\) \| " "$T" ||
        fail "no across-backends row: $(grep 'vs the program' "$T")"
else
    echo "no torch 2 root: the profiler half was not recorded ($(grep -i 'torch 2' "$WORK/record.log" | head -1))"
fi
finish
