#!/bin/sh
# A rank whose store address leads to something other than this build's store
# (store_stub.py, on loopback): it must stop at once with a message saying
# what it found, having sent nothing derived from the job after the handshake.
#   impostor: a listener that speaks the current handshake but cannot prove
#             the job token (rank 0 gone, its port taken by someone else)
#   old:      the store of a build before wire version 3
# Exit 77 without python3.
BIN=${1:?usage: $0 path/to/collbench}
HERE=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing (it plays the stub)"; exit 77; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/collbench-stub.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILED=0
fail() {
    echo "FAIL: $*" >&2
    FAILED=1
}

# check MODE WANT STUB-ARGS...: rank 1 of 2 against the stub.
check() {
    mode=$1 want=$2
    shift 2
    rm -f "$WORK/port" "$WORK/stub.log"
    python3 "$HERE/store_stub.py" "$mode" "$@" "$WORK/port" "$WORK/stub.log" &
    stub=$!
    i=0
    while [ ! -s "$WORK/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$WORK/port" ] || { fail "$mode: the stub did not start"; kill $stub; return; }
    start=$(date +%s)
    env -u TORCHELASTIC_USE_AGENT_STORE -u COLL_STORE_PORT -u COLL_STORE_FD RANK=1 WORLD_SIZE=2 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT="$(cat "$WORK/port")" COLL_JOB_TOKEN=0123456789abcdef \
        "$BIN" allreduce --backend tcp --sizes 4K -w 1 -n 1 -T 30 >"$WORK/out" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    wait $stub
    [ $rc -ne 0 ] || fail "$mode: the rank exited 0"
    grep -q "$want" "$WORK/out" || fail "$mode: no '$want' in: $(cat "$WORK/out")"
    # "at once": far from the 30 s a rank waiting for a store would take
    [ "$took" -lt 10 ] || fail "$mode: took $took s"
    grep -q "after=0" "$WORK/stub.log" ||
        fail "$mode: the rank sent requests past the handshake: $(cat "$WORK/stub.log")"
    echo "$mode: exit $rc in ${took}s: $(grep -o "$want" "$WORK/out" | head -n 1)"
}

check impostor "did not prove it holds the job token" 3
check old "speaks collbench wire version 2, this build speaks 3: run the same collbench build"
[ $FAILED -eq 0 ] && echo PASS
exit $FAILED
