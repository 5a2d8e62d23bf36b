#!/bin/sh
# collbench check and collbench info.
. "$(dirname "$0")/lib.sh"

# check: tcp passes every step, nccl is unavailable with a reason.
"$BIN" check -P 2 >"$WORK/check" 2>"$WORK/check.err"
rc=$?
[ "$rc" -eq 0 ] || fail "check -P 2: exit $rc, want 0: $(cat "$WORK/check" "$WORK/check.err")"
for step in init barrier allreduce broadcast teardown; do
    grep -q "^PASS  tcp $step (" "$WORK/check" || fail "check -P 2: no PASS for tcp $step: $(cat "$WORK/check")"
done
grep -q "^FAIL" "$WORK/check" && fail "check -P 2: a step failed: $(cat "$WORK/check")"
grep -q "^UNAVAILABLE  nccl: ..*" "$WORK/check" || fail "check -P 2: nccl not UNAVAILABLE with a reason: $(cat "$WORK/check")"

# three ranks: the known sums depend on the world size
"$BIN" check -P 3 --backend tcp >"$WORK/check3" 2>&1 || fail "check -P 3 --backend tcp: exit $?: $(cat "$WORK/check3")"
[ "$(grep -c '^PASS  tcp' "$WORK/check3")" -eq 5 ] || fail "check -P 3: want 5 PASS lines: $(cat "$WORK/check3")"

# a backend asked for that is unavailable: exit 4
"$BIN" check --backend nccl >"$WORK/out" 2>"$WORK/err"
rc=$?
[ "$rc" -eq 4 ] || fail "check --backend nccl: exit $rc, want 4"
grep -q "^UNAVAILABLE  nccl: ." "$WORK/out" || fail "check --backend nccl: no UNAVAILABLE line: $(cat "$WORK/out")"

# info: names the CPU and the backends
"$BIN" info >"$WORK/info" 2>"$WORK/info.err" || fail "info: exit $?: $(cat "$WORK/info.err")"
cpu=$(grep -m1 -E '^(model name|Processor)' /proc/cpuinfo | sed 's/^[^:]*: *//')
[ -z "$cpu" ] || grep -qF "$cpu" "$WORK/info" || fail "info does not name the CPU '$cpu': $(cat "$WORK/info")"
for b in tcp nccl; do
    grep -q "backend $b" "$WORK/info" || fail "info does not name backend $b"
done
grep -q "backend nccl  *unavailable: ." "$WORK/info" || fail "info: nccl without a reason: $(cat "$WORK/info")"

# info: which address tcp and auto would listen on, and why, as the ranks pick it
listen_line() { env -u COLL_LISTEN_ADDR -u COLL_SOCKET_IFNAME "$@" "$BIN" info | grep "listen tcp, auto"; }
line=$(listen_line RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2)
echo "$line" | grep -q "127.0.0.1 on lo (every rank is on this host)" || fail "info, one host: $line"
line=$(listen_line COLL_LISTEN_ADDR=10.1.2.3)
echo "$line" | grep -q "10.1.2.3 .*(COLL_LISTEN_ADDR is set)" || fail "info, COLL_LISTEN_ADDR: $line"
line=$(listen_line RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 COLL_SOCKET_IFNAME=nosuchif0)
echo "$line" | grep -q "none: COLL_SOCKET_IFNAME=nosuchif0 matches no interface" || fail "info, bad COLL_SOCKET_IFNAME: $line"
line=$(listen_line RANK=1 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1)
echo "$line" | grep -q "127.0.0.1 on lo (the store host 127.0.0.1 is loopback)" || fail "info, loopback master: $line"

# info --json parses and has the keys machines look for
if "$BIN" info --json >"$WORK/info.json" 2>"$WORK/json.err"; then
    jq -e '(.cpu.model | type == "string") and (.cpu.logical_cores >= 1)
           and (.memory.total_bytes > 0) and (.backends | length >= 1)
           and ([.backends[] | select(.name == "tcp" and .available)] | length == 1)
           and ([.backends[] | select(.name == "nccl" and (.available | not) and (.reason | length > 0))] | length == 1)' \
        "$WORK/info.json" >/dev/null || fail "info --json lacks cpu/memory/backends: $(cat "$WORK/info.json")"
else
    rc=$?
    # a build without jansson must say so with exit 4
    [ "$rc" -eq 4 ] && grep -q jansson "$WORK/json.err" || fail "info --json: exit $rc: $(cat "$WORK/json.err")"
fi

# bad input: exit 2 naming the flag
expect_exit 2 "\-\-frobnicate" check --frobnicate
expect_exit 2 "\-\-frobnicate" info --frobnicate
expect_exit 2 "\-P" check -P 0
expect_exit 2 "pigeon" check --backend pigeon
finish
