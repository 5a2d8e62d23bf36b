#!/bin/sh
# collbench and mpirun: collbench launching its ranks through mpirun (--backend mpi),
# mpirun launching collbench ranks (mpi and tcp, no MASTER_ADDR; collbench
# replay's), mpirun missing.
#   cli_mpi.sh path/to/collbench [mpirun]
. "$(dirname "$0")/../cli/lib.sh"
MPIRUN=${2:-mpirun}
unset MASTER_ADDR MASTER_PORT
[ "$(id -u)" -eq 0 ] && ROOT_FLAG=--allow-run-as-root || ROOT_FLAG=

# csv_rows FILE BACKEND NPROCS: rows of that backend and process count, all with wrong == 0
csv_rows() {
    awk -F, -v b="$2" -v n="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["backend"] == b && $col["nprocs"] == n { rows++; if ($col["wrong"] != "0") bad++ }
        END { if (bad) print -1; else print rows + 0 }' "$1"
}

# 1. collbench --backend mpi -P 2,4: mpirun started by collbench; rank 0's rows come
#    back to the launcher, which writes the CSV (2 sizes x 2 placements per count).
expect_exit 0 "" allreduce --backend mpi -P 2,4 --sizes 1K,64K -w 1 -n 3 --csv "$WORK/mpi.csv"
for n in 2 4; do
    got=$(csv_rows "$WORK/mpi.csv" mpi $n)
    [ "$got" = 4 ] || fail "--backend mpi -P $n: expected 4 CSV rows with wrong 0, got $got: $(cat "$WORK/mpi.csv")"
done
grep -q "Avg bus bandwidth" "$WORK/out" || fail "no table from rank 0 through mpirun: $(cat "$WORK/out")"

# 2. six ranks on this machine's cores, and another collective
expect_exit 0 "" reducescatter --backend mpi -P 6 --sizes 6K -w 1 -n 2 --csv "$WORK/rs.csv"
[ "$(csv_rows "$WORK/rs.csv" mpi 6)" = 2 ] || fail "reducescatter -P 6: $(cat "$WORK/rs.csv")"

# 3. a wrong result under mpirun still exits 1
COLLBENCH_TEST_CORRUPT=1 expect_exit 1 "wrong results" allreduce --backend mpi -P 2 --sizes 1K -w 1 -n 2

# 4. COLLBENCH_MPIRUN_ARGS reach mpirun: a flag it does not know fails the run
COLLBENCH_MPIRUN_ARGS="--no-such-mpirun-flag" expect_exit 3 "mpirun exited with 1 before any result" \
    allreduce --backend mpi -P 2 --sizes 1K -w 1 -n 2
COLLBENCH_MPIRUN_ARGS="--mca btl tcp,self" expect_exit 0 "" allreduce --backend mpi -P 2 --sizes 1K -w 1 -n 2

# 5. mpirun missing: exit 4, saying what to install
COLLBENCH_MPIRUN=/nonexistent/mpirun expect_exit 4 "COLLBENCH_MPIRUN=/nonexistent/mpirun" \
    allreduce --backend mpi -P 2 --sizes 1K
PATH=/nonexistent "$BIN" allreduce --backend mpi -P 2 --sizes 1K >"$WORK/out" 2>"$WORK/err"
code=$?
[ "$code" -eq 4 ] && grep -q "mpirun not found in PATH: install openmpi-bin" "$WORK/err" \
    || fail "no mpirun in PATH: exit $code, want 4 naming openmpi-bin: $(cat "$WORK/err")"

# 6. mpirun starts the ranks: tcp meets through MPI (no MASTER_ADDR), mpi runs as is;
#    rank 0 writes the CSV itself
for b in tcp mpi; do
    "$MPIRUN" -np 3 --oversubscribe $ROOT_FLAG "$BIN" allreduce --backend $b --sizes 1K,1M -w 1 -n 2 \
        --csv "$WORK/under_$b.csv" >"$WORK/out" 2>"$WORK/err" \
        || fail "mpirun -np 3 collbench allreduce --backend $b: exit $?: $(cat "$WORK/err")"
    got=$(csv_rows "$WORK/under_$b.csv" $b 3)
    [ "$got" = 4 ] || fail "mpirun --backend $b: expected 4 CSV rows with wrong 0, got $got"
done

# 6b. mpirun starts collbench replay's ranks: every rank reads the trace, they
#     meet through MPI, rank 0 prints and writes the CSV
"$MPIRUN" -np 2 --oversubscribe $ROOT_FLAG "$BIN" replay "$(dirname "$0")/../replay/two_ranks" \
    --backend tcp --csv "$WORK/replay.csv" >"$WORK/out" 2>"$WORK/err" \
    || fail "mpirun -np 2 collbench replay: exit $?: $(cat "$WORK/err")"
got=$(awk -F, 'NR > 1 && $2 == "tcp" && $4 == 2 && $7 == "all" && $8 == "all"' "$WORK/replay.csv" | wc -l)
[ "$got" = 1 ] || fail "mpirun collbench replay: $got summary rows, want 1: $(cat "$WORK/replay.csv")"
[ "$(grep -c '^# replay of' "$WORK/out")" = 1 ] || fail "mpirun collbench replay: want one table: $(cat "$WORK/out")"

# 7. a rank hangs inside a collective: MPI cannot cancel the peer's call, so its
#    watchdog ends the job after -T, naming the call; no rank is left behind
start=$(date +%s)
COLL_FAULT=1:collective:hang expect_exit 3 ") #1 did not complete within 2 s" \
    allreduce --backend mpi -P 2 --sizes 1K -w 1 -n 2 -T 2
took=$(( $(date +%s) - start ))
[ "$took" -le 20 ] || fail "hung rank under mpi: the job took ${took} s with -T 2"
grep -q "COLL_FAULT: pid .*: hang at collective" "$WORK/err" || fail "the fault did not fire: $(cat "$WORK/err")"
sleep 1
left=$(pgrep -f "collbench allreduce --backend mpi -P 2 --sizes 1K -w 1 -n 2 -T 2" || true)
[ -z "$left" ] || fail "ranks left after the mpi watchdog fired: $left"
finish
