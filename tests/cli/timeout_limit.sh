#!/bin/sh
# -T bounds every wait a rank can enter, so every command takes one rule for
# it: more than 0 and at most a day (86400 s, BENCH_MAX_TIMEOUT_S); a larger
# one (a typo: 1e9) exits 2 naming -T and the limit before any rank starts.
# Under `timeout`: a build that accepts it runs the command instead.
. "$(dirname "$0")/lib.sh"

for cmd in "allreduce -P 2 --sizes 1K -n 1 --backend tcp" "broadcast -P 2 --sizes 1K -n 1 --backend tcp" \
    "check -P 2 --backend tcp" "init -P 2 --backend tcp" "train -P 2 --backend tcp --steps 1" \
    "straggler -P 2 --iters 1" "replay $WORK/no.trace"; do
    # shellcheck disable=SC2086 # $cmd is a word list
    timeout 60 "$BIN" $cmd -T 1e9 >"$WORK/out" 2>"$WORK/err"
    got=$?
    if [ "$got" -ne 2 ] || ! grep -q -e "-T: '1e9' must be in (0, 86400]" "$WORK/err"; then
        fail "$cmd -T 1e9: exit $got, want 2 naming -T and 86400: $(cat "$WORK/err")"
    fi
    # shellcheck disable=SC2086
    "$BIN" $cmd -T 86400 --help >/dev/null 2>"$WORK/err" ||
        fail "$cmd -T 86400 --help: refused: $(cat "$WORK/err")"
done
finish
