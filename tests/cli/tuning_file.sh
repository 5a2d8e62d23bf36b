#!/bin/sh
# The tuning file end to end: `collbench tune --quick` writes one that this
# machine takes (a value added to it is in force, source "file", the
# environment above it); another machine's file is ignored with one warning
# naming the difference, also across a run's ranks; a malformed one is refused
# naming its line (collbench: exit 2; docs/TUNING.md); a missing one is the
# defaults, silently.
. "$(dirname "$0")/lib.sh"

F=$WORK/cfg/collbench/tuning
RUN="allreduce -P 2 --backend shm --sizes 4K -n 2 -w 0 -c 1 -T 20"

# tune writes a file of this machine, into a directory it makes
"$BIN" tune --quick --budget 30 -o "$F" >"$WORK/out" 2>"$WORK/err" ||
    fail "tune --quick: exit $?: $(cat "$WORK/err")"
[ "$(head -1 "$F" 2>/dev/null)" = "# collbench tuning v1" ] || fail "tune wrote no versioned file: $(cat "$F")"
grep -q '^machine.cpu = ' "$F" && grep -q '^machine.kernel = ' "$F" && grep -q '^machine.copy_gbps = ' "$F" ||
    fail "tune's file lacks the machine block: $(cat "$F")"
for knob in COLL_SHM_CMA_ALLREDUCE_MIN COLL_TCP_PAIR_RING_MIN; do
    grep -q "$knob" "$WORK/out" || fail "tune's summary does not name $knob: $(cat "$WORK/out")"
done
grep -q '^wrote ' "$WORK/out" || fail "tune does not say where it wrote: $(cat "$WORK/out")"
ls "$(dirname "$F")" | grep -v '^tuning$' | grep -q . && fail "tune left files beside the tuning file: $(ls "$(dirname "$F")")"

# its file is this machine's: a value in it is in force, from the file
grep -v '^COLL_SHM_CHUNK_BYTES' "$F" >"$WORK/t" && echo "COLL_SHM_CHUNK_BYTES = 1M  # measured: by hand" >>"$WORK/t" &&
    cp "$WORK/t" "$F"
COLL_TUNING_FILE=$F "$BIN" info --tuning >"$WORK/out" 2>"$WORK/err" || fail "info --tuning with tune's file: exit $?"
grep -Eq '^COLL_SHM_CHUNK_BYTES +1M +file ' "$WORK/out" ||
    fail "info --tuning does not show the file's COLL_SHM_CHUNK_BYTES: $(cat "$WORK/out") $(cat "$WORK/err")"
grep -q "tuning file: $F (in force)" "$WORK/out" || fail "info --tuning does not name the file in force"
[ -s "$WORK/err" ] && fail "a file of this machine gave a message: $(cat "$WORK/err")"
COLL_TUNING_FILE=$F COLL_SHM_CHUNK_BYTES=128K "$BIN" info --tuning >"$WORK/out" 2>&1
grep -Eq '^COLL_SHM_CHUNK_BYTES +128K +env ' "$WORK/out" || fail "the environment is not above the file: $(cat "$WORK/out")"
# the default location: $XDG_CONFIG_HOME/collbench/tuning
env -u COLL_TUNING_FILE XDG_CONFIG_HOME="$WORK/cfg" "$BIN" info --tuning >"$WORK/out" 2>&1
grep -Eq '^COLL_SHM_CHUNK_BYTES +1M +file ' "$WORK/out" || fail "\$XDG_CONFIG_HOME/collbench/tuning not read: $(cat "$WORK/out")"

# another machine's: one warning naming the difference, the defaults
sed 's/^machine.cpu = .*/machine.cpu = Some Other CPU 9000/' "$F" >"$WORK/foreign"
COLL_TUNING_FILE=$WORK/foreign "$BIN" info --tuning >"$WORK/out" 2>"$WORK/err" || fail "info with a foreign file: exit $?"
[ "$(grep -c 'another machine' "$WORK/err")" -eq 1 ] && grep -q "Some Other CPU 9000" "$WORK/err" ||
    fail "a foreign file: not one warning naming the CPU: $(cat "$WORK/err")"
grep -Eq '^COLL_SHM_CHUNK_BYTES +256K +default ' "$WORK/out" || fail "a foreign file was applied: $(cat "$WORK/out")"
sed 's/^machine.kernel = .*/machine.kernel = 0.0.1-elsewhere/' "$F" >"$WORK/foreign"
COLL_TUNING_FILE=$WORK/foreign "$BIN" $RUN -q >"$WORK/out" 2>"$WORK/err" || fail "a run with a foreign file: exit $?: $(cat "$WORK/err")"
[ "$(grep -c 'another machine' "$WORK/err")" -eq 1 ] && grep -q "kernel" "$WORK/err" ||
    fail "a 2-rank run with a foreign file: not one warning naming the kernel: $(cat "$WORK/err")"

# malformed: refused whole, the file and line named; collbench exits 2
for bad in "COLL_NO_SUCH_KNOB = 1" "COLL_SHM_CMA = maybe" "a line without an equals sign"; do
    { head -4 "$F"; echo "$bad"; tail -n +5 "$F"; } >"$WORK/bad"
    COLL_TUNING_FILE=$WORK/bad "$BIN" info --tuning >"$WORK/out" 2>"$WORK/err"
    got=$?
    [ "$got" -eq 2 ] || fail "info with '$bad' in the file: exit $got, want 2"
    grep -q "$WORK/bad:5:" "$WORK/err" || fail "'$bad': the file's line 5 not named: $(cat "$WORK/err")"
    grep -Eq '^COLL_SHM_CHUNK_BYTES +1M +file ' "$WORK/out" && fail "'$bad': the file was half-applied"
    COLL_TUNING_FILE=$WORK/bad "$BIN" $RUN -q >"$WORK/out" 2>"$WORK/err"
    got=$?
    [ "$got" -eq 2 ] && grep -q "$WORK/bad:5:" "$WORK/err" ||
        fail "a run with '$bad' in the file: exit $got, want 2 naming line 5: $(cat "$WORK/err")"
done

# suite: one line when there is no file for this machine (suggesting tune),
# one warning for another machine's (not one per step), exit 2 before any step
# for a malformed one
SUITE="suite --quick --no-train --no-report --backend tcp -P 2 --sizes 4K"
COLL_TUNING_FILE=$WORK/none "$BIN" $SUITE -o "$WORK/s1" >"$WORK/out" 2>"$WORK/err" || fail "suite without a file: exit $?: $(cat "$WORK/err")"
[ "$(grep -c 'no tuning file for this machine.*collbench tune' "$WORK/err")" -eq 1 ] ||
    fail "suite without a file: not one line suggesting collbench tune: $(cat "$WORK/err")"
COLL_TUNING_FILE=$WORK/foreign "$BIN" $SUITE -o "$WORK/s2" >"$WORK/out" 2>"$WORK/err" || fail "suite with a foreign file: exit $?"
[ "$(grep -c 'another machine' "$WORK/err")" -eq 1 ] || fail "suite with a foreign file: not one warning: $(cat "$WORK/err")"
COLL_TUNING_FILE=$F "$BIN" $SUITE -o "$WORK/s3" >"$WORK/out" 2>"$WORK/err" || fail "suite with this machine's file: exit $?"
grep -q 'tuning file' "$WORK/err" && fail "suite with this machine's file said something: $(cat "$WORK/err")"
grep -q "tuning file $F in force" "$WORK/s3/suite.log" || fail "suite's log does not name the file in force"
COLL_TUNING_FILE=$WORK/bad "$BIN" $SUITE -o "$WORK/s4" >"$WORK/out" 2>"$WORK/err"
got=$?
[ "$got" -eq 2 ] && grep -q "$WORK/bad:5:" "$WORK/err" || fail "suite with a malformed file: exit $got, want 2 naming line 5: $(cat "$WORK/err")"
[ -e "$WORK/s4" ] && fail "suite with a malformed file made its results directory"

# missing: the defaults, nothing said
COLL_TUNING_FILE=$WORK/none "$BIN" info --tuning >"$WORK/out" 2>"$WORK/err" || fail "info without a file: exit $?"
[ -s "$WORK/err" ] && fail "a missing file gave a message: $(cat "$WORK/err")"
grep -q "none there" "$WORK/out" || fail "info does not say there is no file: $(tail -2 "$WORK/out")"
finish
