# Inputs a careless or hostile user may give collbench report: each is refused
# or bounded with a message naming the file and the reason (and the limit),
# within seconds, never read without end, waited on, or echoed raw to the
# terminal; the good file beside it is still reported (exit 1).
. "$(dirname "$0")/lib.sh"

# report WANT_EXIT ARGS...: collbench report under a timeout of $LIMIT s (a
# hang fails the test instead of blocking it); stderr in $WORK/err.
LIMIT=10
report() {
    want=$1
    shift
    rm -rf "$WORK/out"
    timeout "$LIMIT" "$BIN" report "$@" -o "$WORK/out" >/dev/null 2>"$WORK/err"
    got=$?
    [ "$got" -ne 124 ] || { fail "collbench report $*: still running after $LIMIT s"; return; }
    [ "$got" -eq "$want" ] || fail "collbench report $*: exit $got, want $want; stderr: $(head -c 2000 "$WORK/err")"
}
expect_err() { grep -qF -e "$1" "$WORK/err" || fail "no '$1' in: $(head -c 2000 "$WORK/err")"; }
good_rows_kept() {
    [ "$(($(wc -l <"$WORK/out/combined.csv") - 1))" -eq 20 ] || fail "$1: comm_cpu.csv's 20 rows are not all in the report"
}

# Not regular files: devices that never end, a FIFO nobody writes, a directory.
report 1 /dev/zero "$FIX/comm_cpu.csv"
expect_err "/dev/zero: is a character device, not a regular file"
good_rows_kept /dev/zero
report 1 /dev/urandom
expect_err "/dev/urandom: is a character device, not a regular file"
mkfifo "$WORK/fifo"
report 1 "$WORK/fifo" "$FIX/comm_cpu.csv"
expect_err "fifo: is a FIFO or pipe, not a regular file"
good_rows_kept fifo
report 1 "$WORK"
expect_err "is a directory, not a regular file"

# Over the size limit (sparse: costs no disk), refused before it is read.
truncate -s 100M "$WORK/huge.csv"
report 1 "$WORK/huge.csv"
expect_err "huge.csv: is 104857600 bytes, over the limit of 64 MiB; file skipped"

# 50 MB of junk under a good header: a few errors, then their count (and a
# JSON bomb below: more time under the sanitizers).
LIMIT=60
{ head -n 1 "$FIX/comm_cpu.csv"; head -c 37000000 /dev/urandom | base64 -w 96; } >"$WORK/junk.csv"
report 1 "$WORK/junk.csv" "$FIX/comm_cpu.csv"
shown=$(grep -c "junk.csv:[0-9]*: .*row skipped" "$WORK/err")
[ "$shown" -eq 5 ] || fail "junk.csv: $shown errors shown, want 5"
grep -Eq "\.\.\. and [0-9]{6} more bad lines in .*junk.csv" "$WORK/err" || fail "no count of the other bad lines: $(tail -n 3 "$WORK/err")"
[ "$(wc -l <"$WORK/err")" -le 8 ] || fail "junk.csv: $(wc -l <"$WORK/err") lines of messages"
good_rows_kept junk.csv
rm -f "$WORK/junk.csv"

# A line over the line limit, a NUL byte in a line.
{ head -n 1 "$FIX/comm_cpu.csv"; head -c 100000 /dev/zero | tr '\0' x; echo; printf 'a,b\000c\n'; } >"$WORK/lines.csv"
report 1 "$WORK/lines.csv"
expect_err "lines.csv:2: line is 100000 bytes, over the limit of 64 KiB"
expect_err "lines.csv:3: line holds a NUL byte"

# Control bytes in what is echoed: escaped, never sent raw to the terminal.
printf 'evil\033]0;title\007\033[2J,header\n' >"$WORK/ctl.csv"
report 1 "$WORK/ctl.csv"
expect_err "unknown CSV header 'evil\\x1b]0;title\\x07\\x1b[2J,header'"
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$WORK/err"; then fail "a control byte reached stderr"; fi

# JSON that would take many times its size in memory: refused at a budget.
{ printf '{"results":{"x":['; yes '{},' | head -n 15000000; printf '{}]}}'; } >"$WORK/bomb.json"
report 1 "$WORK/bomb.json"
grep -Eq "bomb.json: (parsed, this JSON would take more than 256 MiB of memory|built without jansson)" "$WORK/err" ||
    fail "JSON bomb: $(head -c 2000 "$WORK/err")"

finish
