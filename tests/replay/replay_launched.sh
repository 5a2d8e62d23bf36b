#!/bin/sh
# collbench replay under another launcher (torchrun's environment, set by
# hand: RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT):
# every rank reads every rank's trace, rank 0 alone prints the tables and
# writes the CSV and --calls (every rank's), every backend asked runs in
# turn. Then what must stop every rank alike, exit 2, no rank left waiting:
# a launch of another world than the trace's, an output rank 0 cannot write.
. "$(dirname "$0")/../cli/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../pick_port.sh"

# launch NAME NPROCS ARGS...: NPROCS ranks of `collbench replay ARGS`; rank r's
# output in $WORK/NAME.out.r / .err.r, its exit code in .rc.r.
launch() {
    name=$1 n=$2
    shift 2
    mkdir -p "$WORK/tmp"
    launch_ranks "$name" "$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$(pick_port)" TMPDIR="$WORK/tmp" \
        -- timeout 60 "$BIN" replay "$@"
}

launch ok 2 "$HERE/two_ranks" --backend tcp,shm --csv "$WORK/r.csv" --calls "$WORK/calls.csv"
for r in 0 1; do
    [ "$(cat "$WORK/ok.rc.$r")" = 0 ] || fail "rank $r exited $(cat "$WORK/ok.rc.$r"): $(cat "$WORK/ok.err.$r")"
done
[ "$(grep -c '^# replay of' "$WORK/ok.out.0")" = 2 ] ||
    fail "rank 0: want a table per backend: $(cat "$WORK/ok.out.0")"
grep -q '^# replay' "$WORK/ok.out.1" && fail "rank 1 printed a table: $(cat "$WORK/ok.out.1")"
for b in tcp shm; do
    rows=$(awk -F, -v b=$b 'NR > 1 && $2 == b && $4 == 2 && $7 == "all" && $8 == "all"' "$WORK/r.csv" | wc -l)
    [ "$rows" = 1 ] || fail "CSV: $rows summary rows of $b at 2 ranks, want 1: $(cat "$WORK/r.csv")"
done
# --calls: every rank's calls (18 each), gathered by rank 0
for b in tcp shm; do
    for r in 0 1; do
        n=$(grep -c "^$b,1,$r," "$WORK/calls.csv")
        [ "$n" = 18 ] || fail "--calls: $n rows of rank $r on $b, want 18: $(cat "$WORK/calls.csv")"
    done
done
[ -z "$(ls "$WORK/tmp")" ] || fail "rank 0's private directory left behind: $(ls "$WORK/tmp")"

launch world 3 "$HERE/two_ranks" --backend tcp
for r in 0 1 2; do
    [ "$(cat "$WORK/world.rc.$r")" = 2 ] || fail "3 ranks on a 2-rank trace: rank $r exited $(cat "$WORK/world.rc.$r")"
    grep -q "rank $r: the launcher started 3 ranks, the trace's world is 2" "$WORK/world.err.$r" ||
        fail "rank $r does not say why: $(cat "$WORK/world.err.$r")"
done

launch csv 2 "$HERE/two_ranks" --backend tcp --csv "$WORK/no/such/dir/r.csv"
for r in 0 1; do
    [ "$(cat "$WORK/csv.rc.$r")" = 2 ] || fail "an unwritable --csv: rank $r exited $(cat "$WORK/csv.rc.$r")"
done
grep -q "cannot write in $WORK/no/such/dir" "$WORK/csv.err.0" ||
    fail "rank 0 does not name the output: $(cat "$WORK/csv.err.0")"
grep -q '^# replay' "$WORK/csv.out.0" && fail "an unwritable --csv: something ran"
finish
