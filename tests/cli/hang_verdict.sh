#!/bin/sh
# A rank that hangs and ends only on the launcher's SIGTERM is the one the
# launcher's verdict names, from the other ranks' blame marks (launcher.h):
# rank 2 of 4 hangs mid all-reduce (COLL_FAULT collective:hang) on every
# backend of the build among tcp, shm, auto and gloo, all at once; with
# HANG_CASES="collective rendezvous straggler" (the long tier) also at
# rendezvous, and rank 1 of `straggler --inject` sleeping past -T. Each run
# must exit 3 with a last line naming the hung rank, within -T + the 3 s
# grace + SLACK_S.
. "$(dirname "$0")/lib.sh"

T=2
GRACE_S=3
SLACK_S=${SLACK_S:-3}
CASES=${HANG_CASES:-collective}

backends=""
for b in tcp shm auto gloo; do
    "$BIN" info 2>/dev/null | grep -q "backend $b *available" && backends="$backends $b"
done
case "$backends" in *tcp*) ;; *) backends="tcp$backends" ;; esac # tcp is always built

# run NAME WANT_RANK COMMAND...: in the background; checked by check NAME WANT_RANK.
run() {
    name=$1
    shift 2
    (
        start=$(date +%s%N)
        "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
        echo $? >"$WORK/$name.rc"
        echo $((($(date +%s%N) - start) / 1000000)) >"$WORK/$name.ms"
    ) &
}

check() {
    rc=$(cat "$WORK/$1.rc")
    last=$(tail -n 1 "$WORK/$1.err")
    took=$(cat "$WORK/$1.ms")
    if [ "$rc" -ne 3 ] || ! printf '%s\n' "$last" | grep -q "failed: rank $2 hung"; then
        fail "$1: exit $rc, last line '$last', want 'rank $2 hung'; stderr: $(cat "$WORK/$1.err")"
    elif [ "$took" -gt $(((T + GRACE_S + SLACK_S) * 1000)) ]; then
        fail "$1: took $took ms, more than -T $T + grace $GRACE_S + $SLACK_S s"
    fi
}

for b in $backends; do
    for c in $CASES; do
        case $c in
        collective)
            run "$b-$c" 2 env COLL_FAULT=2:collective:hang:64K \
                "$BIN" allreduce -P 4 --backend "$b" --sizes 1M -n 5 -T $T ;;
        rendezvous)
            run "$b-$c" 2 env COLL_FAULT=2:rendezvous:hang \
                "$BIN" allreduce -P 4 --backend "$b" --sizes 1K -T $T ;;
        straggler)
            run "$b-$c" 1 "$BIN" straggler -P 4 --backend "$b" --iters 3 --inject 1:60000 -T $T ;;
        esac
    done
done
wait
for b in $backends; do
    for c in $CASES; do
        case $c in straggler) check "$b-$c" 1 ;; *) check "$b-$c" 2 ;; esac
    done
done
finish
