#!/bin/sh
# A rank that exits 0 while the others still run a collective is the one the
# launcher's verdict names, on tcp and shm, mid-run and at start-up, and the
# launcher stops the others at once (the rank wrote no done mark); the
# survivors' exit 3 never is named. $2: the exit0_preload shim.
. "$(dirname "$0")/lib.sh"
SHIM=${2:?usage: $0 path/to/collbench path/to/exit0_preload.so}

# -T 20: the launcher must not wait for it; a rank leaving at start-up (before
# the rendezvous ends) used to hold the others for the whole -T.
for case in "tcp 2 700" "shm 1 700" "tcp 3 1"; do
    set -- $case
    t0=$(date +%s)
    EXIT0_RANK=$2 EXIT0_AFTER_MS=$3 LD_PRELOAD="$SHIM" timeout 60 "$BIN" allreduce -P 4 --backend "$1" \
        --sizes 1M -n 1000000 -w 0 -c 0 -T 20 --time-budget 5 >/dev/null 2>"$WORK/err"
    rc=$?
    took=$(($(date +%s) - t0))
    last=$(tail -n 1 "$WORK/err")
    want="rank $2 exited with code 0 before the others finished"
    [ "$rc" -eq 3 ] && printf '%s\n' "$last" | grep -q "$want" ||
        fail "$1, rank $2 leaving after $3 ms: exit $rc, last line '$last', want '$want'"
    [ "$took" -lt 15 ] || fail "$1, rank $2 leaving after $3 ms: the launcher took $took s (-T 20): it waited"
done
finish
