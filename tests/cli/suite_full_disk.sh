#!/bin/sh
# Durable results on a full disk: results written to a tiny tmpfs, the disk
# filled, then another run: a clear error naming the file and the errno, exit 3,
# the earlier CSV rows byte for byte as they were, followed only by whole rows
# (the file's last page had room for a few), the JSON file unchanged, no
# temporary left; with room again, rows are appended after the earlier ones. Needs root to mount a tmpfs;
# skipped (77) where mounting is not allowed.
. "$(dirname "$0")/lib.sh"

MNT="$WORK/mnt"
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=1m tmpfs "$MNT" 2>/dev/null; then
    # Without a tmpfs, at least the refusal of a device (results go to regular
    # files only), before any rank starts: exit 2
    expect_exit 2 "/dev/full: not a regular file (a device)" \
        allreduce --sizes 1K -P 2 -w 1 -n 2 --backend tcp -q --csv /dev/full
    [ "$FAILED" -eq 0 ] || exit 1
    echo "SKIP: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN); /dev/full's refusal checked only"
    exit 77
fi
trap 'umount "$MNT" 2>/dev/null; rm -rf "$WORK"' EXIT

# 64 sizes x 2 placements: more rows than the slack of the CSV's last page.
RUN="allreduce -b 1K -e 64K -i 1K -P 2 -w 1 -n 2 --backend tcp -q --csv $MNT/r.csv -J $MNT/r.json"
expect_exit 0 "" $RUN
cp "$MNT/r.csv" "$WORK/r.csv.before"
cp "$MNT/r.json" "$WORK/r.json.before"
rows=$(wc -l <"$WORK/r.csv.before")
[ "$rows" -eq 129 ] || fail "first run: expected header + 128 rows, got $rows lines"

# Fill the disk to the last block.
dd if=/dev/zero of="$MNT/filler" bs=4096 2>/dev/null
[ "$(df -P "$MNT" | awk 'NR == 2 { print $4 }')" -eq 0 ] || fail "the tmpfs is not full: $(df -P "$MNT")"

expect_exit 3 "r.csv: No space left on device; earlier rows kept" $RUN
head -n 129 "$MNT/r.csv" | cmp -s - "$WORK/r.csv.before" || fail "the earlier CSV rows changed on a full disk"
awk -F, 'NR > 1 && (NF != 27 || !/,[0-9]+$/) { bad = 1 } END { exit bad }' "$MNT/r.csv" \
    || fail "a cut row in the CSV after the full disk: $(tail -n 2 "$MNT/r.csv")"
cmp -s "$MNT/r.json" "$WORK/r.json.before" || fail "the JSON changed on a full disk"
leftovers=$(ls "$MNT" | grep -v -e '^r\.csv$' -e '^r\.json$' -e '^filler$')
[ -z "$leftovers" ] || fail "files left behind on the full disk: $leftovers"

# Room again: the next run appends after the earlier rows.
rm -f "$MNT/filler"
full=$(wc -l <"$MNT/r.csv")
expect_exit 0 "" $RUN
rows=$(wc -l <"$MNT/r.csv")
[ "$rows" -eq $((full + 128)) ] || fail "after freeing space: expected $full + 128 lines, got $rows"
head -n 129 "$MNT/r.csv" | cmp -s - "$WORK/r.csv.before" || fail "the earlier rows changed after freeing space"
command -v jq >/dev/null || fail "jq is needed to check the JSON output (scripts/deps.sh installs it)"
n=$(jq '.results.communication.allreduce | length' "$MNT/r.json") || fail "JSON does not parse"
[ "$n" -eq 256 ] || fail "JSON: expected 256 rows (the full disk's run lost), got $n"
finish
