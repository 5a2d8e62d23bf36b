#!/bin/sh
# Result files (issue 27, item 5). Every output path (--csv, -J, --per-iter;
# train's --csv and -J; init's --csv) is checked before any rank starts: exit 2
# naming the path and the problem, nothing measured, nothing created, an
# existing file untouched. A run that fails after launch leaves no empty or
# header-only file, and the rows already in a CSV stay as they were.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../have_train.sh"

RUN="allreduce --sizes 1K -P 2 -n 2 -w 1 -T 60 --backend tcp"

# refused PATTERN ARGS...: exit 2 naming PATTERN, and no rank printed its table.
refused() {
    expect_exit 2 "$@"
    if grep -q "collective\|^ *[0-9]" "$WORK/out"; then
        fail "collbench ${*}: ranks ran before the refusal: $(cat "$WORK/out")"
    fi
}

# -J: an existing file that is not JSON (left as it was), a missing directory,
# a directory, a JSON file whose results section is of another type.
echo "my notes, not JSON" >"$WORK/notes.txt"
cp "$WORK/notes.txt" "$WORK/notes.orig"
refused "\-J: $WORK/notes.txt exists but is not valid JSON" $RUN -J "$WORK/notes.txt"
cmp -s "$WORK/notes.txt" "$WORK/notes.orig" || fail "-J changed the file it refused"
refused "\-J: $WORK/no/such/r.json: directory $WORK/no/such: No such file" $RUN -J "$WORK/no/such/r.json"
refused "\-J: $WORK: is a directory" $RUN -J "$WORK"
echo '{"results": {"communication": []}}' >"$WORK/other.json"
refused "\-J: $WORK/other.json: existing \"results.communication\" is not an object" \
    $RUN -J "$WORK/other.json"
# --csv and --per-iter: a directory, a missing directory.
refused "\-\-csv: $WORK: is a directory" $RUN --csv "$WORK"
refused "\-\-csv: $WORK/no/r.csv: directory $WORK/no: No such file" $RUN --csv "$WORK/no/r.csv"
refused "\-\-per-iter: $WORK/no/i.csv: directory $WORK/no" $RUN --per-iter "$WORK/no/i.csv"
refused "\-\-per-iter: $WORK: is a directory" $RUN --per-iter "$WORK"
[ -e "$WORK/no" ] && fail "a refused path's directory was created"

# A run that fails after launch (shm refuses --algo ring in the ranks) creates
# none of its files, and leaves a CSV that already has rows byte for byte.
FAILING="allreduce --sizes 1K -P 2 -n 2 -w 1 -T 60 --backend shm --algo ring"
expect_exit 2 "algorithm 'ring'" $FAILING --csv "$WORK/f.csv" -J "$WORK/f.json" --per-iter "$WORK/fi.csv"
for f in f.csv f.json fi.csv; do
    [ -e "$WORK/$f" ] && fail "a failed run left $f: $(head -c 300 "$WORK/$f")"
done
expect_exit 0 "" $RUN --csv "$WORK/kept.csv" -q
cp "$WORK/kept.csv" "$WORK/kept.orig"
expect_exit 2 "algorithm 'ring'" $FAILING --csv "$WORK/kept.csv"
cmp -s "$WORK/kept.csv" "$WORK/kept.orig" || fail "a failed run changed a CSV that had rows"

# init: its --csv checked up front, nothing left by a failed sweep.
refused "\-\-csv: $WORK/no/init.csv: directory $WORK/no" init -P 2 --backend tcp --csv "$WORK/no/init.csv"
refused "\-\-csv: $WORK: is a directory" init -P 2 --backend tcp --csv "$WORK"
COLL_SHM_CHUNK_BYTES=12x expect_exit 2 "COLL_SHM_CHUNK_BYTES" \
    init -P 2 --backend shm --steps 1 --count 8 -T 60 --csv "$WORK/init.csv"
[ -e "$WORK/init.csv" ] && fail "a failed init left its --csv: '$(cat "$WORK/init.csv")'"

# train (needs OpenBLAS): --csv and -J checked up front, no header-only CSV.
TRAIN="train --mode single -P 1 --hidden 8 --input 8 --batch-sizes 1 --steps 1 --warmup 0 --compute-steps 1"
if have_train "$BIN"; then
    refused "\-J: $WORK/notes.txt exists but is not valid JSON" $TRAIN -J "$WORK/notes.txt"
    cmp -s "$WORK/notes.txt" "$WORK/notes.orig" || fail "train -J changed the file it refused"
    refused "\-\-csv: $WORK/no/t.csv: directory $WORK/no" $TRAIN --csv "$WORK/no/t.csv"
    refused "\-J: $WORK: is a directory" $TRAIN -J "$WORK"
    COLL_SHM_CHUNK_BYTES=12x expect_exit 2 "COLL_SHM_CHUNK_BYTES" train --mode ddp -P 2 --backend shm \
        --hidden 8 --input 8 --batch-sizes 2 --steps 1 --warmup 0 --compute-steps 1 -T 60 \
        --csv "$WORK/t.csv" -J "$WORK/t.json"
    [ -e "$WORK/t.csv" ] && fail "a failed train left its --csv: '$(cat "$WORK/t.csv")'"
    expect_exit 0 "" $TRAIN --csv "$WORK/t.csv" -J "$WORK/t.json"
    [ "$(wc -l <"$WORK/t.csv")" -eq 2 ] || fail "train --csv: want header + 1 row: $(cat "$WORK/t.csv")"
else
    echo "note: collbench train unavailable (no OpenBLAS): its cases skipped"
fi
finish
