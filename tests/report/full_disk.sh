# collbench report on a full disk (a small tmpfs; needs root, else skipped 77):
# every output is written to a temporary and renamed, so no empty or cut file
# is left; the error names the file that failed; a report that fails in a
# directory it created removes it, so the rerun is not refused; with --force,
# the earlier report's files stay whole.
. "$(dirname "$0")/lib.sh"

MNT=$WORK/mnt
mkdir -p "$MNT"
if ! mount -t tmpfs -o size=4m tmpfs "$MNT" 2>/dev/null; then
    echo "SKIP: cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN)"
    exit 77
fi
trap 'umount "$MNT" 2>/dev/null; rm -rf "$WORK"' EXIT
IN="$FIX/comm_cpu.csv $FIX/two_machines.csv"

# fill KB: leaves KB kilobytes free on the tmpfs (0: full to the last block).
fill() {
    rm -f "$MNT/filler" "$MNT/room"
    [ "$1" -eq 0 ] || dd if=/dev/zero of="$MNT/room" bs=1024 count="$1" 2>/dev/null
    dd if=/dev/zero of="$MNT/filler" bs=4096 2>/dev/null
    rm -f "$MNT/room"
}

# whole DIR: every PNG ends with its IEND chunk, every SVG with </svg>, nothing empty.
whole() {
    for f in "$1"/*; do
        [ -e "$f" ] || continue
        [ -s "$f" ] || fail "$(basename "$f") is empty"
        case $f in
        *.png) [ "$(tail -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 49454e44ae426082 ] || fail "$(basename "$f") is cut" ;;
        *.svg) tail -c 16 "$f" | grep -q "</svg>" || fail "$(basename "$f") is cut" ;;
        *.tmp.*) fail "temporary left: $(basename "$f")" ;;
        esac
    done
}

# Plots and tables need far more than 64 KB: the report fails part-way.
for free in 0 64; do
    fill $free
    run_report 3 $IN -o "$MNT/rep"
    grep -q "No space left on device" "$WORK/err" || fail "free $free KB: no ENOSPC message: $(cat "$WORK/err")"
    if [ $free -gt 0 ] && have_plots "$WORK/err"; then
        # the tables fit, the first plot does not: the message names it, not index.html
        grep -q "rep/time_vs_size.png: No space left on device" "$WORK/err" ||
            fail "free $free KB: the failed plot is not named: $(cat "$WORK/err")"
    fi
    [ ! -e "$MNT/rep" ] || fail "free $free KB: the failed report left $MNT/rep: $(ls "$MNT/rep")"
    leftovers=$(ls "$MNT" | grep -v '^filler$')
    [ -z "$leftovers" ] || fail "free $free KB: left on the disk: $leftovers"
done

# With room again, the same command works: nothing blocks the rerun.
rm -f "$MNT/filler"
run_report 0 $IN -o "$MNT/rep"
whole "$MNT/rep"
cp -r "$MNT/rep" "$WORK/before"

# --force into the existing report on a full disk: it fails, and what is
# there is the earlier report's files or new ones, each whole.
fill 64
run_report 3 $IN -o "$MNT/rep" --force
whole "$MNT/rep"
[ "$(ls "$MNT/rep" | wc -l)" -eq "$(ls "$WORK/before" | wc -l)" ] || fail "--force on a full disk changed the file list"

# collbench suite's report step (report --force into the results directory):
# the step fails naming the file, the results stay, no plot is cut, and no
# "report:" line points at a page that was not written.
rm -rf "$MNT/rep"
fill 64
timeout 120 "$BIN" suite --quick --no-train --backend tcp -P 2 --sizes 4K -o "$MNT/s" >"$WORK/out" 2>"$WORK/err"
got=$?
[ "$got" -eq 3 ] || fail "suite on a full disk: exit $got, want 3: $(cat "$WORK/out" "$WORK/err")"
grep -Eq "report .*FAILED \(exit 3\): collbench report: .*/s/[a-z_]+\.(png|svg|csv|md|txt|html): No space left on device" "$WORK/out" ||
    fail "suite: the report step's failed file is not named: $(cat "$WORK/out")"
grep -q "^report: " "$WORK/out" && fail "suite names a report it did not write: $(grep '^report: ' "$WORK/out")"
[ -s "$MNT/s/results.csv" ] || fail "suite: results.csv lost"
whole "$MNT/s"
finish
