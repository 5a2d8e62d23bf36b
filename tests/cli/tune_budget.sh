#!/bin/sh
# collbench tune's full plan (long tier: it measures, half a minute): it ends
# within its budget also on a loaded machine (a run the deadline reaches is
# stopped, its round dropped), and writes a file of this machine that names every
# decision, kept or changed, and libcoll takes it (info --tuning: in force).
. "$(dirname "$0")/lib.sh"

BUDGET=${TUNE_BUDGET:-30}
F=$WORK/tuning
start=$(date +%s)
"$BIN" tune --budget "$BUDGET" -o "$F" >"$WORK/out" 2>"$WORK/err" || fail "tune: exit $?: $(tail -5 "$WORK/err")"
took=$(($(date +%s) - start))
# the budget holds the copy rate; past it only a stopped run's exit and the file
[ "$took" -le $((BUDGET + 4)) ] || fail "tune --budget $BUDGET took $took s"
for knob in COLL_SHM_CMA_ALLREDUCE_MIN COLL_SHM_CMA_HUGE_MIN COLL_SHM_PRIV_CORE_MAX COLL_SHM_PRIV_CORE_HUGE_MAX COLL_SHM_CMA_WHOLE_MAX COLL_SHM_CHUNK_BYTES COLL_SHM_STREAM_MIN \
    COLL_TCP_PAIR_RING_MIN COLL_TCP_ALLREDUCE_RHD_MIN COLL_TCP_ALLREDUCE_RING_MIN; do
    grep -q "$knob" "$F" || fail "the file does not name $knob: $(cat "$F")"
    grep -q "  $knob: default " "$WORK/out" || fail "the summary does not name $knob: $(cat "$WORK/out")"
done
grep -q 'round 1 done' "$WORK/err" || fail "no decision had a round within $BUDGET s: $(cat "$WORK/err")"
COLL_TUNING_FILE=$F "$BIN" info --tuning >"$WORK/info" 2>&1 || fail "info --tuning with tune's file: exit $?"
grep -q "tuning file: $F (in force)" "$WORK/info" || fail "tune's file is not in force: $(tail -3 "$WORK/info")"
finish
