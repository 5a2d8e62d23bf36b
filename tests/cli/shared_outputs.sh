#!/bin/sh
# Result files that several runs write at once, and paths no result may go to:
# three runs started together into one -J, one --csv and one --per-iter keep
# every row of every run (one CSV header, valid JSON); --per-iter refuses a
# file of another schema; no result file is written through a symbolic link
# or into a FIFO (which would block before any rank starts); a new --csv that
# nothing whole could be written to is not left behind empty.
. "$(dirname "$0")/lib.sh"

S=$(seq -s, 4 4 80) # 20 sizes x 2 placements = 40 rows a run
J="$WORK/same.json" C="$WORK/same.csv" I="$WORK/iters.csv"
pids=""
for i in 1 2 3; do
    "$BIN" allreduce -P 2 --backend tcp -n 1 -w 0 --sizes "$S" -q -J "$J" --csv "$C" \
        --per-iter "$I" 2>"$WORK/err.$i" &
    pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "a concurrent run failed: $(cat "$WORK"/err.*)"; done
rows=$(jq '[.results.communication[] | length] | add' "$J" 2>&1)
[ "$rows" = 120 ] || fail "-J: $rows rows, want 120 (3 runs x 40)"
[ "$(tail -n +2 "$C" | wc -l)" -eq 120 ] || fail "--csv: $(tail -n +2 "$C" | wc -l) rows, want 120"
[ "$(grep -cxF "$(head -n 1 "$C")" "$C")" -eq 1 ] || fail "--csv: the header is not there once"
[ "$(grep -c '^collective,' "$I")" -eq 1 ] || fail "--per-iter: the header is not there once"
# 3 runs x 2 ranks x 40 rows x 1 iteration
[ "$(tail -n +2 "$I" | wc -l)" -eq 240 ] || fail "--per-iter: $(tail -n +2 "$I" | wc -l) rows, want 240"

# --per-iter on a file of another schema (a slip for --csv): refused, untouched
before=$(cksum <"$C")
expect_exit 2 "same.csv has a different header" allreduce -P 2 --backend tcp --sizes 4 -n 1 -w 0 -q --per-iter "$C"
[ "$(cksum <"$C")" = "$before" ] || fail "--per-iter changed a file of another schema"

# a symbolic link, for each of the three
echo "not yours" >"$WORK/target"
ln -s "$WORK/target" "$WORK/link"
for flag in --csv -J --per-iter; do
    expect_exit 2 "is a symbolic link; refusing" allreduce -P 2 --backend tcp --sizes 4 -n 1 -w 0 -q $flag "$WORK/link"
done
[ "$(cat "$WORK/target")" = "not yours" ] || fail "a write went through the link"

# a FIFO: refused at once, for each of the three (-T would not stop a blocked open)
mkfifo "$WORK/fifo"
for flag in --csv -J --per-iter; do
    expect_exit 2 "not a regular file (a FIFO)" allreduce -P 2 --backend tcp --sizes 4 -n 1 -w 0 -q $flag "$WORK/fifo"
done

# a new --csv on a full disk: no empty file left (root and a tmpfs; else skipped)
if mkdir "$WORK/full" && mount -t tmpfs -o size=8k tmpfs "$WORK/full" 2>/dev/null; then
    head -c 8192 /dev/zero >"$WORK/full/filler" 2>/dev/null
    "$BIN" allreduce -P 2 --backend tcp --sizes "$S" -n 1 -w 0 -q --csv "$WORK/full/new.csv" 2>/dev/null
    [ -e "$WORK/full/new.csv" ] && fail "a new --csv left behind on a full disk ($(wc -c <"$WORK/full/new.csv") bytes)"
    umount "$WORK/full"
else
    echo "note: no tmpfs here (needs root): the full-disk case is not checked"
fi
finish
