#!/bin/sh
# An mpi run cut short leaves nothing behind (issue 27): when the launcher is
# killed outright, mpirun and its ranks end too (they got SIGTERM through
# PR_SET_PDEATHSIG instead of running on), and Open MPI's shared-memory
# backing files live in a directory of the launcher's own under /dev/shm,
# removed when mpirun is done or, for a launcher killed outright, by the next
# mpi launch. Ctrl-C leaves nothing either, and says so as other backends do.
#   interrupted.sh path/to/collbench
. "$(dirname "$0")/../cli/lib.sh"
unset MASTER_ADDR MASTER_PORT OMPI_MCA_btl_vader_backing_directory OMPI_MCA_btl_sm_backing_directory
[ -d /dev/shm ] || { echo "SKIP: no /dev/shm"; exit 77; }
SEED=$((40000 + $$ % 20000)) # marks this test's ranks in ps

# long_run: a run that would last minutes, in the background; its pid in $run.
long_run() {
    "$BIN" allreduce --backend mpi -P 2 --sizes 4M -n 1000000 -w 1 -T 30 --seed "$SEED" \
        >"$WORK/long.out" 2>&1 &
    run=$!
    i=0 # until its ranks are up
    while [ "$(pgrep -f -- "--seed $SEED" | wc -l)" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 1
}

# ranks_gone: true once no process of this test's runs is left (10 s at most).
ranks_gone() {
    i=0
    while pgrep -f -- "--seed $SEED" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    ! pgrep -f -- "--seed $SEED" >/dev/null
}

long_run
killed=$run
ls -d /dev/shm/collbench-mpi.$run.* >/dev/null 2>&1 ||
    fail "no directory of the launcher's own in /dev/shm: $(ls /dev/shm); the run said: $(tail -5 "$WORK/long.out")"
kill -9 "$run"
wait "$run" 2>/dev/null
ranks_gone || { fail "mpirun or ranks still run after the launcher was killed: $(pgrep -fa -- "--seed $SEED")"
                pkill -9 -f -- "--seed $SEED"; }
# The next mpi launch sweeps the dead launcher's directory.
expect_exit 0 "" allreduce --backend mpi -P 2 --sizes 4K -n 2 -w 1 -q
ls -d /dev/shm/collbench-mpi.$run.* >/dev/null 2>&1 &&
    fail "the killed launcher's directory is still there: $(ls /dev/shm)"

long_run
kill -INT "$run"
wait "$run"
got=$?
ranks_gone || fail "ranks still run after Ctrl-C: $(pgrep -fa -- "--seed $SEED")"
# The verdict reads as on every other backend (it was exit 130 and no line).
[ "$got" -eq 130 ] || fail "Ctrl-C: exit $got, want 130"
grep -q "mpi 2 ranks failed: interrupted by signal 2 (Interrupt), forwarded to the ranks" \
    "$WORK/long.out" || fail "Ctrl-C: no 'interrupted' line: $(cat "$WORK/long.out")"

# Only this test's launchers are looked at: ctest runs other mpi tests beside
# this one, and their directories come and go meanwhile.
left=$(ls -d /dev/shm/collbench-mpi.$killed.* /dev/shm/collbench-mpi.$run.* 2>/dev/null | tr '\n' ' ')
[ -z "$left" ] || fail "left in /dev/shm: $left"
finish
