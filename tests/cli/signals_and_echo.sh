#!/bin/sh
# A hang-up (the terminal closed) is forwarded to the ranks and named, like an
# interrupt: exit 129 with "interrupted by signal 1 (Hangup)". An unknown
# command is echoed cut in the middle with its control bytes escaped, so a
# 10,000-character or ESC-laden argument cannot flood or drive the terminal.
. "$(dirname "$0")/lib.sh"

"$BIN" allreduce -P 2 --backend tcp --sizes 1M -n 1000000 -w 0 -c 0 --time-budget 30 \
    >"$WORK/out" 2>"$WORK/err" &
launcher=$!
for try in $(seq 500); do # the benchmark runs once rank 0 printed the table's header
    grep -q "^#" "$WORK/out" && break
    sleep 0.02
done
kill -HUP $launcher
wait $launcher
rc=$?
[ "$rc" -eq 129 ] || fail "SIGHUP: exit $rc, want 129"
grep -q "interrupted by signal 1 (Hangup), forwarded to the ranks" "$WORK/err" ||
    fail "SIGHUP: no message naming it: $(cat "$WORK/err")"

long=$(head -c 10000 /dev/zero | tr '\0' x)
expect_exit 2 "unknown command 'x\{40\}\.\.\.x\{20\}' (see collbench help)" "$long"
[ "$(wc -c <"$WORK/err")" -lt 200 ] || fail "a 10,000-character command echoed in $(wc -c <"$WORK/err") bytes"
esc=$(printf 'bad\033[2Jcmd')
expect_exit 2 'unknown command .bad\\x1b\[2Jcmd.' "$esc"
grep -q "$(printf '\033')" "$WORK/err" && fail "an ESC byte reached stderr raw"
finish
