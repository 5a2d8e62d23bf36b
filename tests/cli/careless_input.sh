#!/bin/sh
# Careless input gets a whole, clear answer: a long argument is cut in its
# middle, never before the reason; -P above what the open-file limit allows is
# refused before anything runs, naming the limit; a rank's message is one line
# with one "rank N:" prefix; the Makefile's torch target breaks no pipe.
. "$(dirname "$0")/lib.sh"
SRC=$(cd "$(dirname "$0")/../.." && pwd)

LONG=$(printf '%0600d' 9)
expect_exit 2 "' is too long$" allreduce --sizes "$LONG"
expect_exit 2 "': too long$" allreduce -b "${LONG}K"
expect_exit 2 "is not an algorithm" allreduce --algo "$LONG"
expect_exit 2 "' is too long$" allreduce -d "$LONG"

# 256 open files allow (256 - 64) / 2 = 96 ranks: -P 2,200 runs nothing.
(ulimit -n 256 && exec "$BIN" allreduce -P 2,200 --backend tcp --sizes 1K -n 2 -w 0 -c 0 -T 5) \
    >"$WORK/out" 2>"$WORK/err"
got=$?
[ "$got" -eq 2 ] || fail "-P 2,200 under ulimit -n 256: exit $got, want 2: $(cat "$WORK/err")"
grep -q "at most 96 ranks.*ulimit -n" "$WORK/err" || fail "-P 2,200: limit not named: $(cat "$WORK/err")"
grep -q "^ *[0-9]" "$WORK/out" && fail "-P 2,200: ran the 2-rank configuration before refusing"

# Rank 0 cannot allocate 2 x 1 TiB (skipped where overcommit would let it try);
# --force-memory: past the launcher's memory check (cli/memory_check.sh) to the rank's own.
if [ "$(cat /proc/sys/vm/overcommit_memory 2>/dev/null)" != 1 ]; then
    # (under ASan and TSan, whose allocators abort on a request this size unless told to fail it)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1" \
    TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}allocator_may_return_null=1" \
        "$BIN" allreduce -P 2 --backend tcp --sizes 1T -n 1 -w 0 -c 0 -T 10 --force-memory >"$WORK/out" 2>"$WORK/err"
    grep -q "rank 0: rank 0:" "$WORK/err" && fail "doubled prefix: $(cat "$WORK/err")"
    grep -q "^collbench: rank 0: cannot allocate" "$WORK/err" || fail "no allocation error: $(cat "$WORK/err")"
fi

# A size that gives a rank less than one element is refused before any rank
# starts (was: a 0-byte row, exit 0), naming the size, the ranks and the dtype;
# one that does not split into whole elements is measured rounded down, and the
# table says what was asked (was: 1K silently became 1020).
expect_exit 2 "8 bytes is less than one float32 (4 bytes) for each of 3 ranks" \
    reducescatter -P 3 --backend tcp --sizes 8 -n 1 -w 0
expect_exit 2 "16 bytes is less than one float64 (8 bytes) for each of 4 ranks" \
    alltoall -P 2,4 --backend tcp --sizes 16 -d float64 -n 1 -w 0
grep -q "^ *[0-9]" "$WORK/out" && fail "alltoall -P 2,4 --sizes 16: ran -P 2 before refusing"
# ranks started by another launcher learn the world only there: the same refusal
RANK=0 WORLD_SIZE=3 LOCAL_RANK=0 LOCAL_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 \
    expect_exit 2 "for each of 3 ranks" reducescatter --sizes 8 --backend tcp -T 2
unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
expect_exit 0 "" reducescatter -P 3 --backend tcp --sizes 1K -n 1 -w 0 -c 0 --csv "$WORK/rs.csv"
grep -q "^# 1K asked: 1020 bytes measured (reducescatter: 85 float32 for each of 3 ranks" "$WORK/out" ||
    fail "reducescatter -P 3 --sizes 1K: no note of the rounding: $(cat "$WORK/out")"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["bytes"] != 1020 { bad = 1 } END { exit bad || NR < 2 }' \
    "$WORK/rs.csv" || fail "reducescatter -P 3 --sizes 1K: rows are not of the 1020 bytes measured: $(cat "$WORK/rs.csv")"

# One rule for every list (a LIST flag of any command, --predict's keys): an
# empty item or one given twice is refused, exit 2, naming the flag and the item
# (was: -P 2,2 and --backend shm,shm ran twice, --backend shm,,tcp was accepted,
# --predict hosts=64,hosts=2 kept the last).
expect_exit 2 "^collbench allreduce: -P: '2' is given twice in '2,2'$" allreduce -P 2,2 --backend tcp
expect_exit 2 "^collbench allreduce: --sizes: '1K' is given twice" allreduce --sizes 1K,1K --backend tcp
expect_exit 2 "^collbench allreduce: --sizes: '1K' and '1024' are the same" allreduce --sizes 1K,1024
expect_exit 2 "^collbench allreduce: --backend: 'shm' is given twice" allreduce --backend shm,shm
expect_exit 2 "^collbench allreduce: --backend: item 2 of 'shm,,tcp' is empty$" allreduce --backend shm,,tcp
expect_exit 2 "^collbench allreduce: -P: item 2 of '2,,3' is empty$" allreduce -P 2,,3
expect_exit 2 "^collbench allreduce: -d: 'float32' is given twice" allreduce -d float32,float32
expect_exit 2 "^collbench train: --mode: 'ddp' is given twice" train --mode ddp,ddp
expect_exit 2 "^collbench train: --batch-sizes: item 2 of '32,' is empty" train --batch-sizes 32,
expect_exit 2 "^collbench init: -P: '2' is given twice" init -P 2,2
expect_exit 2 "^collbench check: --backend: 'tcp' is given twice" check --backend tcp,tcp
expect_exit 2 "^collbench model: --predict: hosts= is given twice in 'hosts=64,hosts=2'" \
    model "$WORK/none.csv" --predict hosts=64,hosts=2
expect_exit 2 "^collbench model: --predict: item 2 of 'hosts=2,' is empty" model "$WORK/none.csv" --predict hosts=2,
# a sequence is not a set: two hidden layers of one width are two layers
"$BIN" train --hidden 64,64 --help >/dev/null 2>"$WORK/err" || fail "train --hidden 64,64 refused: $(cat "$WORK/err")"

# make torch with a cmake whose help output outlasts a pipe: no "Broken pipe".
mkdir -p "$WORK/bin"
cat >"$WORK/bin/cmake" <<'FAKE'
#!/bin/bash
trap '' PIPE # as cmake: a broken pipe is a write error it prints
case "$*" in
*"--target help"*) echo "... collbench_torch"; for i in $(seq 20000); do echo "... target_$i"; done ;;
*) echo "built torch" ;;
esac
FAKE
chmod +x "$WORK/bin/cmake"
PATH="$WORK/bin:$PATH" make -s -C "$SRC" -o build torch BUILD="$WORK/b" >"$WORK/out" 2>"$WORK/err"
grep -q "Broken pipe\|write error" "$WORK/err" && fail "make torch: $(cat "$WORK/err")"
grep -q "built torch" "$WORK/out" || fail "make torch did not build the target: $(cat "$WORK/out" "$WORK/err")"
finish
